import { useMemo } from 'react';
import { type LiveLoad, useLiveStatus } from '../../../hooks/useLiveStatus';
import type { Route, RouteInput } from '../../../ipc/bindings';
import { localApiApi } from '../../../ipc/localApi';

export type RoutesLoad = LiveLoad<Route[]>;

/** How often the routes' states (a provider's keys may change elsewhere) are read again. */
export const ROUTES_POLL_MS = 15_000;

/**
 * The local API's routes (`localApi:getRoutes`), read again after every write to a provider or its
 * keys (a route's provider may gain or lose its last usable key). `save` replaces the list (an
 * add, an edit, a move, a delete) and shows what the backend kept; a refused list rejects and
 * changes nothing shown.
 */
export function useRoutes(pollMs = ROUTES_POLL_MS) {
  const { state, retry, change } = useLiveStatus(localApiApi.getRoutes, { pollMs, changedOn: 'llmConfig:changed' });
  return useMemo(
    () => ({
      state,
      retry,
      save: (routes: RouteInput[]): Promise<Route[]> =>
        change(async () => {
          const saved = await localApiApi.setRoutes(routes);
          return { status: saved, answer: saved };
        }),
      test: (route: RouteInput) => localApiApi.testRoute(route),
    }),
    [state, retry, change],
  );
}
