import type { AppStatus } from '../../ipc/app';
import type { SettingsSection } from '../../shell/route';
import { ProvidersSection } from './ProvidersSection';

interface Props {
  section: SettingsSection;
  onSection: (section: SettingsSection) => void;
  status: AppStatus;
}

const SECTIONS: { id: SettingsSection; label: string }[] = [
  { id: 'providers', label: 'Providers' },
  { id: 'about', label: 'About' },
];

export function SettingsPage({ section, onSection, status }: Props) {
  return (
    <section className="settings" aria-labelledby="settings-title" data-testid="settings-page">
      <header className="page__header">
        <h1 id="settings-title">Settings</h1>
      </header>
      <div className="settings__body">
        <nav className="subnav" aria-label="Settings sections">
          {SECTIONS.map((s) => (
            <button
              key={s.id}
              type="button"
              className="subnav__item"
              aria-current={section === s.id ? 'page' : undefined}
              data-testid={`settings-${s.id}`}
              onClick={() => onSection(s.id)}
            >
              {s.label}
            </button>
          ))}
        </nav>
        <div className="settings__content">
          {section === 'providers' ? (
            <ProvidersSection />
          ) : (
            <dl className="about" data-testid="about">
              <dt>Version</dt>
              <dd>{status.version}</dd>
              <dt>Data</dt>
              <dd>
                <code>{status.dataDir}</code>
              </dd>
              <dt>Logs</dt>
              <dd>
                <code>{status.logDir}</code>
              </dd>
            </dl>
          )}
        </div>
      </div>
    </section>
  );
}
