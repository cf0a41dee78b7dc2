import { useId } from 'react';
import { useI18n } from '../../i18n/I18nProvider';
import { errorText } from '../../i18n/problems';
import type { TokenUsage } from '../../ipc/bindings';
import { usageApi } from '../../ipc/usage';
import { TableRegion } from './TableRegion';
import { formatCost, formatCount, formatShare } from './usageFormat';
import type { UsageRange } from './usageRange';
import { useRangeReport } from './useRangeReport';

interface Props {
  range: Pick<UsageRange, 'from' | 'to'>;
  /** Changes when the page is refreshed. */
  refresh: unknown;
}

/**
 * Usage by named token of the local API (Settings → Local API): what each agent, script or
 * person given a token of its own spent, the largest spend first, and what went without one (the
 * chat, the endpoint's own token). Shown once a named token has been used in the range.
 */
export function TokensSection({ range, refresh }: Props) {
  const { t, intlTag } = useI18n();
  const titleId = useId();
  const load = useRangeReport(usageApi.getByToken, range, refresh);

  if (load.kind === 'loading') return null;
  if (load.kind === 'loaded' && !load.report.some((line) => line.name !== null)) return null;

  const count = (n: number) => formatCount(n, intlTag);
  const cost = (line: TokenUsage) => {
    if (line.costUsd === null) return '—';
    const text = formatCost(line.costUsd, intlTag);
    return line.costComplete ? text : t('usagePage.costPartial', { cost: text });
  };
  return (
    <section className="usage-section" aria-labelledby={titleId} data-testid="usage-tokens">
      <h2 id={titleId}>{t('usagePage.tokensTitle')}</h2>
      <p className="field__hint">{t('usagePage.tokensHint')}</p>
      {load.kind === 'failed' ? (
        <p className="form-error" role="alert">
          {t('usagePage.tokensFailed', { message: errorText(t, load.error) })}
        </p>
      ) : (
        <TableRegion labelledBy={titleId}>
          <table className="usage-table" data-testid="usage-token-table">
            <caption className="visually-hidden">{t('usagePage.tokensTitle')}</caption>
            <thead>
              <tr>
                <th scope="col">{t('usagePage.colToken')}</th>
                <th scope="col" className="num">
                  {t('usagePage.requests')}
                </th>
                <th scope="col" className="num">
                  {t('usagePage.colInput')}
                </th>
                <th scope="col" className="num">
                  {t('usagePage.colCachedShare')}
                </th>
                <th scope="col" className="num">
                  {t('usagePage.colOutput')}
                </th>
                <th scope="col" className="num">
                  {t('usagePage.cost')}
                </th>
              </tr>
            </thead>
            <tbody>
              {load.report.map((line) => (
                <tr key={line.name ?? ''} data-testid="usage-token-row" data-token={line.name ?? ''}>
                  <th scope="row" className="usage-table__name">
                    {line.name ?? t('usagePage.tokenNone')}
                  </th>
                  <td className="num">{count(line.requests)}</td>
                  <td className="num">{count(line.inputTokens)}</td>
                  <td className="num">{line.inputTokens > 0 ? formatShare(line.cachedTokens / line.inputTokens, intlTag) : '—'}</td>
                  <td className="num">{count(line.outputTokens)}</td>
                  <td className="num">{cost(line)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableRegion>
      )}
    </section>
  );
}
