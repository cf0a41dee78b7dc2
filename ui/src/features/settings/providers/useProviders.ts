import { useCallback, useEffect, useRef, useState } from 'react';
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
  const seq = useRef(0);

  const reload = useCallback(() => {
    const mine = ++seq.current;
    llmConfigApi.getProviders().then(
      (providers) => mine === seq.current && setState({ kind: 'loaded', providers }),
      (error: IpcError) => mine === seq.current && setState((s) => (s.kind === 'loaded' ? s : { kind: 'failed', error })),
    );
  }, []);

  useEffect(() => {
    reload();
    const stop = listen('llmConfig:changed', () => reload());
    return () => {
      stop();
      seq.current += 1;
    };
  }, [reload]);

  return { state, reload };
}
