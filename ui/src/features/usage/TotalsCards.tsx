import type { ReactNode } from 'react';
import { useI18n } from '../../i18n/I18nProvider';
import type { UsageTotals } from '../../ipc/bindings';
import { cacheRatio } from './usageFigures';
import { formatCost, formatCount, formatShare } from './usageFormat';

/** The period's sums, one card each; the cost only where a price is known. */
export function TotalsCards({ totals }: { totals: UsageTotals }) {
  const { t, intlTag } = useI18n();
  const count = (n: number) => formatCount(n, intlTag);
  const ratio = cacheRatio(totals.cachedTokens, totals.inputTokens);
  const cards: { id: string; label: string; value: string; note?: ReactNode; tone?: 'warning' | 'danger' }[] = [
    { id: 'requests', label: t('usagePage.requests'), value: count(totals.requests) },
    { id: 'failures', label: t('usagePage.failures'), value: count(totals.failures), tone: totals.failures > 0 ? 'danger' : undefined },
    { id: 'rate-limited', label: t('usagePage.rateLimited'), value: count(totals.rateLimited), tone: totals.rateLimited > 0 ? 'warning' : undefined },
    { id: 'input', label: t('usagePage.inputTokens'), value: count(totals.inputTokens) },
    {
      id: 'cached',
      label: t('usagePage.cachedTokens'),
      value: count(totals.cachedTokens),
      note: ratio === null ? undefined : t('usagePage.cacheHit', { share: formatShare(ratio, intlTag) }),
    },
    { id: 'output', label: t('usagePage.outputTokens'), value: count(totals.outputTokens) },
  ];
  if (totals.cost !== null) {
    cards.push({
      id: 'cost',
      label: t('usagePage.cost'),
      value: formatCost(totals.cost, intlTag),
      note: totals.costComplete ? undefined : t('usagePage.partlyPriced'),
    });
  }
  return (
    <dl className="usage-totals" data-testid="usage-totals">
      {cards.map((card) => (
        <div key={card.id} className={`usage-card${card.tone ? ` usage-card--${card.tone}` : ''}`} data-testid={`usage-total-${card.id}`}>
          <dt className="usage-card__label">{card.label}</dt>
          <dd className="usage-card__value" data-testid={`usage-total-${card.id}-value`}>
            {card.value}
          </dd>
          {card.note && (
            <dd className="usage-card__note" data-testid={`usage-total-${card.id}-note`}>
              {card.note}
            </dd>
          )}
        </div>
      ))}
    </dl>
  );
}
