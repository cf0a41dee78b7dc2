import type { Budget, Window } from '../../../../ipc/bindings';

/*
 * What each key has left before its provider refuses it, as the key table shows it. Pure: the
 * backend's `now` is passed in, so the countdown and the windows that reset while the table is
 * open follow the backend's clock.
 */

/** One window of one scope: what is left of it after the requests in flight, until `resetAt`. */
export interface WindowView {
  unit: 'requests' | 'tokens';
  left: number;
  /** The window's size; null when the provider announced only what is left. */
  limit: number | null;
  resetAt: number;
}

/** A model's (or model class's) windows, the tightest first. */
export interface ScopeView {
  scope: string;
  windows: WindowView[];
}

/** How much of a window is left, 0 (spent) to 1; a window of unknown size is spent or not. */
function share(window: WindowView): number {
  if (window.limit) return window.left / window.limit;
  return window.left === 0 ? 0 : 1;
}

const tighter = (a: WindowView, b: WindowView) => share(a) - share(b) || a.resetAt - b.resetAt;

function view(unit: WindowView['unit'], window: Window | null, reserved: number, now: number): WindowView[] {
  if (!window || window.resetAt <= now) return [];
  return [{ unit, left: Math.max(0, window.remaining - reserved), limit: window.limit, resetAt: window.resetAt }];
}

/**
 * The windows still running at `now`, per scope, the tightest scope first (then the one that
 * resets first). Requests in flight count against the requests window, as the pool counts them.
 * Scopes with no running window are left out: nothing is known about them.
 */
export function budgetViews(budgets: readonly Budget[], now: number): ScopeView[] {
  return budgets
    .map((budget) => ({
      scope: budget.scope,
      windows: [...view('requests', budget.requests, budget.reservedRequests, now), ...view('tokens', budget.tokens, 0, now)].sort(tighter),
    }))
    .filter((scope) => scope.windows.length > 0)
    .sort((a, b) => tighter(a.windows[0], b.windows[0]));
}

/** `5`, `1,234`, and from ten thousand on, compact: `40K`, `1.2M` (in the UI's language). */
export function formatAmount(n: number, intlTag: string): string {
  return n < 10_000
    ? new Intl.NumberFormat(intlTag).format(n)
    : new Intl.NumberFormat(intlTag, { notation: 'compact', maximumFractionDigits: 1 }).format(n);
}

/**
 * Seconds until a reset, rounded up so zero shows only once it has passed: with a tenth under
 * ten seconds (`1.2`), whole seconds under a minute (`12`); null from a minute on (a countdown
 * like `1:05` reads better there).
 */
export function formatSeconds(ms: number, intlTag: string): string | null {
  if (ms >= 60_000) return null;
  if (ms < 10_000) {
    return new Intl.NumberFormat(intlTag, { minimumFractionDigits: 1, maximumFractionDigits: 1 }).format(Math.ceil(ms / 100) / 10);
  }
  return new Intl.NumberFormat(intlTag).format(Math.ceil(ms / 1000));
}
