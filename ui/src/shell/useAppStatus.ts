import { useEffect, useState } from 'react';
import type { AppStatus } from '../ipc/bindings';
import { appApi } from '../ipc/app';
import type { IpcError } from '../ipc/client';

export type AppStatusState =
  | { kind: 'loading' }
  | { kind: 'loaded'; status: AppStatus }
  | { kind: 'unreachable'; error: IpcError };

/** Asks the backend once, at start, whether it is ready (the database opened). */
export function useAppStatus(): AppStatusState {
  const [state, setState] = useState<AppStatusState>({ kind: 'loading' });
  useEffect(() => {
    let live = true;
    appApi.getStatus().then(
      (status) => live && setState({ kind: 'loaded', status }),
      (error: IpcError) => live && setState({ kind: 'unreachable', error }),
    );
    return () => {
      live = false;
    };
  }, []);
  return state;
}
