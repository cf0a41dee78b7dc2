import { cleanup, render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import type { Locale } from '../../../../../i18n';
import { I18nProvider } from '../../../../../i18n/I18nProvider';
import type { Budget } from '../../../../../ipc/bindings';
import { KeyBudget } from '../KeyBudget';

/** The backend's clock is far from the UI's; every time below is on the backend's. */
const BACKEND_NOW = Date.UTC(2026, 0, 15, 14, 10);

function renderBudget(budgets: Budget[], locale: Locale = 'en') {
  const offset = BACKEND_NOW - Date.now();
  render(
    <I18nProvider initial={locale}>
      <KeyBudget budgets={budgets} offset={offset} name="prod" />
    </I18nProvider>,
  );
}

const requests = (scope: string, remaining: number, limit: number | null, inMs: number, reservedRequests = 0): Budget => ({
  scope,
  requests: { remaining, limit, resetAt: BACKEND_NOW + inMs },
  tokens: null,
  reservedRequests,
  coolingUntil: null,
  usedUpUntil: null,
});

describe('what a key has left', () => {
  it('shows the window and counts its reset down by the backend clock, in tenths under ten seconds', async () => {
    renderBudget([requests('gpt-4o-mini', 3, 5, 1_200)]);
    const line = screen.getByTestId('key-budget-line');
    expect(line).toHaveTextContent(/^3\/5 req · resets in 1\.2 s$/);
    await waitFor(() => expect(line).toHaveTextContent(/resets in (1\.[01]|0\.\d) s/), { timeout: 1000 });
  });

  it('goes away once the window has reset: nothing is known after that', async () => {
    renderBudget([requests('gpt-4o-mini', 0, 5, 300)]);
    expect(screen.getByTestId('key-budget-line')).toHaveTextContent('0/5 req');
    await waitFor(() => expect(screen.queryByTestId('key-budget')).not.toBeInTheDocument(), { timeout: 1500 });
  });

  it('shows nothing when no budget is known', () => {
    renderBudget([{ scope: 'gpt-4o', requests: null, tokens: null, reservedRequests: 0, coolingUntil: null, usedUpUntil: null }]);
    expect(screen.queryByTestId('key-budget')).not.toBeInTheDocument();
  });

  it('counts requests in flight as spent, and says so when the size of the window is unknown', () => {
    renderBudget([requests('m', 4, null, 90_000, 1)]);
    expect(screen.getByTestId('key-budget-line')).toHaveTextContent(/^3 req left · resets in 1:30$/);
  });

  it('shows tokens when they are the tighter window, compactly', () => {
    renderBudget([{ scope: 'm', requests: { remaining: 40, limit: 50, resetAt: BACKEND_NOW + 20_000 }, tokens: { remaining: 12_000, limit: 400_000, resetAt: BACKEND_NOW + 30_000 }, reservedRequests: 0, coolingUntil: null, usedUpUntil: null }]);
    expect(screen.getByTestId('key-budget-line')).toHaveTextContent(/^12K\/400K tokens · resets in 30 s$/);
    expect(screen.getByTestId('key-budget-line'), 'every window is in the tooltip').toHaveAttribute('title', 'm: 12K/400K tokens · resets in 30 s, 40/50 req · resets in 20 s');
  });

  it('for several models, names the tightest and lists each one behind a disclosure', async () => {
    const user = userEvent.setup();
    renderBudget([requests('gpt-4o', 4, 5, 30_000), requests('gpt-4o-mini', 1, 5, 20_000)]);
    expect(screen.getByTestId('key-budget-line')).toHaveTextContent(/^gpt-4o-mini: 1\/5 req · resets in 20 s$/);
    const toggle = screen.getByRole('button', { name: 'Each model (2)' });
    expect(toggle).toHaveAttribute('aria-expanded', 'false');
    expect(screen.queryByRole('list', { name: 'What prod has left, per model' }), 'folded away at first').not.toBeInTheDocument();

    await user.click(toggle);
    expect(toggle).toHaveAttribute('aria-expanded', 'true');
    const list = screen.getByRole('list', { name: 'What prod has left, per model' });
    expect(toggle).toHaveAttribute('aria-controls', list.id);
    expect([...list.querySelectorAll('li')].map((li) => li.textContent)).toEqual([
      'gpt-4o-mini: 1/5 req · resets in 20 s',
      'gpt-4o: 4/5 req · resets in 30 s',
    ]);
    await user.keyboard('{Enter}');
    expect(toggle, 'the keyboard folds it again').toHaveAttribute('aria-expanded', 'false');
  });

  it.each([
    ['en', '3/5 req · resets in 1.2 s', '12K/400K tokens · resets in 30 s'],
    ['zh', '3/5 次请求 · 1.2 秒后重置', '1.2万/40万 tokens · 30 秒后重置'],
    ['ja', '3/5 リクエスト · 1.2 秒後にリセット', '1.2万/40万 トークン · 30 秒後にリセット'],
    ['ru', '3/5 запр. · сброс через 1,2 с', '12 тыс./400 тыс. токенов · сброс через 30 с'],
  ] as const)('%s: says it in the language of the UI', (locale, requestsText, tokensText) => {
    renderBudget([requests('a', 3, 5, 1_200)], locale);
    expect(screen.getByTestId('key-budget-line').textContent).toBe(requestsText);
    cleanup();
    renderBudget([{ scope: 'm', requests: null, tokens: { remaining: 12_000, limit: 400_000, resetAt: BACKEND_NOW + 30_000 }, reservedRequests: 0, coolingUntil: null, usedUpUntil: null }], locale);
    expect(screen.getByTestId('key-budget-line').textContent?.replace(/\u00a0/g, ' ')).toBe(tokensText);
  });
});
