import { useCallback, useEffect, useState } from 'react';
import { useLatestLoad } from '../../hooks/useLatestLoad';
import type { Settings, UpdateSettingsArgs } from '../../ipc/bindings';
import type { IpcError } from '../../ipc/client';
import { settingsApi } from '../../ipc/settings';

export type SettingsLoad = { kind: 'loading' } | { kind: 'failed'; error: IpcError } | { kind: 'loaded'; settings: Settings };

/** The app's preferences kept by the backend (`settings:get`); an update shows what was stored. */
export function useAppSettings() {
  const [state, setState] = useState<SettingsLoad>({ kind: 'loading' });
  const loads = useLatestLoad();

  const reload = useCallback(() => {
    setState((s) => (s.kind === 'failed' ? { kind: 'loading' } : s));
    void loads.run(settingsApi.get, {
      loaded: (settings) => setState({ kind: 'loaded', settings }),
      failed: (error) => setState({ kind: 'failed', error }),
    });
  }, [loads]);

  useEffect(() => reload(), [reload]);

  /** Stores `changes`; rejects with the backend's error and leaves the shown settings as they were. */
  const update = useCallback(
    async (changes: UpdateSettingsArgs) => {
      const settings = await settingsApi.update(changes);
      loads.cancel(); // a load still in flight read the old values
      setState({ kind: 'loaded', settings });
      return settings;
    },
    [loads],
  );

  return { state, reload, update };
}
