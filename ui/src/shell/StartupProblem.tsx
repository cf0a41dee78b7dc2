import { useI18n } from '../i18n/I18nProvider';

interface Props {
  title: string;
  message: string;
  path?: string;
  logDir?: string;
}

/** Shown instead of the app when it cannot start safely. Nothing was changed on disk. */
export function StartupProblem({ title, message, path, logDir }: Props) {
  const { t } = useI18n();
  return (
    <main className="startup-problem" role="alert" data-testid="startup-problem">
      <h1>{title}</h1>
      <p className="startup-problem__message">{message}</p>
      {path && (
        <p>
          {t('startup.databaseFile')} <code>{path}</code>
        </p>
      )}
      <p>{t('startup.notModified')}</p>
      {logDir && (
        <p className="muted">
          {t('startup.logDetails')} <code>{logDir}</code>
        </p>
      )}
    </main>
  );
}
