import { useCallback, useMemo, useReducer } from 'react';
import type { Message } from '../../ipc/bindings';
import { chatApi } from '../../ipc/chat';
import { IpcError } from '../../ipc/client';
import { conversationReducer, emptyConversation, type Conversation, type ConversationAction } from './conversation';

type State = Record<string, Conversation>;

function reducer(state: State, { chatId, action }: { chatId: string; action: ConversationAction }): State {
  return { ...state, [chatId]: conversationReducer(state[chatId] ?? emptyConversation, action) };
}

/**
 * Every conversation opened in this session, by chat id. A reply keeps streaming into its own
 * conversation while another chat is shown, so switching back finds it where it is.
 */
export function useConversations(onActivity: () => void) {
  const [state, dispatch] = useReducer(reducer, {});

  const load = useCallback(async (chatId: string) => {
    const messages = await chatApi.getMessages(chatId);
    dispatch({ chatId, action: { type: 'loaded', messages } });
  }, []);

  /** Sends `content` (or, without it, retries the last message). Rejects only when nothing was sent. */
  const send = useCallback(
    async (chatId: string, content?: string): Promise<Message> => {
      dispatch({ chatId, action: { type: 'sending', retry: content === undefined } });
      try {
        const message = await chatApi.send({ chatId, content }, (event) => {
          dispatch({ chatId, action: { type: 'event', event, receivedAt: Date.now() } });
          if (event.type === 'userMessage') onActivity(); // the chat moved to the top, maybe retitled
        });
        // The answer and the channel's last event may arrive in either order; folding twice is harmless.
        dispatch({ chatId, action: { type: 'event', event: { type: 'finished', message }, receivedAt: Date.now() } });
        onActivity();
        return message;
      } catch (error) {
        dispatch({ chatId, action: { type: 'rejected' } });
        throw error instanceof IpcError ? error : new IpcError('internal', String(error));
      }
    },
    [onActivity],
  );

  const stop = useCallback(async (chatId: string) => {
    dispatch({ chatId, action: { type: 'stopping' } });
    await chatApi.stop(chatId);
  }, []);

  const conversation = useCallback((chatId: string | null): Conversation => (chatId && state[chatId]) || emptyConversation, [state]);

  return useMemo(() => ({ conversation, load, send, stop }), [conversation, load, send, stop]);
}
