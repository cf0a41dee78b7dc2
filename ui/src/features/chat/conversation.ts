import { clockOffset } from '../../clock';
import type { ChatEvent, FailoverReason, Message } from '../../ipc/bindings';

/**
 * A conversation as the page shows it: the saved messages, the reply being streamed, and the
 * quiet notices about keys. Pure: every change is an {@link ConversationAction} folded by
 * {@link conversationReducer}, so streaming, failover and stop are tested without a window.
 */

/** Something the pool did to a reply that the user may want to know, shown quietly beside it. */
export type Notice =
  /** The chat moved to another key (its old one cooled down, was disabled or deleted): the prompt cache starts cold. */
  | { kind: 'rebound'; keyLabel: string }
  /**
   * A key was refused (rate-limited, rejected, or out of credit) and the reply was retried on
   * `nextKeyLabel`; `sameKey` when that was the same key again, after a wait (not a failover).
   */
  | { kind: 'failover'; keyLabel: string; status: number; reason: FailoverReason; message: string; nextKeyLabel: string | null; sameKey?: boolean };

/**
 * Every key is spent, cooling or busy, and the reply waits for one. Times are the backend's;
 * `offset` (backend clock minus UI clock when the event came) lets the page count them down.
 */
export interface Waiting {
  /** When a key frees up by itself; null when the reply waits for a request in flight to end. */
  until: number | null;
  /** The wait never goes past this; then the reply fails with `no_available_key`. */
  deadline: number;
  offset: number;
}

/** The reply being written. */
export interface Streaming {
  text: string;
  /** The key of the current attempt; null until the first `keySelected`. */
  keyLabel: string | null;
  /**
   * The pool key of the current attempt (null: none yet, the provider's own key, or none at
   * all); after a failover still the refused key's, until the next attempt names its own.
   */
  keyId?: string | null;
  providerLevel: boolean;
  /** The attempt goes without a key (a local server with an empty pool). */
  keyless?: boolean;
  notices: Notice[];
  /** Set while the reply waits for a free key; the next attempt (`keySelected`) ends it. */
  waiting: Waiting | null;
  /** The user pressed Stop; the backend is ending the reply. */
  stopping: boolean;
  turn: Turn;
}

/**
 * What a send does: `ask` adds a user message; `again` answers the last user message again
 * (retry a failed reply, regenerate a good one: the replies after it are replaced); `edit`
 * rewrites the last user message and drops everything after it.
 */
export type Turn = 'ask' | 'again' | 'edit';

export type Conversation = {
  messages: Message[];
  /** False until the messages have loaded once. */
  loaded: boolean;
  streaming: Streaming | null;
  /** Notices of finished replies, by assistant message id (they live for this session only). */
  notices: Record<string, Notice[]>;
};

export type ConversationAction =
  | { type: 'loaded'; messages: Message[] }
  /** A send started. */
  | { type: 'sending'; turn: Turn }
  /** `receivedAt`: the UI's clock when the event arrived, to count the backend's times down. */
  | { type: 'event'; event: ChatEvent; receivedAt: number }
  | { type: 'stopping' }
  /** The send was refused before anything streamed (e.g. a reply already running). */
  | { type: 'rejected' };

export const emptyConversation: Conversation = { messages: [], loaded: false, streaming: null, notices: {} };

function withMessage(messages: Message[], message: Message): Message[] {
  return messages.some((m) => m.id === message.id) ? messages.map((m) => (m.id === message.id ? message : m)) : [...messages, message];
}

/**
 * Up to the last user message: answering it again (or editing it) replaces what came after it,
 * as the backend does.
 */
export function throughLastQuestion(messages: Message[]): Message[] {
  let end = messages.length;
  while (end > 0 && messages[end - 1].role === 'assistant') end -= 1;
  return messages.slice(0, end);
}

