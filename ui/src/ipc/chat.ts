import { Channel } from '@tauri-apps/api/core';
import { call } from './client';
import { defined } from './llmConfig';

/** A conversation with one provider and model. `providerId` is null once its provider was deleted. */
export interface Chat {
  id: string;
  title: string;
  providerId: string | null;
  model: string;
  createdAt: number;
  updatedAt: number;
}

export type MessageStatus = 'complete' | 'stopped' | 'error';

export interface Message {
  id: string;
  chatId: string;
  role: 'user' | 'assistant';
  content: string;
  status: MessageStatus;
  /** Why the reply failed, for people; set when `status` is `error`. */
  error: string | null;
  /** An IPC error code, e.g. `no_available_key`. */
  errorCode: string | null;
  /** Which key answered: its label or its masked preview; `null` when none could. */
  keyLabel: string | null;
  /** Answered with the provider-level key (the pool was empty). */
  providerKey: boolean;
  createdAt: number;
}

export type FailoverReason = 'rate_limited' | 'auth_rejected';

/** What `chat_send` streams, in order (README, "IPC commands"). */
export type ChatEvent =
  | { type: 'userMessage'; message: Message }
  | { type: 'keySelected'; keyLabel: string; providerLevel: boolean; rebound: boolean; attempt: number }
  | { type: 'failover'; keyLabel: string; status: number; reason: FailoverReason; message: string }
  | { type: 'delta'; text: string }
  | { type: 'finished'; message: Message };

/** Without `content` the last user message is answered again, replacing a failed reply. */
export interface SendRequest {
  chatId: string;
  content?: string;
}

export interface NewChat {
  providerId: string;
  model?: string;
  title?: string;
}

export interface ChatChanges {
  title?: string;
  providerId?: string;
  model?: string;
}

export const chatApi = {
  list: () => call<Chat[]>('chat:list'),
  create: (chat: NewChat) => call<Chat>('chat:create', defined(chat)),
  update: (id: string, changes: ChatChanges) => call<Chat>('chat:update', defined({ id, ...changes })),
  delete: (id: string) => call<{ id: string }>('chat:delete', { id }),
  /** Releases the chat's key binding; the next message picks a key anew. */
  close: (id: string) => call<{ id: string }>('chat:close', { id }),
  getMessages: (chatId: string) => call<Message[]>('chat:getMessages', { chatId }),
  stop: (chatId: string) => call<{ chatId: string; stopped: boolean }>('chat:stop', { chatId }),
  /**
   * Sends a message (or retries) and streams the reply's events to `onEvent`. Resolves with the
   * assistant message as saved; a failed reply resolves too, as a message with `status: 'error'`.
   */
  send: (request: SendRequest, onEvent: (event: ChatEvent) => void) => {
    const channel = new Channel<ChatEvent>();
    channel.onmessage = onEvent;
    return call<Message>('chat_send', { request: defined(request), onEvent: channel });
  },
};
