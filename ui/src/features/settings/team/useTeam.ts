import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useLatestLoad } from '../../../hooks/useLatestLoad';
import type { TeamStatus } from '../../../ipc/bindings';
import { listen, type IpcError } from '../../../ipc/client';
import { teamApi } from '../../../ipc/team';
import type { TeamJoin } from './teamForm';

export type TeamLoad = { kind: 'loading' } | { kind: 'failed'; error: IpcError } | { kind: 'loaded'; status: TeamStatus };

/** How often the status is read while the section is shown (members and "last change" move on their own). */
export const POLL_MS = 2000;

/**
 * The team's status (`team:getStatus`): read at once, again on every `team:changed` and every
 * `pollMs` while the window is visible. Connect and disconnect go one at a time; what each
 * answers replaces the shown status.
 */
export function useTeam(pollMs = POLL_MS) {
  const [state, setState] = useState<TeamLoad>({ kind: 'loading' });
  const loads = useLatestLoad();
  const queue = useRef<Promise<unknown>>(Promise.resolve());

  const refresh = useCallback(() => {
    void loads.run(teamApi.getStatus, {
      loaded: (status) => setState({ kind: 'loaded', status }),
      failed: (error) => setState((s) => (s.kind === 'loaded' ? s : { kind: 'failed', error })),
    });
  }, [loads]);

  const retry = useCallback(() => {
    setState((s) => (s.kind === 'failed' ? { kind: 'loading' } : s));
    refresh();
  }, [refresh]);

  useEffect(() => {
    refresh();
    const stop = listen('team:changed', refresh);
    const timer = setInterval(() => {
      if (document.visibilityState !== 'hidden') refresh();
    }, pollMs);
    return () => {
      stop();
      clearInterval(timer);
    };
  }, [refresh, pollMs]);

  return useMemo(() => {
    const run = (change: () => Promise<TeamStatus>) => {
      const next = queue.current
        .catch(() => undefined)
        .then(async () => {
          const status = await change();
          loads.cancel(); // a status read still in flight saw the state before
          setState({ kind: 'loaded', status });
          return status;
        });
      queue.current = next;
      return next;
    };
    return {
      state,
      retry,
      connect: (join: TeamJoin) => run(() => teamApi.connect(join.redisUrl, join.team, join.secret)),
      disconnect: () => run(teamApi.disconnect),
      generateSecret: async () => (await teamApi.generateSecret()).secret,
    };
  }, [state, retry, loads]);
}
