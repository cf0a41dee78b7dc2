import { useEffect, useState } from 'react';
import type { AppStatus } from '../ipc/bindings';
import { appApi } from '../ipc/app';
import type { IpcError } from '../ipc/client';
import { handedFirstScreen } from '../firstScreen';
import { markStartup } from '../startupMarks';

export type AppStatusState =
  | { kind: 'loading' }
  | { kind: 'loaded'; status: AppStatus }
  | { kind: 'unreachable'; error: IpcError };

/**
 * Asks the backend once, at start, whether it is ready (the database opened), unless the window
 * handed the answer over with the page (`handedFirstScreen`).
 */
export function useAppStatus(): AppStatusState {
  const [state, setState] = useState<AppStatusState>(() => {
    const status = handedFirstScreen()?.status;
    if (!status) return { kind: 'loading' };
    markStartup('status');
    return { kind: 'loaded', status };
  });
  useEffect(() => {
    if (handedFirstScreen()?.status) return;
    let live = true;
    appApi.getStatus().then(
      (status) => {
        markStartup('status');
        if (live) setState({ kind: 'loaded', status });
      },
      (error: IpcError) => live && setState({ kind: 'unreachable', error }),
    );
    return () => {
      live = false;
    };
  }, []);
  return state;
}
