import { useCallback, useEffect, useState } from 'react';
import { useI18n } from '../../i18n/I18nProvider';
import { appApi } from '../../ipc/app';
import type { KeychainStatus } from '../../ipc/bindings';
import { listen } from '../../ipc/client';

/**
 * Where API keys are kept at rest. Without the system keychain the keys stay in the database,
 * and this says so and why, in the user's language; it reads the backend's state again after
 * every key change, since a keychain that stops answering turns writes to the database.
 */
export function KeychainNotice() {
  const { t } = useI18n();
  const [status, setStatus] = useState<KeychainStatus | null>(null);
  const load = useCallback(() => {
    appApi
      .getStatus()
      .then((s) => setStatus(s.keychain))
      .catch(() => setStatus(null));
  }, []);
  useEffect(() => {
    load();
    return listen('llmConfig:changed', load);
  }, [load]);

  if (status === null) return null;
  if (status.state === 'available') {
    return (
      <p className="keychain-notice keychain-notice--ok" data-testid="keychain-status" data-state="available">
        {t('keychain.available')}
      </p>
    );
  }
  return (
    <div className="keychain-notice keychain-notice--warning" role="status" data-testid="keychain-status" data-state="unavailable">
      <p>
        <strong>{t('keychain.unavailable')}</strong> {t(`keychain.reason.${status.reason}`)}
      </p>
      {status.detail && (
        // The system's own words, in English or whatever it speaks: out of the way, for a bug report.
        <details className="keychain-notice__detail">
          <summary>{t('startup.technical')}</summary>
          <code>{status.detail}</code>
        </details>
      )}
    </div>
  );
}
