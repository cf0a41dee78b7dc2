import { useCallback, useEffect, useMemo, useState } from 'react';
import { useLatestLoad } from '../../hooks/useLatestLoad';
import type { ModelList } from '../../ipc/bindings';
import type { IpcError } from '../../ipc/client';
import { llmConfigApi } from '../../ipc/llmConfig';

export type ModelListState =
  | { kind: 'idle' }
  | { kind: 'loading'; list: ModelList | null }
  | { kind: 'loaded'; list: ModelList }
  /** `list`: what was listed before the failed refresh, still worth offering. */
  | { kind: 'failed'; error: IpcError; list: ModelList | null };

/** Asks a models endpoint: `refresh` to ask the provider again rather than what was kept. */
export type ModelListLoad = (refresh: boolean) => Promise<ModelList>;

/**
 * The models `providerId`'s models endpoint lists (`llmConfig:listModels`), asked once when the
 * provider is chosen (the backend answers from what it fetched before, if anything) and again,
 * from the provider, on `refresh`. Null asks nothing.
 */
export function useModelList(providerId: string | null) {
  const load = useMemo<ModelListLoad | null>(() => (providerId ? (refresh) => llmConfigApi.listModels(providerId, refresh) : null), [providerId]);
  return useModelListFrom(load);
}

/** The models `load` answers, asked once whenever `load` changes and again on `refresh`; null asks nothing. */
export function useModelListFrom(load: ModelListLoad | null) {
  const [state, setState] = useState<ModelListState>({ kind: 'idle' });
  const loads = useLatestLoad();

  const fetch = useCallback(
    (refresh: boolean) => {
      if (!load) return;
      setState((s) => ({ kind: 'loading', list: s.kind === 'idle' ? null : s.list }));
      void loads.run(() => load(refresh), {
        loaded: (list) => setState({ kind: 'loaded', list }),
        failed: (error) => setState((s) => ({ kind: 'failed', error, list: s.kind === 'idle' ? null : s.list })),
      });
    },
    [load, loads],
  );

  useEffect(() => {
    setState({ kind: 'idle' });
    if (load) fetch(false);
    else loads.cancel();
  }, [load, fetch, loads]);

  const refresh = useCallback(() => fetch(true), [fetch]);
  const listed = state.kind === 'idle' ? [] : (state.list?.models ?? []);
  return { state, listed, refresh };
}
