import { describe, expect, it } from 'vitest';
import type { Budget } from '../../../../../ipc/bindings';
import { budgetViews, formatAmount, formatSeconds } from '../budgets';

const budget = (scope: string, fields: Partial<Budget> = {}): Budget => ({ scope, requests: null, tokens: null, reservedRequests: 0, coolingUntil: null, usedUpUntil: null, ...fields });

describe('budget views', () => {
  it('counts the requests in flight against what the provider said is left', () => {
    const [scope] = budgetViews([budget('gpt-4o', { requests: { remaining: 4, limit: 5, resetAt: 2_000 }, reservedRequests: 1 })], 1_000);
    expect(scope.windows).toEqual([{ unit: 'requests', left: 3, limit: 5, resetAt: 2_000 }]);
  });

  it('never shows less than nothing left', () => {
    const [scope] = budgetViews([budget('m', { requests: { remaining: 1, limit: 5, resetAt: 2_000 }, reservedRequests: 3 })], 0);
    expect(scope.windows[0].left).toBe(0);
  });

  it('puts the tightest window first, within a scope and across scopes', () => {
    const views = budgetViews(
      [
        budget('roomy', { requests: { remaining: 9, limit: 10, resetAt: 5_000 } }),
        budget('tight', {
          requests: { remaining: 3, limit: 5, resetAt: 3_000 },
          tokens: { remaining: 1_000, limit: 40_000, resetAt: 4_000 },
        }),
      ],
      0,
    );
    expect(views.map((v) => v.scope)).toEqual(['tight', 'roomy']);
    expect(views[0].windows.map((w) => w.unit), '1 000 of 40 000 tokens is tighter than 3 of 5 requests').toEqual(['tokens', 'requests']);
  });

  it('judges a window of unknown size by whether anything is left', () => {
    const views = budgetViews(
      [budget('a', { requests: { remaining: 2, limit: null, resetAt: 3_000 } }), budget('b', { requests: { remaining: 0, limit: null, resetAt: 3_000 } })],
      0,
    );
    expect(views.map((v) => v.scope)).toEqual(['b', 'a']);
  });

  it('drops windows that have reset by the backend’s now, and scopes left with none', () => {
    const budgets = [
      budget('m', { requests: { remaining: 0, limit: 5, resetAt: 2_000 }, tokens: { remaining: 10, limit: 100, resetAt: 9_000 } }),
      budget('gone', { requests: { remaining: 1, limit: 5, resetAt: 2_000 } }),
      budget('never', {}),
    ];
    expect(budgetViews(budgets, 1_999).map((v) => v.scope)).toEqual(['m', 'gone']);
    const later = budgetViews(budgets, 2_000);
    expect(later.map((v) => v.scope)).toEqual(['m']);
    expect(later[0].windows.map((w) => w.unit)).toEqual(['tokens']);
    expect(budgetViews(budgets, 9_000), 'nothing known: nothing shown').toEqual([]);
  });
});

describe('budget wording helpers', () => {
  it('writes small amounts in full and large ones compactly', () => {
    expect(formatAmount(5, 'en')).toBe('5');
    expect(formatAmount(9_999, 'en')).toBe('9,999');
    expect(formatAmount(40_000, 'en')).toBe('40K');
    expect(formatAmount(1_250_000, 'en')).toBe('1.3M');
  });

  it('writes seconds to a reset with a tenth under ten seconds, rounded up, and leaves minutes to the countdown', () => {
    expect(formatSeconds(1_201, 'en')).toBe('1.3');
    expect(formatSeconds(1_200, 'en')).toBe('1.2');
    expect(formatSeconds(50, 'en')).toBe('0.1');
    expect(formatSeconds(12_001, 'en')).toBe('13');
    expect(formatSeconds(60_000, 'en')).toBeNull();
    expect(formatSeconds(1_200, 'ru'), 'the decimal sign of the language').toBe('1,2');
  });
});
