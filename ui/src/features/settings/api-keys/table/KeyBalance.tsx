import { useI18n } from '../../../../i18n/I18nProvider';
import type { KeyBalance } from '../../../../ipc/bindings';

/** An amount in its currency, in the UI's language (`¥110.00`, `$12.50`); the code itself where the runtime knows no such currency. */
export function formatMoney(amount: number, currency: string, intlTag: string): string {
  try {
    return new Intl.NumberFormat(intlTag, { style: 'currency', currency }).format(amount);
  } catch {
    return `${amount.toFixed(2)} ${currency}`;
  }
}

/**
 * What a key's account has left, as its provider last answered the balance read: `Balance
 * ¥110.00`, the same marked out of credit when the provider takes no request on it, "No spending
 * limit", or why nothing was read (the key stays usable then). The read's time in the title.
 */
export function KeyBalanceLine({ balance }: { balance: KeyBalance }) {
  const { t, intlTag } = useI18n();
  const readAt = new Intl.DateTimeFormat(intlTag, { dateStyle: 'short', timeStyle: 'short' }).format(balance.readAt);
  let text: string;
  let state: 'left' | 'spent' | 'unlimited' | 'unreadable';
  if (balance.problem !== null) {
    state = 'unreadable';
    text = t('balance.unreadable', { reason: balance.problem });
  } else if (balance.amount === null || balance.currency === null) {
    state = 'unlimited';
    text = t('balance.unlimited');
  } else {
    const amount = formatMoney(balance.amount, balance.currency, intlTag);
    state = balance.usable ? 'left' : 'spent';
    text = t(balance.usable ? 'balance.left' : 'balance.spent', { amount });
  }
  return (
    <div className="key-balance" data-testid="key-balance" data-state={state} title={t('balance.readAt', { time: readAt })}>
      {text}
    </div>
  );
}
