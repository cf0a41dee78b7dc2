import { useState } from 'react';
import { Icon } from '../../components/Icon';
import { useI18n } from '../../i18n/I18nProvider';
import { errorText } from '../../i18n/problems';
import type { Chat } from '../../ipc/bindings';
import { ChatList } from './ChatList';
import { SearchResults } from './SearchResults';
import { useChatSearch } from './useChatSearch';
import type { ChatsLoad } from './useChats';

interface Props {
  chatsState: ChatsLoad;
  selectedId: string | null;
  /** Chats with a reply being written. */
  busy: (chatId: string) => boolean;
  onNew: () => void;
  onReload: () => void;
  /** Opens the chat, at the matching message when a search found one. */
  onOpen: (chatId: string, messageId: string | null) => void;
  onRename: (chatId: string, title: string) => Promise<unknown>;
  onDelete: (chat: Chat) => void;
}

/** The left side of the chat page: a new chat, the search box, and the chats or what a search found. */
export function ChatSidebar({ chatsState, selectedId, busy, onNew, onReload, onOpen, onRename, onDelete }: Props) {
  const { t } = useI18n();
  const [query, setQuery] = useState('');
  const search = useChatSearch(query, chatsState);
  const chats = chatsState.kind === 'loaded' ? chatsState.chats : [];
  const searching = query.trim() !== '';

  return (
    <aside className="chat__sidebar" aria-label={t('chat.list')}>
      <button type="button" className="button button--primary chat__new" onClick={onNew} data-testid="chat-new">
        <Icon name="plus" size={16} />
        {t('chat.new')}
      </button>
      <div className="chat-search">
        <Icon name="search" size={16} />
        <input
          type="search"
          className="input chat-search__input"
          aria-label={t('search.label')}
          placeholder={t('search.placeholder')}
          value={query}
          onChange={(e) => setQuery(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Escape' && query) {
              e.preventDefault();
              setQuery('');
            }
          }}
          data-testid="chat-search"
        />
      </div>
      {chatsState.kind === 'loading' && (
        <p className="muted" aria-busy="true">
          {t('chat.loading')}
        </p>
      )}
      {chatsState.kind === 'failed' && (
        <div className="form-error" role="alert">
          <p>{t('chat.loadFailed', { message: errorText(t, chatsState.error) })}</p>
          <button type="button" className="button" onClick={onReload}>
            {t('providers.retry')}
          </button>
        </div>
      )}
      {searching ? (
        <SearchResults query={query} state={search} selectedId={selectedId} onOpen={onOpen} />
      ) : (
        <ChatList chats={chats} selectedId={selectedId} busy={busy} onSelect={(id) => onOpen(id, null)} onRename={onRename} onDelete={onDelete} />
      )}
    </aside>
  );
}
