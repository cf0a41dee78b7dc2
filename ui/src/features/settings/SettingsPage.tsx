import { useI18n } from '../../i18n/I18nProvider';
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
          {section === 'about' && (
            <section className="about" aria-labelledby="about-title" data-testid="about">
              <h2 id="about-title" data-testid="about-name">
                Keypool
              </h2>
              <p className="muted">{t('about.tagline')}</p>
              <dl className="about__facts">
                <dt>{t('about.version')}</dt>
                <dd data-testid="about-version">{status.version}</dd>
                <dt>{t('about.data')}</dt>
                <dd>
                  <code data-testid="about-data-dir">{status.dataDir}</code>
                </dd>
                <dt>{t('about.logs')}</dt>
                <dd>
                  <code>{status.logDir}</code>
                </dd>
                <dt>{t('about.licence')}</dt>
                <dd data-testid="about-licence">{t('about.licenceText')}</dd>
              </dl>
            </section>
          )}
        </div>
      </div>
    </section>
  );
}
