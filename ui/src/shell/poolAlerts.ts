import { useEffect, useRef } from 'react';
import type { Translate } from '../i18n/problems';
import type { PoolAlert } from '../ipc/bindings';
import { appApi } from '../ipc/app';
import { listen } from '../ipc/client';

/** A `pool:alert` in the UI's language: the desktop notification's title and body. */
export function poolAlertText(t: Translate, alert: PoolAlert): { title: string; body: string } {
  switch (alert.kind) {
    case 'keyDisabled':
      return {
        title: t('alert.keyDisabledTitle', { provider: alert.provider }),
        body: t('alert.keyDisabledBody', { provider: alert.provider, key: alert.key, status: alert.status }),
      };
    case 'keyOutOfCredit':
      return {
        title: t('alert.keyOutOfCreditTitle', { provider: alert.provider }),
        body: t('alert.keyOutOfCreditBody', { provider: alert.provider, key: alert.key }),
      };
    case 'providerUnusable':
      return {
        title: t('alert.providerUnusableTitle', { provider: alert.provider }),
        body: t('alert.providerUnusableBody', { provider: alert.provider }),
      };
    case 'keyWindowUsedUp': {
      const time = new Intl.DateTimeFormat(t('intl.tag'), { dateStyle: 'medium', timeStyle: 'short' }).format(alert.resetsAt);
      return {
        title: t('alert.keyWindowUsedUpTitle', { provider: alert.provider }),
        body: t('alert.keyWindowUsedUpBody', { provider: alert.provider, key: alert.key, time }),
      };
    }
    case 'keyExpiring': {
      const time = new Intl.DateTimeFormat(t('intl.tag'), { dateStyle: 'medium', timeStyle: 'short' }).format(alert.expiresAt);
      return {
        title: t('alert.keyExpiringTitle', { provider: alert.provider }),
        body: t('alert.keyExpiringBody', { provider: alert.provider, key: alert.key, time }),
      };
    }
  }
}

/**
 * Shows every `pool:alert` as a desktop notification, worded in the UI's language (the backend
 * tells each loss once, and not at all while Settings → General switched them off).
 */
export function usePoolAlerts(t: Translate) {
  // The latest wording, without listening again when the language changes.
  const words = useRef(t);
  words.current = t;
  // One at a time, in the order told: a key refused comes before the provider it left keyless.
  const shown = useRef<Promise<unknown>>(Promise.resolve());
  useEffect(
    () =>
      listen('pool:alert', (alert) => {
        const { title, body } = poolAlertText(words.current, alert);
        shown.current = shown.current.then(() =>
          appApi.notify(title, body).catch(() => {
            // Nowhere to show it: the keys' own page says the same.
          }),
        );
      }),
    [],
  );
}
