import { useId, useRef, useState, type ClipboardEvent, type DragEvent, type FormEvent, type KeyboardEvent } from 'react';
import { Icon } from '../../components/Icon';
import { useI18n } from '../../i18n/I18nProvider';
import { errorText, formatMegabytes, issueText } from '../../i18n/problems';
import { type Attachment, LIMITS } from '../../ipc/bindings';
import { chatApi } from '../../ipc/chat';
import { IpcError } from '../../ipc/client';
import { AttachmentList } from './AttachmentViews';
import { preloadMarkdown } from './markdown/LazyMarkdown';
import { fileToBase64 } from './attachments';

interface Props {
  streaming: boolean;
  stopping: boolean;
  disabled: boolean;
  /** Resolves when the message was accepted; the text and attachments are kept if sending was refused. */
  onSend: (content: string, attachments: Attachment[]) => Promise<boolean>;
  onStop: () => void;
}

/** What the file picker offers: the four image formats and common text files (the backend checks the bytes). */
const ACCEPT =
  'image/png,image/jpeg,image/webp,image/gif,text/*,.md,.markdown,.csv,.json,.txt,.log,.rs,.ts,.tsx,.js,.jsx,.py,.go,.java,.kt,.c,.h,.cpp,.hpp,.cs,.rb,.php,.swift,.sh,.sql,.toml,.yaml,.yml,.xml,.html,.css';

/**
 * The message box: Enter sends, Shift+Enter adds a line; Stop while a reply is written. Files
 * come by paste, by drop or from the picker; each is checked and stored by the backend as it is
 * attached, so a refused one says why at once and is never sent.
 */
