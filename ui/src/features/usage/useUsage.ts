import { useCallback, useEffect, useState } from 'react';
import { useLatestLoad } from '../../hooks/useLatestLoad';
import type { Price, UsageSeries, UsageSummary } from '../../ipc/bindings';
import type { IpcError } from '../../ipc/client';
import { usageApi } from '../../ipc/usage';
import { bucketsOf, type UsageRange } from './usageRange';

export interface UsageData {
  range: UsageRange;
  summary: UsageSummary;
  series: UsageSeries;
}

/** `updating`: a newer load runs (another range or provider) while the last answer is shown. */
export type UsageLoad = { kind: 'loading' } | { kind: 'failed'; error: IpcError } | { kind: 'loaded'; data: UsageData; updating: boolean };

/**
 * The ledger's summary and series for a range and a provider (all when undefined), read together
 * so the totals and the charts always show the same period. Loaded again when either changes or
 * `reload` is called (after a price change, for the costs); the latest load wins.
 */
export function useUsage(range: UsageRange, providerId: string | undefined) {
  const [state, setState] = useState<UsageLoad>({ kind: 'loading' });
  const loads = useLatestLoad();

  const reload = useCallback(() => {
    setState((s) => (s.kind === 'loaded' ? { ...s, updating: true } : { kind: 'loading' }));
    const { from, to } = range;
    // By the hour across a daylight-saving change, so the page can sum the hours into the user's days.
    const bucket = bucketsOf(range).series;
    void loads.run(
      () => Promise.all([usageApi.getSummary({ providerId, from, to }), usageApi.getSeries({ providerId, bucket, from, to })]),
      {
        loaded: ([summary, series]) => setState({ kind: 'loaded', data: { range, summary, series }, updating: false }),
        failed: (error) => setState({ kind: 'failed', error }),
      },
    );
  }, [loads, range, providerId]);

  useEffect(() => reload(), [reload]);

  return { state, reload };
}


export type PricesLoad = { kind: 'loading' } | { kind: 'failed'; error: IpcError } | { kind: 'loaded'; prices: Price[] };

/** The prices per model; `reload` after a change reads them again. */
export function usePrices() {
  const [state, setState] = useState<PricesLoad>({ kind: 'loading' });
  const loads = useLatestLoad();

  const reload = useCallback(
    () =>
      loads.run(usageApi.getPrices, {
        loaded: (prices) => setState({ kind: 'loaded', prices }),
        failed: (error) => setState((s) => (s.kind === 'loaded' ? s : { kind: 'failed', error })),
      }),
    [loads],
  );

  useEffect(() => {
    void reload();
  }, [reload]);

  return { state, reload };
}
