import { useI18n } from '../i18n/I18nProvider';
import type { MessageKey } from '../i18n';

interface Props {
  title: string;
  message: string;
  /** The database's failure kind (`too_new`, …); its message is then the English details. */
  kind?: string;
  path?: string;
  logDir?: string;
}

const KINDS: Record<string, MessageKey> = {
  create_failed: 'startup.createFailed',
  not_a_database: 'startup.notADatabase',
  too_new: 'startup.tooNew',
  migration_failed: 'startup.migrationFailed',
  open_failed: 'startup.openFailed',
  backup_failed: 'startup.backupFailed',
};

/**
 * Shown instead of the app when it cannot start safely. Nothing was changed on disk. A known
 * failure is worded in the UI's language; the backend's English (paths of copies, SQLite's
 * words) stays available under "Technical details".
 */
export function StartupProblem({ title, message, kind, path, logDir }: Props) {
  const { t } = useI18n();
  const known = kind ? KINDS[kind] : undefined;
  return (
    <main className="startup-problem" role="alert" data-testid="startup-problem">
      <h1>{title}</h1>
      <p className="startup-problem__message">{known ? t(known) : message}</p>
      {path && (
        <p>
          {t('startup.databaseFile')} <code>{path}</code>
        </p>
      )}
      <p>{t('startup.notModified')}</p>
      {known && (
        <details className="startup-problem__details">
          <summary>{t('startup.technical')}</summary>
          <p lang="en">{message}</p>
        </details>
      )}
      {logDir && (
        <p className="muted">
          {t('startup.logDetails')} <code>{logDir}</code>
        </p>
      )}
    </main>
  );
}
