import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react';
import { Icon } from '../../components/Icon';
import { useI18n } from '../../i18n/I18nProvider';
import type { Chat, Provider } from '../../ipc/bindings';
import { chatApi } from '../../ipc/chat';
import { useProviders } from '../settings/providers/useProviders';
import { ChatList } from './ChatList';
import { ChooseProvider } from './ChooseProvider';
import { Composer } from './Composer';
import { DeleteChatDialog } from './DeleteChatDialog';
import { Messages } from './Messages';
import { providerOf } from './models';
import { NewChatDialog } from './NewChatDialog';
import { useChats } from './useChats';
import { useConversations } from './useConversations';

type Mode = { kind: 'idle' } | { kind: 'new' } | { kind: 'delete'; chat: Chat };

interface Props {
  /** Settings → Providers, where keys are added (offered when no key is available). */
  onOpenSettings?: () => void;
}

/** What went wrong, worded when shown so it follows a language switch. */
interface Problem {
  key: 'chat.messagesFailed' | 'chat.sendFailed' | 'chat.actionFailed';
  message: string;
}

/** The chat page: the chats on the left, the chosen conversation with its composer on the right. */
export function ChatPage({ onOpenSettings = () => {} }: Props) {
  const { t } = useI18n();
  const { state: chatsState, actions } = useChats();
  const { state: providersState } = useProviders();
  const conversations = useConversations(useCallback(() => void actions.reload(), [actions]));
  const [selectedId, setSelectedId] = useState<string | null>(null);
  const [mode, setMode] = useState<Mode>({ kind: 'idle' });
  const [problem, setProblem] = useState<Problem>();

  const chats = chatsState.kind === 'loaded' ? chatsState.chats : [];
  const providers = providersState.kind === 'loaded' ? providersState.providers : [];
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
    load(selectedId).catch((error: Error) => setProblem({ key: 'chat.messagesFailed', message: error.message }));
  }, [selectedId, load]);

  /** Switching chats closes the one left: its key binding is released. */
  function select(chatId: string) {
    if (chatId === selectedId) return;
    if (selectedId) chatApi.close(selectedId).catch(() => {});
    setSelectedId(chatId);
  }

  async function send(content?: string): Promise<boolean> {
    if (!selected) return false;
    setProblem(undefined);
    try {
      await conversations.send(selected.id, content);
      return true;
    } catch (error) {
      setProblem({ key: 'chat.sendFailed', message: (error as Error).message });
      return false;
    }
  }

  function stop() {
    if (!selected) return;
    conversations.stop(selected.id).catch((error: Error) => setProblem({ key: 'chat.actionFailed', message: error.message }));
  }

  const streaming = conversation.streaming;

  return (
    <section className="chat" aria-labelledby="chat-title" data-testid="chat-page">
      <header className="page__header page__header--row">
        <h1 id="chat-title">{t('chat.title')}</h1>
      </header>
      <div className="chat__body">
        <aside className="chat__sidebar" aria-label={t('chat.list')}>
          <button type="button" className="button button--primary chat__new" onClick={() => setMode({ kind: 'new' })} data-testid="chat-new">
            <Icon name="plus" size={16} />
            {t('chat.new')}
          </button>
          {chatsState.kind === 'loading' && (
            <p className="muted" aria-busy="true">
              {t('chat.loading')}
            </p>
          )}
          {chatsState.kind === 'failed' && (
            <div className="form-error" role="alert">
              <p>{t('chat.loadFailed', { message: chatsState.error.message })}</p>
              <button type="button" className="button" onClick={() => void actions.reload()}>
                {t('providers.retry')}
              </button>
            </div>
          )}
          <ChatList
            chats={chats}
            selectedId={selectedId}
            busy={(id) => conversations.conversation(id).streaming !== null}
            onSelect={select}
            onRename={(id, title) => actions.update(id, { title })}
            onDelete={(chat) => setMode({ kind: 'delete', chat })}
          />
        </aside>

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
              <ConversationHeader chat={selected} provider={providerOf(providers, selected.providerId)} />
              {selected.providerId === null && (
                <ChooseProvider
                  chat={selected}
                  providers={providers}
                  onChoose={(choice) => actions.update(selected.id, choice)}
                />
              )}
              <Scroller>
                {conversation.loaded && conversation.messages.length === 0 && !streaming && (
                  <p className="muted chat__hint">{t('chat.startHint')}</p>
                )}
                <Messages conversation={conversation} onRetry={() => void send()} onOpenSettings={onOpenSettings} />
              </Scroller>
              {problem && (
                <p className="form-error chat__problem" role="alert" data-testid="chat-problem">
                  {t(problem.key, { message: problem.message })}
                </p>
              )}
              <Composer
                key={selected.id}
                streaming={streaming !== null}
                stopping={streaming?.stopping ?? false}
                disabled={selected.providerId === null}
                onSend={(content) => send(content)}
                onStop={stop}
              />
            </>
          )}
        </div>
      </div>

      {mode.kind === 'new' && (
        <NewChatDialog
          providers={providers}
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
    </section>
  );
}

function ConversationHeader({ chat, provider }: { chat: Chat; provider: Provider | undefined }) {
  const { t } = useI18n();
  return (
    <header className="conversation__header">
      <h2 data-testid="conversation-title">{chat.title}</h2>
      <p className="muted" data-testid="conversation-model">
        {provider ? t('chat.providerModel', { provider: provider.name, model: chat.model }) : chat.model}
      </p>
    </header>
  );
}

/**
 * The scrolling message area; follows new text while the reader is at the bottom. It checks
 * after every render (new messages, streamed text, another chat all render it): when the reader
 * is at the bottom, keeping them there is one assignment.
 */
function Scroller({ children }: { children: React.ReactNode }) {
  const box = useRef<HTMLDivElement>(null);
  const atBottom = useRef(true);
  useLayoutEffect(() => {
    const el = box.current;
    if (el && atBottom.current) el.scrollTop = el.scrollHeight;
  });
  return (
    <div
      ref={box}
      className="conversation__scroll"
      onScroll={(e) => {
        const el = e.currentTarget;
        atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
      }}
    >
      {children}
    </div>
  );
}
