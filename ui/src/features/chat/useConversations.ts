import { useCallback, useEffect, useMemo, useReducer, useRef } from 'react';
import type { Attachment, ChatEvent, Message, SendRequest } from '../../ipc/bindings';
import { chatApi } from '../../ipc/chat';
import { IpcError } from '../../ipc/client';
import { conversationReducer, emptyConversation, type Conversation, type ConversationAction, type Turn } from './conversation';

type State = Record<string, Conversation>;

function reducer(state: State, { chatId, action }: { chatId: string; action: ConversationAction }): State {
  return { ...state, [chatId]: conversationReducer(state[chatId] ?? emptyConversation, action) };
}

/** What a send carries: a new message, an edit of the last one, or nothing (answer it again). */
export type Outgoing = { turn: 'ask'; content: string; attachments?: Attachment[] } | { turn: 'edit'; content: string } | { turn: 'again' };

/** The `chat:send` request of an outgoing turn: attachments by id and name; a message of attachments alone has no text. */
function requestOf(chatId: string, outgoing: Outgoing): SendRequest {
  if (outgoing.turn === 'again') return { chatId };
  if (outgoing.turn === 'edit') return { chatId, content: outgoing.content, edit: true };
  const attachments = (outgoing.attachments ?? []).map(({ id, name }) => ({ id, name }));
  const content = outgoing.content.trim() === '' ? undefined : outgoing.content;
  return attachments.length > 0 ? { chatId, content, attachments } : { chatId, content };
}

/** The next frame, or a timer where there are no frames (a hidden window, tests without them). */
const nextFrame: (run: () => void) => void = (run) =>
  typeof requestAnimationFrame === 'function' ? void requestAnimationFrame(run) : void setTimeout(run, 16);

/**
 * Every conversation opened in this session, by chat id. A reply keeps streaming into its own
 * conversation while another chat is shown, so switching back finds it where it is.
 *
 * Streamed text is applied once per animation frame: a provider may send hundreds of small
 * deltas a second, and rendering each would only redo work no one can see.
 */
export function useConversations(onActivity: () => void) {
  const [state, dispatch] = useReducer(reducer, {});
  /** Text received but not yet rendered, by chat. */
  const pending = useRef(new Map<string, string>());
  const scheduled = useRef(false);
  const live = useRef(true);
  useEffect(() => {
    live.current = true;
    return () => {
      live.current = false;
    };
  }, []);

  const flush = useCallback(() => {
    scheduled.current = false;
    const texts = [...pending.current];
    pending.current.clear();
    for (const [chatId, text] of texts) {
      dispatch({ chatId, action: { type: 'event', event: { type: 'delta', text }, receivedAt: Date.now() } });
    }
  }, []);

  /** Deltas wait for the next frame; any other event first lets the waiting text in, in order. */
  const receive = useCallback(
    (chatId: string, event: ChatEvent) => {
      if (event.type === 'delta') {
        pending.current.set(chatId, (pending.current.get(chatId) ?? '') + event.text);
        if (!scheduled.current) {
          scheduled.current = true;
          nextFrame(() => live.current && flush());
        }
        return;
      }
      if (pending.current.has(chatId)) flush();
      dispatch({ chatId, action: { type: 'event', event, receivedAt: Date.now() } });
    },
    [flush],
  );

  const load = useCallback(async (chatId: string) => {
    const messages = await chatApi.getMessages(chatId);
    dispatch({ chatId, action: { type: 'loaded', messages } });
  }, []);

  /** Sends a message, an edit of the last one, or answers it again. Rejects only when nothing was sent. */
  const send = useCallback(
    async (chatId: string, outgoing: Outgoing): Promise<Message> => {
      const turn: Turn = outgoing.turn;
      dispatch({ chatId, action: { type: 'sending', turn } });
      const request = requestOf(chatId, outgoing);
      try {
        const message = await chatApi.send(request, (event) => {
          receive(chatId, event);
          if (event.type === 'userMessage') onActivity(); // the chat moved to the top, maybe retitled
        });
        // The answer and the channel's last event may arrive in either order; folding twice is harmless.
        receive(chatId, { type: 'finished', message });
        onActivity();
        return message;
      } catch (error) {
        dispatch({ chatId, action: { type: 'rejected' } });
        throw error instanceof IpcError ? error : new IpcError('internal', String(error));
      }
    },
    [onActivity, receive],
  );

  const stop = useCallback(async (chatId: string) => {
    dispatch({ chatId, action: { type: 'stopping' } });
    await chatApi.stop(chatId);
  }, []);

  const conversation = useCallback((chatId: string | null): Conversation => (chatId && state[chatId]) || emptyConversation, [state]);

  return useMemo(() => ({ conversation, load, send, stop }), [conversation, load, send, stop]);
}