export function Composer({ streaming, stopping, disabled, onSend, onStop }: Props) {
  const { t } = useI18n();
  const [text, setText] = useState('');
  const [attachments, setAttachments] = useState<Attachment[]>([]);
  const [attaching, setAttaching] = useState(0);
  const [problems, setProblems] = useState<string[]>([]);
  const [dragging, setDragging] = useState(false);
  const picker = useRef<HTMLInputElement>(null);
  const hintId = useId();
  const pickerId = useId();

  const canSend = !streaming && !disabled && attaching === 0 && (text.trim() !== '' || attachments.length > 0);

  async function submit(event?: FormEvent) {
    event?.preventDefault();
    if (!canSend) return;
    const content = text;
    const sent = attachments;
    setText('');
    setAttachments([]);
    setProblems([]);
    const accepted = await onSend(content, sent);
    if (!accepted) {
      setText((current) => (current === '' ? content : current));
      setAttachments((current) => (current.length === 0 ? sent : current));
    }
  }

  /** Why `file` is refused before it is read, or null (the backend checks again, and the bytes). */
  function precheck(file: File): string | null {
    // The larger bound: text over its own is refused by the backend, which knows it is text.
    const max = LIMITS.imageFile.maxBytes;
    if (file.size > max) return t('attach.refused', { name: file.name, reason: t('issue.fileTooLarge', { max: formatMegabytes(t, max) }) });
    return null;
  }

  async function addFiles(files: File[]) {
    if (files.length === 0 || disabled) return;
    const room = LIMITS.attachments.maxItems - attachments.length - attaching;
    const found: string[] = [];
    if (files.length > room) found.push(t('attach.tooMany', { max: LIMITS.attachments.maxItems }));
    const taken = files.slice(0, Math.max(room, 0));
    setAttaching((n) => n + taken.length);
    for (const file of taken) {
      const name = file.name || 'pasted';
      try {
        const refused = precheck(file);
        if (refused) {
          found.push(refused);
          continue;
        }
        const attached = await chatApi.attach(name, await fileToBase64(file));
        setAttachments((current) => [...current, attached]);
      } catch (error) {
        found.push(t('attach.refused', { name, reason: attachProblem(t, error) }));
      } finally {
        setAttaching((n) => n - 1);
      }
    }
    setProblems(found);
  }

  function onKeyDown(event: KeyboardEvent<HTMLTextAreaElement>) {
    // While an input method composes (Chinese, Japanese), Enter confirms the composition.
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      void submit();
    }
  }

  function onPaste(event: ClipboardEvent<HTMLTextAreaElement>) {
    const files = [...event.clipboardData.files];
    if (files.length === 0) return; // plain text pastes as text
    event.preventDefault();
    void addFiles(files);
  }

  function onDrop(event: DragEvent<HTMLFormElement>) {
    setDragging(false);
    const files = [...event.dataTransfer.files];
    if (files.length === 0) return;
    event.preventDefault();
    void addFiles(files);
  }

  function onDragOver(event: DragEvent<HTMLFormElement>) {
    if ([...event.dataTransfer.types].includes('Files')) {
      event.preventDefault();
      setDragging(true);
    }
  }

  return (
    <form
      className={`composer${dragging ? ' composer--dragging' : ''}`}
      onSubmit={submit}
      onDragOver={onDragOver}
      onDragLeave={() => setDragging(false)}
      onDrop={onDrop}
      data-testid="composer"
    >
      {(attachments.length > 0 || attaching > 0) && (
        <div className="composer__attachments">
          <AttachmentList attachments={attachments} onRemove={(gone) => setAttachments((current) => current.filter((a) => a !== gone))} testId="composer-attachments" />
          {attaching > 0 && (
            <span className="composer__attaching" role="status" data-testid="composer-attaching">
              {t('attach.attaching')}
            </span>
          )}
        </div>
      )}
      {problems.length > 0 && (
        <div role="alert" data-testid="composer-problems">
          <ul className="composer__problems">
            {problems.map((problem) => (
              <li key={problem}>{problem}</li>
            ))}
          </ul>
        </div>
      )}
      <div className="composer__row">
        <input
          ref={picker}
          id={pickerId}
          type="file"
          multiple
          accept={ACCEPT}
          className="visually-hidden"
          tabIndex={-1}
          aria-hidden="true"
          onChange={(e) => {
            const files = [...(e.target.files ?? [])];
            e.target.value = '';
            void addFiles(files);
          }}
          data-testid="composer-file-input"
        />
        <button
          type="button"
          className="button button--quiet composer__attach"
          onClick={() => picker.current?.click()}
          disabled={disabled}
          aria-label={t('attach.pick')}
          aria-describedby={hintId}
          title={t('attach.pick')}
          data-testid="composer-attach"
        >
          <Icon name="attach" size={18} />
        </button>
        <textarea
          className="input composer__input"
          aria-label={t('chat.composerLabel')}
          aria-describedby={hintId}
          placeholder={t('chat.composerPlaceholder')}
          rows={2}
          value={text}
          disabled={disabled}
          onChange={(e) => {
            setText(e.target.value);
            // The reply will want the Markdown renderer: it loads while the question is typed.
            void preloadMarkdown();
          }}
          onKeyDown={onKeyDown}
          onPaste={onPaste}
          data-testid="composer-input"
        />
        {streaming ? (
          <button
            type="button"
            className="button composer__button"
            onClick={onStop}
            disabled={stopping}
            aria-busy={stopping || undefined}
            data-testid="chat-stop"
          >
            <Icon name="stop" size={16} />
            {stopping ? t('chat.stopping') : t('chat.stop')}
          </button>
        ) : (
          <button type="submit" className="button button--primary composer__button" disabled={!canSend} data-testid="chat-send">
            <Icon name="send" size={16} />
            {t('chat.send')}
          </button>
        )}
      </div>
      <p id={hintId} className="composer__hint" data-testid="composer-hint">
        {t('attach.hint', {
          count: LIMITS.attachments.maxItems,
          image: formatMegabytes(t, LIMITS.imageFile.maxBytes),
          text: formatMegabytes(t, LIMITS.textFile.maxBytes),
        })}
      </p>
    </form>
  );
}

/** Why the backend refused a file, in words: its issue (without the field), or the error as a whole. */
function attachProblem(t: ReturnType<typeof useI18n>['t'], error: unknown): string {
  if (error instanceof IpcError && error.code === 'validation' && error.issues.length > 0) return issueText(t, error.issues[0]);
  return errorText(t, error);
}
