import { useState, type FormEvent } from 'react';
import { Dialog } from '../../components/Dialog';
import { FormActions } from '../../components/FormActions';
import { useI18n } from '../../i18n/I18nProvider';
import { errorText, fieldError } from '../../i18n/problems';
import type { Chat } from '../../ipc/bindings';
import { SystemPromptField, systemPromptTooLong } from '../../components/SystemPromptField';

interface Props {
  chat: Chat;
  /** Saves the prompt; `""` removes it. */
  onSave: (systemPrompt: string) => Promise<unknown>;
  onClose: () => void;
}

/** Edits one chat's system prompt; the next message is sent with it. */
export function SystemPromptDialog({ chat, onSave, onClose }: Props) {
  const { t } = useI18n();
  const [text, setText] = useState(chat.systemPrompt ?? '');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (busy || systemPromptTooLong(text)) return;
    const next = text.trim();
    if (next === (chat.systemPrompt ?? '')) {
      onClose();
      return;
    }
    setBusy(true);
    try {
      await onSave(next);
      onClose();
    } catch (e) {
      setError(fieldError(t, e, 'systemPrompt') ?? errorText(t, e));
      setBusy(false);
    }
  }

  return (
    <Dialog title={t('systemPrompt.title', { title: chat.title })} onClose={onClose} testId="system-prompt-dialog">
      <form className="dialog__form" onSubmit={submit} noValidate>
        <SystemPromptField
          value={text}
          onChange={(next) => {
            setText(next);
            setError(undefined);
          }}
          hint={t('systemPrompt.chatHint')}
          error={error}
          testId="system-prompt"
        />
        <FormActions onCancel={onClose} busy={busy} label={t('provider.save')} busyLabel={t('provider.saving')} testId="system-prompt-save" />
      </form>
    </Dialog>
  );
}
