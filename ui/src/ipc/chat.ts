import type { ChatEvent, CreateChatArgs, SendRequest, UpdateChatArgs } from './bindings';
import { call, defined, stream } from './client';

/** The fields of a chat update besides the id: only those to change. */
export type ChatChanges = Omit<UpdateChatArgs, 'id'>;

export const chatApi = {
  list: () => call('chat:list'),
  create: (chat: CreateChatArgs) => call('chat:create', defined(chat)),
  update: (id: string, changes: ChatChanges) => call('chat:update', defined({ id, ...changes })),
  delete: (id: string) => call('chat:delete', { id }),
  getMessages: (chatId: string) => call('chat:getMessages', { chatId }),
  stop: (chatId: string) => call('chat:stop', { chatId }),
  /** Chats whose title or messages hold `query` (any case), with the first matching message cut around it. */
  search: (query: string) => call('chat:search', { query }),
  /** Checks and stores a file for a message to send (`data`: its bytes, base64); answers what it is. */
  attach: (name: string, data: string) => call('chat:attach', { name, data }),
  /** An attachment's bytes (base64) with their media type: the original, or an image's thumbnail. */
  attachmentData: (id: string, thumbnail: boolean) => call('chat:attachmentData', { id, thumbnail }),
  /** Asks where to save (a native dialog) and writes the chat as Markdown; `path: null` when cancelled. */
  exportMarkdown: (chatId: string) => call('chat:exportMarkdown', { chatId }),
  /**
   * Sends a message, rewrites the last one (`edit: true`), or without `content` answers the last
   * one again, and streams the reply's events to `onEvent`. Resolves with the
   * assistant message as saved; a failed reply resolves too, as a message with `status: 'error'`.
   */
  send: (request: SendRequest, onEvent: (event: ChatEvent) => void) => stream('chat:send', { request: defined(request) }, onEvent),
};
