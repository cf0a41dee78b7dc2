import { useI18n } from '../../i18n/I18nProvider';
import { AboutSection } from '../about/AboutSection';
import type { MessageKey } from '../../i18n';
import type { AppStatus } from '../../ipc/bindings';
import type { SettingsSection } from '../../route';
import { GeneralSection } from './GeneralSection';
import { KeychainNotice } from './KeychainNotice';
import { LocalApiSection } from './local-api/LocalApiSection';
import { ProvidersSection } from './providers/ProvidersSection';
import { TeamSection } from './team/TeamSection';

interface Props {
  section: SettingsSection;
  onSection: (section: SettingsSection) => void;
  status: AppStatus;
}

const SECTIONS: { id: SettingsSection; label: MessageKey }[] = [
  { id: 'providers', label: 'settings.providers' },
  { id: 'general', label: 'settings.general' },
  { id: 'localApi', label: 'settings.localApi' },
  { id: 'team', label: 'settings.team' },
  { id: 'about', label: 'settings.about' },
];

export function SettingsPage({ section, onSection, status }: Props) {
  const { t } = useI18n();
  return (
    <section className="settings" aria-labelledby="settings-title" data-testid="settings-page">
      <header className="page__header">
        <h1 id="settings-title">{t('settings.title')}</h1>
      </header>
      <div className="settings__body">
        <nav className="subnav" aria-label={t('settings.sections')}>
          {SECTIONS.map((s) => (
            <button
              key={s.id}
              type="button"
              className="subnav__item"
              aria-current={section === s.id ? 'page' : undefined}
              data-testid={`settings-${s.id}`}
              onClick={() => onSection(s.id)}
            >
              {t(s.label)}
            </button>
          ))}
        </nav>
        <div className="settings__content">
          {section === 'providers' && (
            <>
              <KeychainNotice />
              <ProvidersSection />
            </>
          )}
          {section === 'general' && <GeneralSection />}
          {section === 'localApi' && <LocalApiSection />}
          {section === 'team' && <TeamSection />}
          {section === 'about' && <AboutSection status={status} />}
        </div>
      </div>
    </section>
  );
}
