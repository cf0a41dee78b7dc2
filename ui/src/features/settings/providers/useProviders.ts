import { useCallback, useEffect, useState } from 'react';
import { useLatestLoad } from '../../../hooks/useLatestLoad';
import type { Provider } from '../../../ipc/bindings';
import { type IpcError, listen } from '../../../ipc/client';
import { llmConfigApi } from '../../../ipc/llmConfig';

export type ProvidersLoad =
  | { kind: 'loading' }
  | { kind: 'failed'; error: IpcError }
  | { kind: 'loaded'; providers: Provider[] };

/** The providers in display order; reloaded after any key write (their key counts change). */
export function useProviders(): { state: ProvidersLoad; reload: () => void } {
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

  return { state, reload };
}
