import { useEffect, useRef, useState } from 'react';
import { Icon } from '../../components/Icon';
import { useI18n } from '../../i18n/I18nProvider';
import { type Chat, LIMITS } from '../../ipc/bindings';
import { errorText, fieldError } from '../../i18n/problems';

interface Props {
  chats: Chat[];
  selectedId: string | null;
  /** Chats with a reply being written. */
  busy: (chatId: string) => boolean;
  onSelect: (chatId: string) => void;
  onRename: (chatId: string, title: string) => Promise<unknown>;
  onDelete: (chat: Chat) => void;
}

/** The chats, most recently active first: select, rename in place, delete. */
export function ChatList({ chats, selectedId, busy, onSelect, onRename, onDelete }: Props) {
  const { t } = useI18n();
  const [renaming, setRenaming] = useState<string | null>(null);

  return (
    <ul className="chat-list" data-testid="chat-list">
      {chats.map((chat) => (
        <li key={chat.id} className="chat-list__item" aria-current={chat.id === selectedId ? 'true' : undefined} data-testid="chat-item" data-chat-id={chat.id}>
          {renaming === chat.id ? (
            <RenameField chat={chat} onSave={(title) => onRename(chat.id, title)} onDone={() => setRenaming(null)} />
          ) : (
            <>
              <button
                type="button"
                className="chat-list__select"
                aria-current={chat.id === selectedId ? 'page' : undefined}
                onClick={() => onSelect(chat.id)}
                data-testid="chat-item-select"
              >
                <span className="chat-list__title" data-testid="chat-item-title">
                  {chat.title}
                </span>
                {busy(chat.id) && <span className="chat-list__busy" role="img" aria-label={t('chat.writingShort')} />}
              </button>
              <span className="chat-list__actions">
                <button
                  type="button"
                  className="icon-button icon-button--small"
                  aria-label={t('chat.renameLabel', { title: chat.title })}
                  title={t('chat.rename')}
                  onClick={() => setRenaming(chat.id)}
                  data-testid="chat-rename"
                >
                  <Icon name="pencil" size={16} />
                </button>
                <button
                  type="button"
                  className="icon-button icon-button--small icon-button--danger"
                  aria-label={t('chat.deleteLabel', { title: chat.title })}
                  title={t('chat.delete')}
                  onClick={() => onDelete(chat)}
                  data-testid="chat-delete"
                >
                  <Icon name="trash" size={16} />
                </button>
              </span>
            </>
          )}
        </li>
      ))}
    </ul>
  );
}

/** The title as an input: Enter saves, Escape or an unchanged title cancels. */
function RenameField({ chat, onSave, onDone }: { chat: Chat; onSave: (title: string) => Promise<unknown>; onDone: () => void }) {
  const { t } = useI18n();
  const [text, setText] = useState(chat.title);
  const [error, setError] = useState<string>();
  const saving = useRef(false);
  const input = useRef<HTMLInputElement>(null);

  useEffect(() => {
    input.current?.focus();
    input.current?.select();
  }, []);

  async function commit() {
    if (saving.current) return;
    const title = text.trim();
    if (title === '' || title === chat.title) {
      onDone();
      return;
    }
    if ([...title].length > LIMITS.chatTitle.maxChars) {
      setError(t('chat.titleTooLong'));
      return;
    }
    saving.current = true;
    try {
      await onSave(title);
      onDone();
    } catch (e) {
      setError(fieldError(t, e, 'title') ?? errorText(t, e));
    } finally {
      saving.current = false;
    }
  }

  return (
    <div className="chat-list__rename">
      <input
        ref={input}
        className="input input--compact-height"
        aria-label={t('chat.titleLabel')}
        aria-invalid={error ? true : undefined}
        value={text}
        onChange={(e) => {
          setText(e.target.value);
          setError(undefined);
        }}
        onKeyDown={(e) => {
          if (e.key === 'Enter') {
            e.preventDefault();
            void commit();
          } else if (e.key === 'Escape') {
            e.preventDefault();
            onDone();
          }
        }}
        onBlur={() => void commit()}
        data-testid="chat-rename-input"
      />
      {error && (
        <p className="field__error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
