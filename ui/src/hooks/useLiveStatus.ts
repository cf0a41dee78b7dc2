import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { Events } from '../ipc/bindings';
import { type IpcError, listen } from '../ipc/client';
import { useLatestLoad } from './useLatestLoad';

export type LiveLoad<S> = { kind: 'loading' } | { kind: 'failed'; error: IpcError } | { kind: 'loaded'; status: S };

export interface LiveStatusOptions {
  /** How often the status is read again while the window is visible. */
  pollMs: number;
  /** A backend event that says the status changed: read again at once. */
  changedOn?: keyof Events;
}

/**
 * A status the backend keeps that moves on its own (live counts, a connection's state): read at
 * once, again every `pollMs` while the window is visible, at once when the window comes back to
 * the front and on every `changedOn` event. A failed read keeps what was shown; only a first load
 * that fails is an error (`retry` reads again).
 *
 * Changes go one at a time, in the order asked (a field saved as focus leaves it, then the switch
 * that took the focus): `change(run)` queues `run`, whose answer replaces the shown status and
 * drops any read still in flight, which saw the state before. `run` answers the new status and
 * what the caller gets back.
 */
export function useLiveStatus<S>(read: () => Promise<S>, { pollMs, changedOn }: LiveStatusOptions) {
  const [state, setState] = useState<LiveLoad<S>>({ kind: 'loading' });
  const loads = useLatestLoad();
  const queue = useRef<Promise<unknown>>(Promise.resolve());

  const refresh = useCallback(() => {
    void loads.run(read, {
      loaded: (status) => setState({ kind: 'loaded', status }),
      failed: (error) => setState((s) => (s.kind === 'loaded' ? s : { kind: 'failed', error })),
    });
  }, [loads, read]);

  const retry = useCallback(() => {
    setState((s) => (s.kind === 'failed' ? { kind: 'loading' } : s));
    refresh();
  }, [refresh]);

  useEffect(() => {
    refresh();
    let timer: ReturnType<typeof setInterval> | undefined;
    const start = () => {
      if (timer === undefined) timer = setInterval(refresh, pollMs);
    };
    const stop = () => {
      clearInterval(timer);
      timer = undefined;
    };
    const onVisibility = () => {
      if (document.visibilityState === 'hidden') return stop();
      refresh();
      start();
    };
    if (document.visibilityState !== 'hidden') start();
    document.addEventListener('visibilitychange', onVisibility);
    window.addEventListener('focus', refresh);
    const unlisten = changedOn ? listen(changedOn, () => refresh()) : () => {};
    return () => {
      stop();
      unlisten();
      document.removeEventListener('visibilitychange', onVisibility);
      window.removeEventListener('focus', refresh);
    };
  }, [refresh, pollMs, changedOn]);

  return useMemo(() => {
    const change = <T>(run: () => Promise<{ status: S; answer: T }>): Promise<T> => {
      const next = queue.current
        .catch(() => undefined)
        .then(async () => {
          const { status, answer } = await run();
          loads.cancel();
          setState({ kind: 'loaded', status });
          return answer;
        });
      queue.current = next;
      return next;
    };
    return { state, retry, change };
  }, [state, retry, loads]);
}
