import { useCallback, useEffect, useRef, useState } from 'react';
import { Icon } from '../../components/Icon';
import { useI18n } from '../../i18n/I18nProvider';
import { errorText } from '../../i18n/problems';
import type { Chat } from '../../ipc/bindings';
import { chatApi } from '../../ipc/chat';
import { useProviders } from '../../hooks/useProviders';
import { preferences } from '../../preferences';
import { ChatSidebar } from './ChatSidebar';
import { ChooseProvider } from './ChooseProvider';
import { Composer } from './Composer';
import { ConversationHeader } from './ConversationHeader';
import { DeleteChatDialog } from './DeleteChatDialog';
import { MessageScroller, type MessageScrollerHandle } from './MessageScroller';
import { Messages } from './Messages';
import { providerOf } from './models';
import { NewChatDialog } from './NewChatDialog';
import { SystemPromptDialog } from './SystemPromptDialog';
import { useChats } from './useChats';
import { useConversations, type Outgoing } from './useConversations';

type Mode = { kind: 'idle' } | { kind: 'new' } | { kind: 'delete'; chat: Chat } | { kind: 'systemPrompt'; chat: Chat };

interface Props {
  /** Settings → Providers, where keys are added (offered when no key is available). */
  onOpenSettings?: () => void;
}

/** What went wrong, worded when shown so it follows a language switch. */
interface Problem {
  key: 'chat.messagesFailed' | 'chat.sendFailed' | 'chat.actionFailed' | 'chat.exportFailed';
  error: unknown;
}

/**
 * The chat page: the chats on the left (or what a search found), the chosen conversation with
 * its tools (system prompt, export) and its composer on the right. Switching chats keeps each
 * chat's key: a binding ends only when the chat is deleted, its key becomes unavailable, or it
 * sits idle (the backend's rule), so coming back finds the prompt cache warm.
 */
