import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useLatestLoad } from '../../../hooks/useLatestLoad';
import type { LocalApiStatus } from '../../../ipc/bindings';
import type { IpcError } from '../../../ipc/client';
import { localApiApi } from '../../../ipc/localApi';

export type LocalApiLoad = { kind: 'loading' } | { kind: 'failed'; error: IpcError } | { kind: 'loaded'; status: LocalApiStatus };

/** How often the live counts are read while the section is shown and the window visible. */
export const POLL_MS = 2000;

/**
 * The local API's state (`localApi:getStatus`), read again every `pollMs` while the page is
 * visible and at once when the window comes back to the front, so the counts stay live.
 * Changes go one at a time, in the order asked (a port saved as focus leaves its field, then the
 * switch that took the focus), and what each answers replaces the shown state.
 */
export function useLocalApi(pollMs = POLL_MS) {
  const [state, setState] = useState<LocalApiLoad>({ kind: 'loading' });
  const loads = useLatestLoad();
  const queue = useRef<Promise<unknown>>(Promise.resolve());

  const refresh = useCallback(() => {
    void loads.run(localApiApi.getStatus, {
      loaded: (status) => setState({ kind: 'loaded', status }),
      // A failed poll keeps what was shown; only a first load that fails is an error.
      failed: (error) => setState((s) => (s.kind === 'loaded' ? s : { kind: 'failed', error })),
    });
  }, [loads]);

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
    return () => {
      stop();
      document.removeEventListener('visibilitychange', onVisibility);
      window.removeEventListener('focus', refresh);
    };
  }, [refresh, pollMs]);

  return useMemo(
    () => ({
      state,
      retry,
      /**
       * Turns the endpoint on or off (and moves it to `port`). Resolves the token when this was
       * the first time it was enabled (the only time it is given), else undefined.
       */
      configure(enabled: boolean, port?: number): Promise<string | undefined> {
        const run = queue.current
          .catch(() => undefined)
          .then(async () => {
            const { token, ...status } = await localApiApi.configure(enabled, port);
            loads.cancel(); // a status read still in flight saw the state before
            setState({ kind: 'loaded', status });
            return token;
          });
        queue.current = run;
        return run;
      },
      /** A new token (the old one stops working at once). */
      async regenerateToken(): Promise<string> {
        return (await localApiApi.regenerateToken()).token;
      },
    }),
    [state, retry, loads],
  );
}
