import { useCallback, useEffect, useMemo, useState } from 'react';
import { useLatestLoad } from '../../hooks/useLatestLoad';
import type { Chat, CreateChatArgs } from '../../ipc/bindings';
import { type ChatChanges, chatApi } from '../../ipc/chat';
import type { IpcError } from '../../ipc/client';

export type ChatsLoad =
  | { kind: 'loading' }
  | { kind: 'failed'; error: IpcError }
  | { kind: 'loaded'; chats: Chat[] };

/** The chats, most recently active first, and the writes on them; each write reloads the list. */
export function useChats() {
  const [state, setState] = useState<ChatsLoad>({ kind: 'loading' });
  const loads = useLatestLoad();

  const reload = useCallback(async () => {
    await loads.run(chatApi.list, {
      loaded: (chats) => setState({ kind: 'loaded', chats }),
      failed: (error) => setState((s) => (s.kind === 'loaded' ? s : { kind: 'failed', error })),
    });
  }, [loads]);

  useEffect(() => {
    void reload();
  }, [reload]);

  const actions = useMemo(
    () => ({
      create: async (chat: CreateChatArgs) => {
        const created = await chatApi.create(chat);
        await reload();
        return created;
      },
      update: async (id: string, changes: ChatChanges) => {
        const updated = await chatApi.update(id, changes);
        await reload();
        return updated;
      },
      remove: async (id: string) => {
        await chatApi.delete(id);
        await reload();
      },
      reload,
    }),
    [reload],
  );

  return { state, actions };
}
