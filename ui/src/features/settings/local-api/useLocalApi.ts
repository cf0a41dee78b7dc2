import { useMemo } from 'react';
import { type LiveLoad, useLiveStatus } from '../../../hooks/useLiveStatus';
import type { LocalApiStatus } from '../../../ipc/bindings';
import { localApiApi } from '../../../ipc/localApi';

export type LocalApiLoad = LiveLoad<LocalApiStatus>;

/** How often the live counts are read while the section is shown and the window visible. */
export const POLL_MS = 2000;

/**
 * The local API's state (`localApi:getStatus`), read again every `pollMs` while the page is
 * visible and at once when the window comes back to the front, so the counts stay live.
 * Changes go one at a time, in the order asked (a port saved as focus leaves its field, then the
 * switch that took the focus), and what each answers replaces the shown state.
 */
export function useLocalApi(pollMs = POLL_MS) {
  const { state, retry, change } = useLiveStatus(localApiApi.getStatus, { pollMs });
  return useMemo(
    () => ({
      state,
      retry,
      /**
       * Turns the endpoint on or off (and moves it to `port`). Resolves the token when this was
       * the first time it was enabled (the only time it is given), else undefined.
       */
      configure(enabled: boolean, port?: number): Promise<string | undefined> {
        return change(async () => {
          const { token, ...status } = await localApiApi.configure(enabled, port);
          return { status, answer: token };
        });
      },
      /** A new token (the old one stops working at once). */
      async regenerateToken(): Promise<string> {
        return (await localApiApi.regenerateToken()).token;
      },
    }),
    [state, retry, change],
  );
}
