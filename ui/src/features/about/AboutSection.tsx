import { useI18n } from '../../i18n/I18nProvider';
import type { AppStatus } from '../../ipc/bindings';
import { ThirdPartySoftware } from './ThirdPartySoftware';

/** Settings → About: the app's name, version, where its data and logs are, and what it is built with. */
export function AboutSection({ status }: { status: AppStatus }) {
  const { t } = useI18n();
  return (
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
      <ThirdPartySoftware />
    </section>
  );
}
