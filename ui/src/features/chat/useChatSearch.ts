import { useEffect, useState } from 'react';
import { useLatestLoad } from '../../hooks/useLatestLoad';
import type { ChatSearchResult } from '../../ipc/bindings';
import type { IpcError } from '../../ipc/client';
import { chatApi } from '../../ipc/chat';

export type SearchState =
  | { kind: 'off' }
  | { kind: 'searching'; results: ChatSearchResult[] | null }
  | { kind: 'done'; results: ChatSearchResult[] }
  | { kind: 'failed'; error: IpcError };

/** How long typing may pause before the search runs. */
const DEBOUNCE_MS = 150;

/**
 * Chats whose title or messages hold `query` (`chat:search`), asked once typing pauses; the
 * latest answer wins. An empty query searches nothing. `version` asks again (the chats changed).
 */
export function useChatSearch(query: string, version: unknown): SearchState {
  const [state, setState] = useState<SearchState>({ kind: 'off' });
  const loads = useLatestLoad();
  const text = query.trim();

  // biome-ignore lint/correctness/useExhaustiveDependencies: `version` is what re-runs the search when the chats change
  useEffect(() => {
    if (text === '') {
      loads.cancel();
      setState({ kind: 'off' });
      return;
    }
    setState((s) => ({ kind: 'searching', results: s.kind === 'done' ? s.results : s.kind === 'searching' ? s.results : null }));
    const timer = setTimeout(() => {
      void loads.run(() => chatApi.search(text), {
        loaded: (results) => setState({ kind: 'done', results }),
        failed: (error) => setState({ kind: 'failed', error }),
      });
    }, DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [text, loads, version]);

  return state;
}