export function conversationReducer(state: Conversation, action: ConversationAction): Conversation {
  switch (action.type) {
    case 'loaded': {
      // A reply still streaming keeps streaming; the loaded list is the truth up to now.
      return { ...state, loaded: true, messages: action.messages };
    }
    case 'sending':
      return {
        ...state,
        messages: action.turn === 'ask' ? state.messages : throughLastQuestion(state.messages),
        streaming: { text: '', keyLabel: null, providerLevel: false, notices: [], waiting: null, stopping: false, turn: action.turn },
      };
    case 'stopping':
      return state.streaming ? { ...state, streaming: { ...state.streaming, stopping: true } } : state;
    case 'rejected':
      return { ...state, streaming: null };
    case 'event':
      return foldEvent(state, action.event, action.receivedAt);
  }
}

function foldEvent(state: Conversation, event: ChatEvent, receivedAt: number): Conversation {
  if (event.type === 'userMessage') return { ...state, messages: withMessage(state.messages, event.message) };
  if (event.type === 'finished') {
    const { message } = event;
    const streaming = state.streaming;
    return {
      ...state,
      messages: withMessage(state.messages, message),
      streaming: null,
      notices: streaming && streaming.notices.length > 0 ? { ...state.notices, [message.id]: streaming.notices } : state.notices,
    };
  }
  const streaming = state.streaming;
  if (!streaming) return state; // an event after the reply ended (or from another window): nothing to fold into
  switch (event.type) {
    case 'keySelected': {
      const notices = [...streaming.notices];
      const last = notices[notices.length - 1];
      if (last?.kind === 'failover' && last.nextKeyLabel === null) {
        // The failover notice already says which key took over; the cold cache goes without saying.
        // The same pool key again means the reply waited for it, it did not move to another.
        const sameKey = event.keyId !== null && streaming.keyId === event.keyId;
        notices[notices.length - 1] = { ...last, nextKeyLabel: event.keyLabel, ...(sameKey ? { sameKey } : {}) };
      } else if (event.rebound) {
        notices.push({ kind: 'rebound', keyLabel: event.keyLabel });
      }
      return {
        ...state,
        streaming: { ...streaming, keyLabel: event.keyLabel, keyId: event.keyId, providerLevel: event.providerLevel, keyless: event.keyless, notices, waiting: null },
      };
    }
    case 'failover':
      return {
        ...state,
        streaming: {
          ...streaming,
          notices: [
            ...streaming.notices,
            { kind: 'failover', keyLabel: event.keyLabel, status: event.status, reason: event.reason, message: event.message, nextKeyLabel: null },
          ],
        },
      };
    case 'delta':
      return { ...state, streaming: { ...streaming, text: streaming.text + event.text, waiting: null } };
    case 'waiting':
      return {
        ...state,
        streaming: { ...streaming, waiting: { until: event.until, deadline: event.deadline, offset: clockOffset(event.now, receivedAt) } },
      };
  }
}

/** Whether a saved reply was answered with the provider-level key (the backend records it). */
export function answeredByProviderKey(message: Message): boolean {
  return message.providerKey;
}

/** The failed reply that Retry would replace: the last message, when it is a failed reply. */
export function retryable(conversation: Conversation): Message | null {
  const last = conversation.messages[conversation.messages.length - 1];
  return !conversation.streaming && last?.role === 'assistant' && last.status === 'error' ? last : null;
}

/** The reply Regenerate would replace: the last message, when it is a finished (or stopped) reply. */
export function regenerable(conversation: Conversation): Message | null {
  const last = conversation.messages[conversation.messages.length - 1];
  return !conversation.streaming && last?.role === 'assistant' && last.status !== 'error' ? last : null;
}

/** The user message Edit would rewrite: the last one, when no reply is being written. */
export function editable(conversation: Conversation): Message | null {
  if (conversation.streaming) return null;
  for (let i = conversation.messages.length - 1; i >= 0; i -= 1) {
    if (conversation.messages[i].role === 'user') return conversation.messages[i];
  }
  return null;
}
