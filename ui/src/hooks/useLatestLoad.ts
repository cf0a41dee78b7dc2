import { useEffect, useMemo, useRef } from 'react';
import { IpcError } from '../ipc/client';

/** What to do with a load's outcome, if it is still the latest when it comes. */
export interface LoadOutcome<T> {
  loaded: (value: T) => void;
  failed: (error: IpcError) => void;
}

/**
 * "The latest load wins": loads may answer in any order, and only the one started last is
 * applied. An answer overtaken by a newer load, or arriving after `cancel()` or after the
 * component unmounted, is dropped, so an old answer never overwrites a newer one.
 *
 * Loads are numbered in the order they start: `run` resolves with its load's number once the load
 * has settled (applied or dropped), and a load started after `lastNumber()` was read has a larger
 * one, so a caller can wait for a load that started after some moment.
 */
export function useLatestLoad() {
  const latest = useRef(0);
  useEffect(
    () => () => {
      latest.current += 1;
    },
    [],
  );

  return useMemo(
    () => ({
      run: async <T>(load: () => Promise<T>, outcome: LoadOutcome<T>): Promise<number> => {
        const mine = ++latest.current;
        let settled: { ok: true; value: T } | { ok: false; error: IpcError };
        try {
          settled = { ok: true, value: await load() };
        } catch (error) {
          settled = { ok: false, error: error instanceof IpcError ? error : new IpcError('internal', String(error)) };
        }
        if (mine === latest.current) {
          if (settled.ok) outcome.loaded(settled.value);
          else outcome.failed(settled.error);
        }
        return mine;
      },
      /** Drops every load still in flight (e.g. its answers are for another provider). */
      cancel: () => {
        latest.current += 1;
      },
      /** The newest number handed out; every load started from now on gets a larger one. */
      lastNumber: () => latest.current,
    }),
    [],
  );
}
