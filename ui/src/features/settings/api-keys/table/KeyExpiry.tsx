import { useBackendNow } from '../../../../hooks/useCountdown';
import { formatClockTime } from '../../../../i18n/format';
import { useI18n } from '../../../../i18n/I18nProvider';

/** Within this of its expiry, a key's row says so in the danger colour. */
const SOON_MS = 7 * 24 * 3600 * 1000;

/**
 * When a key that says so expires (a short-term Amazon Bedrock key): `Expires 14:00`, or
 * `Expired Dec 7, 09:00` once past, in the backend's time; marked within a week of it.
 */
export function KeyExpiryLine({ expiresAt, offset }: { expiresAt: number; offset: number }) {
  const { t, intlTag } = useI18n();
  const now = useBackendNow(offset, [expiresAt]);
  const time = formatClockTime(expiresAt, now, intlTag);
  const expired = expiresAt <= now;
  const state = expired ? 'expired' : expiresAt - now <= SOON_MS ? 'soon' : 'later';
  return (
    <div className="key-balance" data-testid="key-expiry" data-state={state === 'later' ? 'left' : 'spent'} data-expiry={state}>
      {t(expired ? 'expiry.expired' : 'expiry.expires', { time })}
    </div>
  );
}
