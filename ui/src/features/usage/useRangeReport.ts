import { useEffect, useState } from 'react';
import type { UsageRange } from './usageRange';

/** A report of the page's range: loading, failed (the last loaded one stays shown), or loaded. */
export type RangeLoad<T> = { kind: 'loading' } | { kind: 'failed'; error: unknown } | { kind: 'loaded'; report: T };

/**
 * Reads `read` for the range, again when the range changes or `refresh` does; an answer for a
 * range left behind is dropped, and a failure after a success keeps what was shown.
 */
export function useRangeReport<T>(read: (range: { from: number; to: number }) => Promise<T>, range: Pick<UsageRange, 'from' | 'to'>, refresh: unknown): RangeLoad<T> {
  const [load, setLoad] = useState<RangeLoad<T>>({ kind: 'loading' });
  // biome-ignore lint/correctness/useExhaustiveDependencies: `refresh` is the reason to read again
  useEffect(() => {
    let live = true;
    read({ from: range.from, to: range.to }).then(
      (report) => live && setLoad({ kind: 'loaded', report }),
      (error) => live && setLoad((l) => (l.kind === 'loaded' ? l : { kind: 'failed', error })),
    );
    return () => {
      live = false;
    };
  }, [read, range.from, range.to, refresh]);
  return load;
}
