import { useMemo } from 'react';
import { useI18n } from '../../i18n/I18nProvider';
import type { ChartSpec } from './charts';
import { useChartTheme } from './chartTheme';
import { type ChartTable, UsageChart } from './UsageChart';
import { activeBuckets, activity, cacheByProvider, type KeyRef, tokensPerKey } from './usageFigures';
import { formatCount, formatShare } from './usageFormat';
import { bucketLabel, bucketsOf } from './usageRange';
import type { UsageData } from './useUsage';

interface Props {
  data: UsageData;
  providerName: (providerId: string) => string;
  /** A key's name in the legend and the table (with its provider's when several are shown). */
  keyName: (key: KeyRef) => string;
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
    () => ({ type: 'bar', stacked: true, timeline: true, labels, series: tokens.map((s, i) => ({ name: s.name, values: s.values, tone: i })) }),
    [labels, tokens],
  );
  const activitySpec = useMemo<ChartSpec>(
    () => ({
      type: 'line',
      timeline: true,
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

  const share = (ratio: number | null) => (ratio === null ? '—' : formatShare(ratio, intlTag));
  const bucketColumn = { key: 'bucket', label: bucketHeader };
  const tokensTable: ChartTable = {
    columns: [bucketColumn, ...tokens.map((s) => ({ key: s.key, label: s.name })), { key: 'total', label: t('usagePage.total') }],
    rows: tokenRows.map((i) => ({ key: starts[i], header: labels[i], cells: [...tokens.map((s) => count(s.values[i])), count(tokenTotals[i])] })),
    empty: t('usagePage.tokensNone'),
  };
  const activityTable: ChartTable = {
    columns: [
      bucketColumn,
      { key: 'requests', label: t('usagePage.requests') },
      { key: 'rateLimited', label: t('usagePage.col429') },
      { key: 'failovers', label: t('usagePage.failovers') },
    ],
    rows: activityRows.map((i) => ({
      key: starts[i],
      header: labels[i],
      cells: [count(sums.requests[i]), count(sums.rateLimited[i]), count(sums.failovers[i])],
    })),
    empty: t('usagePage.activityNone'),
  };
  const cacheTable: ChartTable = {
    columns: [
      { key: 'provider', label: t('usagePage.colProvider') },
      { key: 'cached', label: t('usagePage.colCached') },
      { key: 'input', label: t('usagePage.colInput') },
      { key: 'share', label: t('usagePage.cacheHitShort') },
    ],
    rows: caches.map((c) => ({ key: c.providerId, header: providerName(c.providerId), cells: [count(c.cachedTokens), count(c.inputTokens), share(c.ratio)] })),
  };

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
        table={tokensTable}
        testId="usage-chart-tokens"
      />
      <UsageChart
        title={activityTitle}
        description={t('usagePage.activitySummary', {
          requests: count(sum(sums.requests)),
          rateLimited: count(sum(sums.rateLimited)),
          failovers: count(sum(sums.failovers)),
        })}
        spec={activitySpec}
        theme={theme}
        table={activityTable}
        testId="usage-chart-activity"
      />
      <UsageChart
        title={cacheTitle}
        description={
          caches.length === 0
            ? t('usagePage.cacheNone')
            : t('usagePage.cacheSummary', {
                providers: caches.map((c) => `${providerName(c.providerId)} ${share(c.ratio)}`).join(t('list.separator')),
              })
        }
        spec={cacheSpec}
        theme={theme}
        table={cacheTable}
        testId="usage-chart-cache"
      />
    </div>
  );
}
