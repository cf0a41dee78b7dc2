import { useId, useState } from 'react';
import { formatCountdown } from '../../../../clock';
import { useBackendNow } from '../../../../hooks/useCountdown';
import { useI18n } from '../../../../i18n/I18nProvider';
import type { Budget } from '../../../../ipc/bindings';
import { budgetViews, formatAmount, formatSeconds, type ScopeView, type WindowView } from './budgets';

interface Props {
  budgets: readonly Budget[];
  /** Backend clock minus UI clock. */
  offset: number;
  /** The key's name, for the label of the per-model list. */
  name: string;
}

/**
 * What a key has left, as its provider last announced it: the tightest window (`3/5 req ·
 * resets in 1.2 s`) counting down by the backend clock, and for several models a disclosure
 * listing each. A window that resets drops out; nothing shows when nothing is known.
 */
export function KeyBudget({ budgets, offset, name }: Props) {
  const { t, intlTag } = useI18n();
  const listId = useId();
  const [open, setOpen] = useState(false);
  const resets = budgets.flatMap((b) => [b.requests?.resetAt, b.tokens?.resetAt].filter((at): at is number => at !== undefined));
  const now = useBackendNow(offset, resets, 10_000);
  const views = budgetViews(budgets, now);
  if (views.length === 0) return null;

  const amount = (w: WindowView) => {
    const left = formatAmount(w.left, intlTag);
    if (w.limit === null) return t(w.unit === 'requests' ? 'budget.requestsLeft' : 'budget.tokensLeft', { left });
    return t(w.unit === 'requests' ? 'budget.requests' : 'budget.tokens', { left, limit: formatAmount(w.limit, intlTag) });
  };
  const resetsIn = (w: WindowView) => {
    const ms = w.resetAt - now;
    const seconds = formatSeconds(ms, intlTag);
    return t('budget.resetsIn', { time: seconds === null ? formatCountdown(ms) : t('budget.seconds', { n: seconds }) });
  };
  const windowText = (w: WindowView) => `${amount(w)} · ${resetsIn(w)}`;
  const scopeText = (scope: ScopeView) => t('budget.scope', { scope: scope.scope, windows: scope.windows.map(windowText).join(', ') });

  const [tightest] = views;
  const several = views.length > 1;
  return (
    <div className="key-budget" data-testid="key-budget">
      <span className="key-budget__line" title={views.map(scopeText).join('\n')} data-testid="key-budget-line" data-unit={tightest.windows[0].unit}>
        {several ? t('budget.scope', { scope: tightest.scope, windows: windowText(tightest.windows[0]) }) : windowText(tightest.windows[0])}
      </span>
      {several && (
        <>
          <button
            type="button"
            className="link-button key-budget__toggle"
            aria-expanded={open}
            aria-controls={listId}
            onClick={() => setOpen((o) => !o)}
            data-testid="key-budget-toggle"
          >
            {t('budget.models', { count: views.length })}
          </button>
          <ul id={listId} className="key-budget__scopes" aria-label={t('budget.modelsOf', { name })} hidden={!open} data-testid="key-budget-scopes">
            {views.map((scope) => (
              <li key={scope.scope}>{scopeText(scope)}</li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}
