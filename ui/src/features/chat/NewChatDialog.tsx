import { useState, type FormEvent } from 'react';
import { Dialog } from '../../components/Dialog';
import { FormActions } from '../../components/FormActions';
import { useI18n } from '../../i18n/I18nProvider';
import { errorText, fieldError } from '../../i18n/problems';
import type { Chat, CreateChatArgs, Provider } from '../../ipc/bindings';
import { ModelPicker } from './ModelPicker';
import { initialModel, preferredProvider } from './models';
import { SystemPromptField } from '../../components/SystemPromptField';

interface Props {
  providers: Provider[];
  /** The chats so far: the provider of the latest is preselected when it can answer. */
  chats: readonly Chat[];
  onCreate: (chat: CreateChatArgs) => Promise<unknown>;
  onClose: () => void;
}

/**
 * Starts a chat: which provider (the one last used, or one whose pool can answer: see
 * `preferredProvider`), which model (its default preselected, else its first; listed by the
 * provider or typed), and its system prompt (the provider's default, editable).
 */
export function NewChatDialog({ providers, chats, onCreate, onClose }: Props) {
  const { t } = useI18n();
  const first = preferredProvider(providers, chats);
  const [choice, setChoice] = useState({ providerId: first?.id ?? '', model: initialModel(first) });
  /** The prompt as typed; null while it follows the chosen provider's default. */
  const [prompt, setPrompt] = useState<string | null>(null);
  const [error, setError] = useState<{ at: 'model' | 'systemPrompt' | 'form'; text: string }>();
  const [busy, setBusy] = useState(false);
  const provider = providers.find((p) => p.id === choice.providerId);
  const providerPrompt = provider?.systemPrompt ?? '';

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (busy) return;
    if (choice.model.trim() === '') {
      setError({ at: 'model', text: t('chat.modelRequired') });
      return;
    }
    setBusy(true);
    try {
      // Left as the provider's default, the backend applies it; changed (even emptied), it is sent.
      const systemPrompt = prompt !== null && prompt !== providerPrompt ? { systemPrompt: prompt.trim() } : {};
      await onCreate({ providerId: choice.providerId, model: choice.model.trim(), ...systemPrompt });
      onClose();
    } catch (e) {
      const atModel = fieldError(t, e, 'model');
      const atPrompt = fieldError(t, e, 'systemPrompt');
      setError(atModel ? { at: 'model', text: atModel } : atPrompt ? { at: 'systemPrompt', text: atPrompt } : { at: 'form', text: errorText(t, e) });
      setBusy(false);
    }
  }

  return (
    <Dialog title={t('chat.newTitle')} onClose={onClose} testId="new-chat-dialog">
      {providers.length === 0 ? (
        <>
          <p className="dialog__body">{t('chat.noProviders')}</p>
          <div className="dialog__actions">
            <button type="button" className="button" onClick={onClose}>
              {t('common.close')}
            </button>
          </div>
        </>
      ) : (
        <form className="dialog__form" onSubmit={submit} noValidate>
          {error?.at === 'form' && (
            <p className="form-error" role="alert" data-testid="new-chat-error">
              {error.text}
            </p>
          )}
          <ModelPicker
            providers={providers}
            providerId={choice.providerId}
            model={choice.model}
            onChange={(next) => {
              setChoice(next);
              setError(undefined);
            }}
            error={error?.at === 'model' ? error.text : undefined}
            testId="new-chat"
          />
          <SystemPromptField
            value={prompt ?? providerPrompt}
            onChange={(text) => {
              setPrompt(text);
              setError(undefined);
            }}
            hint={providerPrompt ? t('systemPrompt.fromProvider') : t('systemPrompt.hint')}
            error={error?.at === 'systemPrompt' ? error.text : undefined}
            testId="new-chat-system-prompt"
          />
          <FormActions onCancel={onClose} busy={busy} label={t('chat.create')} busyLabel={t('chat.creating')} testId="new-chat-submit" />
        </form>
      )}
    </Dialog>
  );
}