export function ChatPage({ onOpenSettings = () => {} }: Props) {
  const { t } = useI18n();
  const { state: chatsState, actions } = useChats();
  const { providers } = useProviders();
  const conversations = useConversations(useCallback(() => void actions.reload(), [actions]));
  const [selectedId, setSelectedId] = useState<string | null>(null);
  const [mode, setMode] = useState<Mode>({ kind: 'idle' });
  const [problem, setProblem] = useState<Problem>();
  const [announcement, setAnnouncement] = useState('');
  /** A message to bring into view once its chat has loaded (a search result). */
  const [jump, setJump] = useState<{ chatId: string; messageId: string } | null>(null);
  const scroller = useRef<MessageScrollerHandle>(null);

  const chats = chatsState.kind === 'loaded' ? chatsState.chats : [];
  const selected = chats.find((c) => c.id === selectedId) ?? null;
  const conversation = conversations.conversation(selected?.id ?? null);

  // Keep a chat chosen: the most recent one at first, the next one after a delete.
  useEffect(() => {
    if (chatsState.kind === 'loaded' && !chatsState.chats.some((c) => c.id === selectedId)) {
      setSelectedId(chatsState.chats[0]?.id ?? null);
    }
  }, [chatsState, selectedId]);

  const { load } = conversations;
  useEffect(() => {
    if (!selectedId) return;
    setProblem(undefined);
    load(selectedId).catch((error: unknown) => setProblem({ key: 'chat.messagesFailed', error }));
  }, [selectedId, load]);

  // A search result's message, once its chat's messages are on the page.
  useEffect(() => {
    if (!jump || jump.chatId !== selectedId || !conversation.loaded) return;
    if (scroller.current?.reveal(jump.messageId)) setJump(null);
  }, [jump, selectedId, conversation]);

  function select(chatId: string, messageId: string | null = null) {
    setJump(messageId ? { chatId, messageId } : null);
    setSelectedId(chatId);
  }

  async function send(outgoing: Outgoing): Promise<boolean> {
    if (!selected) return false;
    setProblem(undefined);
    try {
      await conversations.send(selected.id, outgoing);
      return true;
    } catch (error) {
      setProblem({ key: 'chat.sendFailed', error });
      return false;
    }
  }

  function stop() {
    if (!selected) return;
    conversations.stop(selected.id).catch((error: unknown) => setProblem({ key: 'chat.actionFailed', error }));
  }

  async function exportChat(chat: Chat) {
    setProblem(undefined);
    try {
      const { path } = await chatApi.exportMarkdown(chat.id);
      if (path) setAnnouncement(t('chat.exported', { path }));
    } catch (error) {
      setProblem({ key: 'chat.exportFailed', error });
    }
  }

  const streaming = conversation.streaming;

  return (
    <section className="chat" aria-labelledby="chat-title" data-testid="chat-page">
      <header className="page__header page__header--row">
        <h1 id="chat-title">{t('chat.title')}</h1>
      </header>
      <p className="visually-hidden" role="status" aria-live="polite" data-testid="chat-announcement">
        {announcement}
      </p>
      <div className="chat__body">
        <ChatSidebar
          chatsState={chatsState}
          selectedId={selectedId}
          busy={(id) => conversations.conversation(id).streaming !== null}
          onNew={() => setMode({ kind: 'new' })}
          onReload={() => void actions.reload()}
          onOpen={select}
          onRename={(id, title) => actions.update(id, { title })}
          onDelete={(chat) => setMode({ kind: 'delete', chat })}
        />

        <div className="chat__main" data-testid="conversation">
          {chatsState.kind === 'loaded' && chats.length === 0 && (
            <div className="empty-state" data-testid="chat-empty">
              <h2>{t('chat.emptyTitle')}</h2>
              <p>{t('chat.emptyBody')}</p>
              <button type="button" className="button button--primary" onClick={() => setMode({ kind: 'new' })}>
                <Icon name="plus" size={16} />
                {t('chat.new')}
              </button>
            </div>
          )}
          {selected && (
            <>
              <ConversationHeader
                chat={selected}
                provider={providerOf(providers, selected.providerId)}
                canExport={conversation.messages.length > 0}
                onSystemPrompt={() => setMode({ kind: 'systemPrompt', chat: selected })}
                onExport={() => void exportChat(selected)}
              />
              {selected.providerId === null && (
                <ChooseProvider
                  chat={selected}
                  providers={providers}
                  onChoose={(choice) => actions.update(selected.id, choice)}
                />
              )}
              <MessageScroller key={`messages:${selected.id}`} ref={scroller} conversation={conversation}>
                {(span) => (
                  <>
                    {conversation.loaded && conversation.messages.length === 0 && !streaming && (
                      <p className="muted chat__hint">{t('chat.startHint')}</p>
                    )}
                    <Messages
                      conversation={conversation}
                      span={span}
                      onAnswerAgain={() => void send({ turn: 'again' })}
                      onEdit={(content) => send({ turn: 'edit', content })}
                      onOpenSettings={() => {
                        // Settings → Providers opens on the chat's provider, where its key goes.
                        if (selected.providerId !== null) preferences.setProvider(selected.providerId);
                        onOpenSettings();
                      }}
                      provider={providerOf(providers, selected.providerId)}
                    />
                  </>
                )}
              </MessageScroller>
              {problem && (
                <p className="form-error chat__problem" role="alert" data-testid="chat-problem">
                  {t(problem.key, { message: errorText(t, problem.error) })}
                </p>
              )}
              <Composer
                key={selected.id}
                streaming={streaming !== null}
                stopping={streaming?.stopping ?? false}
                disabled={selected.providerId === null}
                onSend={(content, attachments) => send({ turn: 'ask', content, attachments })}
                onStop={stop}
              />
            </>
          )}
        </div>
      </div>

      {mode.kind === 'new' && (
        <NewChatDialog
          providers={providers}
          chats={chats}
          onCreate={async (choice) => {
            const chat = await actions.create(choice);
            select(chat.id);
          }}
          onClose={() => setMode({ kind: 'idle' })}
        />
      )}
      {mode.kind === 'delete' && (
        <DeleteChatDialog
          title={mode.chat.title}
          onConfirm={() => actions.remove(mode.chat.id)}
          onClose={() => setMode({ kind: 'idle' })}
        />
      )}
      {mode.kind === 'systemPrompt' && (
        <SystemPromptDialog
          chat={mode.chat}
          onSave={async (systemPrompt) => {
            await actions.update(mode.chat.id, { systemPrompt });
            setAnnouncement(systemPrompt ? t('systemPrompt.saved') : t('systemPrompt.removed'));
          }}
          onClose={() => setMode({ kind: 'idle' })}
        />
      )}
    </section>
  );
}
