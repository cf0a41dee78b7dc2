import { useMemo } from 'react';
import { useI18n } from '../../i18n/I18nProvider';
import type { ChartSpec } from './charts';
import { useChartTheme } from './chartTheme';
import { UsageChart } from './UsageChart';
import { activeBuckets, activity, cacheByProvider, tokensPerKey } from './usageFigures';
import { formatCount, formatShare } from './usageFormat';
import { bucketLabel, bucketsOf } from './usageRange';
import type { UsageData } from './useUsage';

interface Props {
  data: UsageData;
  providerName: (providerId: string) => string;
  /** A key's name in the legend and the table (with its provider's when several are shown). */
  keyName: (key: { providerId: string; keyId: string }) => string;
}

/**
 * The three charts of the period: tokens per key, requests with their 429s and failovers, and the
 * prompt cache's share per provider; each with the table of its numbers.
 */
export function UsageCharts({ data, providerName, keyName }: Props) {
  const { t, intlTag } = useI18n();
  const theme = useChartTheme();
  const { range, summary, series } = data;
  const hourly = range.bucket === 'hour';
  const count = (n: number) => formatCount(n, intlTag);

  const buckets = useMemo(() => bucketsOf(range), [range]);
  const { starts } = buckets;
  const labels = useMemo(() => starts.map((start) => bucketLabel(start, range.bucket, intlTag)), [starts, range.bucket, intlTag]);
  const tokens = useMemo(() => tokensPerKey(series.points, buckets, summary.keys, keyName), [series, buckets, summary.keys, keyName]);
  const sums = useMemo(() => activity(series.points, buckets), [series, buckets]);
  const caches = useMemo(() => cacheByProvider(summary.keys), [summary.keys]);

  const tokensSpec = useMemo<ChartSpec>(
    () => ({ type: 'bar', stacked: true, labels, series: tokens.map((s, i) => ({ name: s.name, values: s.values, tone: i })) }),
    [labels, tokens],
  );
  const activitySpec = useMemo<ChartSpec>(
    () => ({
      type: 'line',
      labels,
      series: [
        { name: t('usagePage.requests'), values: sums.requests, tone: 0 },
        { name: t('usagePage.rateLimited'), values: sums.rateLimited, tone: 'warning' },
        { name: t('usagePage.failovers'), values: sums.failovers, tone: 'danger' },
      ],
    }),
    [labels, sums, t],
  );
  const cacheSpec = useMemo<ChartSpec>(
    () => ({
      type: 'bar',
      share: true,
      labels: caches.map((c) => providerName(c.providerId)),
      series: [{ name: t('usagePage.cacheHitShort'), values: caches.map((c) => c.ratio), tone: 1 }],
    }),
    [caches, providerName, t],
  );

  const bucketHeader = t(hourly ? 'usagePage.colHour' : 'usagePage.colDay');
  const tokenTotals = labels.map((_, i) => tokens.reduce((sum, s) => sum + s.values[i], 0));
  const tokenRows = activeBuckets(tokenTotals);
  const activityRows = activeBuckets(sums.requests, sums.rateLimited, sums.failovers);
  const peak = tokenRows.reduce((best, i) => (best < 0 || tokenTotals[i] > tokenTotals[best] ? i : best), -1);

  const tokensTitle = t(hourly ? 'usagePage.tokensByHour' : 'usagePage.tokensByDay');
  const activityTitle = t(hourly ? 'usagePage.activityByHour' : 'usagePage.activityByDay');
  const cacheTitle = t('usagePage.cacheTitle');
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

  return (
    <div className="usage-charts">
      <UsageChart
        title={tokensTitle}
        description={
          peak < 0
            ? t('usagePage.tokensNone')
            : t('usagePage.tokensSummary', { keys: count(tokens.length), total: count(sum(tokenTotals)), when: labels[peak], peak: count(tokenTotals[peak]) })
        }
        spec={tokensSpec}
        theme={theme}
        testId="usage-chart-tokens"
      >
        <table className="usage-table">
          <caption className="visually-hidden">{tokensTitle}</caption>
          <thead>
            <tr>
              <th scope="col">{bucketHeader}</th>
              {tokens.map((s) => (
                <th key={s.key} scope="col" className="num">
                  {s.name}
                </th>
              ))}
              <th scope="col" className="num">
                {t('usagePage.total')}
              </th>
            </tr>
          </thead>
          <tbody>
            {tokenRows.map((i) => (
              <tr key={starts[i]}>
                <th scope="row">{labels[i]}</th>
                {tokens.map((s) => (
                  <td key={s.key} className="num">
                    {count(s.values[i])}
                  </td>
                ))}
                <td className="num">{count(tokenTotals[i])}</td>
              </tr>
            ))}
            {tokenRows.length === 0 && (
              <tr>
                <td colSpan={tokens.length + 2}>{t('usagePage.tokensNone')}</td>
              </tr>
            )}
          </tbody>
        </table>
      </UsageChart>

      <UsageChart
        title={activityTitle}
        description={t('usagePage.activitySummary', {
          requests: count(sum(sums.requests)),
          rateLimited: count(sum(sums.rateLimited)),
          failovers: count(sum(sums.failovers)),
        })}
        spec={activitySpec}
        theme={theme}
        testId="usage-chart-activity"
      >
        <table className="usage-table">
          <caption className="visually-hidden">{activityTitle}</caption>
          <thead>
            <tr>
              <th scope="col">{bucketHeader}</th>
              <th scope="col" className="num">
                {t('usagePage.requests')}
              </th>
              <th scope="col" className="num">
                {t('usagePage.col429')}
              </th>
              <th scope="col" className="num">
                {t('usagePage.failovers')}
              </th>
            </tr>
          </thead>
          <tbody>
            {activityRows.map((i) => (
              <tr key={starts[i]}>
                <th scope="row">{labels[i]}</th>
                <td className="num">{count(sums.requests[i])}</td>
                <td className="num">{count(sums.rateLimited[i])}</td>
                <td className="num">{count(sums.failovers[i])}</td>
              </tr>
            ))}
            {activityRows.length === 0 && (
              <tr>
                <td colSpan={4}>{t('usagePage.activityNone')}</td>
              </tr>
            )}
          </tbody>
        </table>
      </UsageChart>

      <UsageChart
        title={cacheTitle}
        description={
          caches.length === 0
            ? t('usagePage.cacheNone')
            : t('usagePage.cacheSummary', {
                providers: caches
                  .map((c) => `${providerName(c.providerId)} ${c.ratio === null ? '—' : formatShare(c.ratio, intlTag)}`)
                  .join(t('list.separator')),
              })
        }
        spec={cacheSpec}
        theme={theme}
        testId="usage-chart-cache"
      >
        <table className="usage-table">
          <caption className="visually-hidden">{cacheTitle}</caption>
          <thead>
            <tr>
              <th scope="col">{t('usagePage.colProvider')}</th>
              <th scope="col" className="num">
                {t('usagePage.colCached')}
              </th>
              <th scope="col" className="num">
                {t('usagePage.colInput')}
              </th>
              <th scope="col" className="num">
                {t('usagePage.cacheHitShort')}
              </th>
            </tr>
          </thead>
          <tbody>
            {caches.map((c) => (
              <tr key={c.providerId}>
                <th scope="row">{providerName(c.providerId)}</th>
                <td className="num">{count(c.cachedTokens)}</td>
                <td className="num">{count(c.inputTokens)}</td>
                <td className="num">{c.ratio === null ? '—' : formatShare(c.ratio, intlTag)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </UsageChart>
    </div>
  );
}
