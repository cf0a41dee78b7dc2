import { useEffect, useId, useRef, useState, type KeyboardEvent } from 'react';
import { CopyButton } from '../../components/CopyButton';
import { Icon } from '../../components/Icon';
import { useI18n } from '../../i18n/I18nProvider';
import type { Message } from '../../ipc/bindings';
import { AttachmentList } from './AttachmentViews';

/** A message the user wrote; the last one can be edited and sent again (what followed it goes). */
export function UserMessage({ message, editable, onEdit }: { message: Message; editable: boolean; onEdit: (content: string) => Promise<boolean> }) {
  const { t } = useI18n();
  const [editing, setEditing] = useState(false);
  const editButton = useRef<HTMLButtonElement>(null);
  const wasEditing = useRef(false);

  // Leaving the editor (saved or cancelled) puts focus back on Edit, where the user was.
  useEffect(() => {
    if (wasEditing.current && !editing) editButton.current?.focus();
    wasEditing.current = editing;
  }, [editing]);

  return (
    <li className="message message--user" data-testid="message" data-role="user" data-message-id={message.id}>
      <span className="visually-hidden">{t('chat.you')}: </span>
      {editing ? (
        <MessageEditor initial={message.content} onCancel={() => setEditing(false)} onSave={async (content) => (await onEdit(content)) && setEditing(false)} />
      ) : (
        <>
          <AttachmentList attachments={message.attachments} testId="message-attachments" />
          {message.content && (
            <div className="message__content" data-testid="message-content">
              {message.content}
            </div>
          )}
          {editable && (
            <div className="message__meta message__meta--end">
              <CopyButton text={() => message.content} label={t('chat.copyMessage')} className="button button--small button--quiet" testId="user-message-copy" />
              <button ref={editButton} type="button" className="button button--small button--quiet" onClick={() => setEditing(true)} data-testid="message-edit">
                <Icon name="pencil" size={14} />
                {t('chat.edit')}
              </button>
            </div>
          )}
        </>
      )}
    </li>
  );
}

function MessageEditor({ initial, onSave, onCancel }: { initial: string; onSave: (content: string) => Promise<unknown>; onCancel: () => void }) {
  const { t } = useI18n();
  const [text, setText] = useState(initial);
  const [busy, setBusy] = useState(false);
  const area = useRef<HTMLTextAreaElement>(null);
  const hintId = useId();
  useEffect(() => {
    const el = area.current;
    el?.focus();
    el?.setSelectionRange(el.value.length, el.value.length);
  }, []);

  async function save() {
    if (busy || text.trim() === '') return;
    setBusy(true);
    await onSave(text);
    setBusy(false);
  }

  function onKeyDown(event: KeyboardEvent<HTMLTextAreaElement>) {
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      void save();
    } else if (event.key === 'Escape') {
      event.preventDefault();
      onCancel();
    }
  }

  return (
    <div className="message-editor" data-testid="message-editor">
      <textarea
        ref={area}
        className="input textarea textarea--short"
        aria-label={t('chat.editLabel')}
        aria-describedby={hintId}
        value={text}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={onKeyDown}
        data-testid="message-editor-input"
      />
      <p id={hintId} className="field__hint">
        {t('chat.editHint')}
      </p>
      <div className="message-editor__actions">
        <button type="button" className="button" onClick={onCancel} data-testid="message-editor-cancel">
          {t('common.cancel')}
        </button>
        <button
          type="button"
          className="button button--primary"
          disabled={text.trim() === ''}
          aria-busy={busy || undefined}
          onClick={() => void save()}
          data-testid="message-editor-send"
        >
          {t('chat.editSend')}
        </button>
      </div>
    </div>
  );
}
