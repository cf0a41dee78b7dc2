import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { Locale } from '../../../../../i18n';
import { I18nProvider } from '../../../../../i18n/I18nProvider';
import type { KeyBalance } from '../../../../../ipc/bindings';
import { KeyBalanceLine } from '../KeyBalance';

const READ_AT = Date.UTC(2026, 11, 7, 14, 0);

function renderBalance(balance: Partial<KeyBalance>, locale: Locale = 'en') {
  const full: KeyBalance = { readAt: READ_AT, amount: null, currency: null, usable: true, problem: null, status: 200, ...balance };
  render(
    <I18nProvider initial={locale}>
      <KeyBalanceLine balance={full} />
    </I18nProvider>,
  );
  return screen.getByTestId('key-balance');
}

afterEach(cleanup);

describe("what a prepaid key's account has left", () => {
  it('shows the amount in its own currency, in the language of the UI', () => {
    expect(renderBalance({ amount: 110, currency: 'CNY' })).toHaveTextContent(/^Balance CN¥110\.00$/);
    cleanup();
    expect(renderBalance({ amount: 12.5, currency: 'USD' }, 'ru')).toHaveTextContent(/^Баланс 12,50\s\$$/);
    cleanup();
    expect(renderBalance({ amount: 3, currency: 'USD' }, 'ja')).toHaveTextContent('残高 $3.00');
  });

  it('says out of credit when the provider takes no request on it', () => {
    const line = renderBalance({ amount: 0, currency: 'CNY', usable: false });
    expect(line).toHaveTextContent('Balance CN¥0.00 · out of credit');
    expect(line).toHaveAttribute('data-state', 'spent');
  });

  it('tells a key without limit and a read that found nothing apart', () => {
    expect(renderBalance({})).toHaveTextContent('No spending limit');
    cleanup();
    const unreadable = renderBalance({ problem: 'unreadable balance: not JSON' }, 'zh');
    expect(unreadable).toHaveTextContent('未能读取余额：unreadable balance: not JSON');
    expect(unreadable).toHaveAttribute('data-state', 'unreadable');
  });

  it('names when it was read', () => {
    expect(renderBalance({ amount: 1, currency: 'USD' }).getAttribute('title')).toMatch(/^Read 12\/7\/26/);
  });
});
