import { useState, type FormEvent, type KeyboardEvent } from 'react';
import { Icon } from '../../components/Icon';
import { useI18n } from '../../i18n/I18nProvider';

interface Props {
  streaming: boolean;
  stopping: boolean;
  disabled: boolean;
  /** Resolves when the message was accepted; the text is kept if sending was refused. */
  onSend: (content: string) => Promise<boolean>;
  onStop: () => void;
}

/** The message box: Enter sends, Shift+Enter adds a line; Stop while a reply is written. */
export function Composer({ streaming, stopping, disabled, onSend, onStop }: Props) {
  const { t } = useI18n();
  const [text, setText] = useState('');

  async function submit(event?: FormEvent) {
    event?.preventDefault();
    const content = text;
    if (streaming || disabled || content.trim() === '') return;
    setText('');
    const accepted = await onSend(content);
    if (!accepted) setText((current) => (current === '' ? content : current));
  }

  function onKeyDown(event: KeyboardEvent<HTMLTextAreaElement>) {
    // While an input method composes (Chinese, Japanese), Enter confirms the composition.
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      void submit();
    }
  }

  return (
    <form className="composer" onSubmit={submit}>
      <textarea
        className="input composer__input"
        aria-label={t('chat.composerLabel')}
        placeholder={t('chat.composerPlaceholder')}
        rows={2}
        value={text}
        disabled={disabled}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={onKeyDown}
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
        <button
          type="submit"
          className="button button--primary composer__button"
          disabled={disabled || text.trim() === ''}
          data-testid="chat-send"
        >
          <Icon name="send" size={16} />
          {t('chat.send')}
        </button>
      )}
    </form>
  );
}
