import { useCallback, useEffect, useId, useState } from 'react';
import { formatClockTime } from '../../i18n/format';
import { useI18n } from '../../i18n/I18nProvider';
import { errorText } from '../../i18n/problems';
import { appApi } from '../../ipc/app';
import type { Alerts, Notifications } from '../../ipc/bindings';
import { listen } from '../../ipc/client';
import { poolAlertText } from '../../shell/poolAlerts';

/** How often the list is read again (a key out of credit changes no stored key: no event says so). */
const POLL_MS = 15_000;

type Tested = { kind: 'busy' } | { kind: 'done'; state: Notifications } | { kind: 'failed'; error: unknown };

/**
 * Settings → General, under the alerts' switch: the keys lost this run, the newest first, listed
 * whether the desktop showed them or not; a test notification; and, as the keychain's notice
 * does, a banner when the desktop cannot show notifications (no notification service answers),
 * with the system's words for a bug report. Read again whenever a key is lost or changes.
 */
export function KeysLostAlerts() {
  const { t, intlTag } = useI18n();
  const titleId = useId();
  const [alerts, setAlerts] = useState<Alerts | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [tested, setTested] = useState<Tested | null>(null);
  const load = useCallback(() => {
    appApi.getAlerts().then(
      (a) => {
        setAlerts(a);
        setLoadError(null);
      },
      (e) => setLoadError(e),
    );
  }, []);
  useEffect(() => {
    load();
    const stops = [listen('pool:alert', load), listen('llmConfig:changed', load)];
    const timer = setInterval(load, POLL_MS);
    return () => {
      clearInterval(timer);
      for (const stop of stops) stop();
    };
  }, [load]);

  async function test() {
    if (tested?.kind === 'busy') return;
    setTested({ kind: 'busy' });
    try {
      const state = await appApi.testNotification(t('alerts.testTitle'), t('alerts.testBody'));
      setTested({ kind: 'done', state });
      setAlerts((a) => (a ? { ...a, notifications: state } : a));
    } catch (error) {
      setTested({ kind: 'failed', error });
    }
  }

  const down = alerts?.notifications.state === 'unavailable' ? alerts.notifications : null;
  const now = Date.now();
  return (
    <section className="keys-lost" aria-labelledby={titleId} data-testid="keys-lost-alerts">
      <h3 id={titleId}>{t('alerts.title')}</h3>
      {down && (
        <div className="keychain-notice keychain-notice--warning" role="status" data-testid="notifications-status" data-state="unavailable">
          <p>
            <strong>{t('alerts.unavailable')}</strong> {t('alerts.unavailableReason')}
          </p>
          {down.detail && (
            // The system's own words, in English or whatever it speaks: out of the way, for a bug report.
            <details className="keychain-notice__detail">
              <summary>{t('startup.technical')}</summary>
              <code>{down.detail}</code>
            </details>
          )}
        </div>
      )}
      <div className="keys-lost__test">
        <button type="button" className="button" aria-busy={tested?.kind === 'busy' || undefined} onClick={() => void test()} data-testid="notification-test">
          {t('alerts.test')}
        </button>
        <span role="status" className="field__hint" data-testid="notification-test-result">
          {tested?.kind === 'done' && t(tested.state.state === 'available' ? 'alerts.testSent' : 'alerts.testNotShown')}
          {tested?.kind === 'failed' && t('alerts.testFailed', { message: errorText(t, tested.error) })}
        </span>
      </div>
      <p className="field__hint">{t('alerts.hint')}</p>
      {loadError !== null && (
        <p className="form-error" role="alert">
          {t('alerts.loadFailed', { message: errorText(t, loadError) })}
        </p>
      )}
      {alerts &&
        (alerts.recent.length === 0 ? (
          <p className="muted" data-testid="keys-lost-none">
            {t('alerts.none')}
          </p>
        ) : (
          <ol className="keys-lost__list" aria-labelledby={titleId} data-testid="keys-lost-list">
            {alerts.recent.map(({ at, alert }, i) => {
              const { title, body } = poolAlertText(t, alert);
              return (
                // biome-ignore lint/suspicious/noArrayIndexKey: the same loss can be told twice; the list only grows at its head
                <li key={`${at}-${alerts.recent.length - i}`} data-kind={alert.kind}>
                  <time dateTime={new Date(at).toISOString()} className="muted">
                    {formatClockTime(at, now, intlTag)}
                  </time>{' '}
                  <strong>{title}</strong> <span>{body}</span>
                </li>
              );
            })}
          </ol>
        ))}
    </section>
  );
}
