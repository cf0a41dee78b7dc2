import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { Locale } from '../../../../../i18n';
import { I18nProvider } from '../../../../../i18n/I18nProvider';
import type { KeyTestResult } from '../../../../../ipc/bindings';
import { KeyTestResultLine } from '../KeyTestResult';

function line(locale: Locale, result: KeyTestResult) {
  render(
    <I18nProvider initial={locale}>
      <KeyTestResultLine test={{ kind: 'done', result }} />
    </I18nProvider>,
  );
  return screen.getByTestId('key-test-result');
}

const ok: KeyTestResult = { ok: true, status: 200, problem: null, message: 'OK', latencyMs: 42 };

describe('a key test of a provider that says what a key may spend (OpenRouter)', () => {
  const cases: [Locale, string][] = [
    ['en', '$74.50 of $100.00 credit left'],
    ['zh', '额度剩余 US$74.50 / US$100.00'],
    ['ja', 'クレジット残り $74.50 / $100.00'],
    ['ru', 'Осталось 74,50'],
  ];

  it.each(cases)('%s: shows the credit left beside the result', (locale, words) => {
    const shown = line(locale, { ...ok, credit: { limit: 100, remaining: 74.5, usage: 25.5 } });
    expect(shown.textContent).toContain(words);
  });

  it('says what was spent when the key has no limit', () => {
    const unlimited = line('en', { ...ok, credit: { limit: null, remaining: null, usage: 3.25 } });
    expect(unlimited).toHaveTextContent('OK · 42 ms · $3.25 spent, no limit');
  });

  it('says nothing of credit where the provider tells none', () => {
    expect(line('en', ok).textContent, 'other kinds tell no credit').toBe('OK · 42 ms');
  });
});
