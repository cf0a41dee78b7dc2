import { useCallback, useEffect, useMemo, useState } from 'react';
import type { Provider } from '../ipc/bindings';
import { type IpcError, listen } from '../ipc/client';
import { llmConfigApi } from '../ipc/llmConfig';
import { useLatestLoad } from './useLatestLoad';

export type ProvidersLoad =
  | { kind: 'loading' }
  | { kind: 'failed'; error: IpcError }
  | { kind: 'loaded'; providers: Provider[] };

/**
 * The providers in display order, for every page that shows or names them; read again after
 * every write to a provider or its keys (`llmConfig:changed`: names, models and key counts
 * change). `providers` is the list, empty until it is read (or when it cannot be), for pages
 * that only name them; `state` says which.
 */
export function useProviders(): { state: ProvidersLoad; providers: Provider[]; reload: () => void } {
  const [state, setState] = useState<ProvidersLoad>({ kind: 'loading' });
  const loads = useLatestLoad();

  const reload = useCallback(() => {
    void loads.run(llmConfigApi.getProviders, {
      loaded: (providers) => setState({ kind: 'loaded', providers }),
      failed: (error) => setState((s) => (s.kind === 'loaded' ? s : { kind: 'failed', error })),
    });
  }, [loads]);

  useEffect(() => {
    reload();
    return listen('llmConfig:changed', () => reload());
  }, [reload]);

  const providers = useMemo(() => (state.kind === 'loaded' ? state.providers : []), [state]);
  return { state, providers, reload };
}
