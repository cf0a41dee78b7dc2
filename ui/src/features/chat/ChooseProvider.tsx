import { useState, type FormEvent } from 'react';
import { useI18n } from '../../i18n/I18nProvider';
import type { Chat, Provider } from '../../ipc/bindings';
import { ModelPicker } from './ModelPicker';
import { initialModel } from './models';
import { errorText, fieldError } from '../../i18n/problems';

interface Props {
  chat: Chat;
  providers: Provider[];
  onChoose: (choice: { providerId: string; model: string }) => Promise<unknown>;
}

/** Shown in a chat whose provider was deleted: pick another to continue the conversation. */
export function ChooseProvider({ chat, providers, onChoose }: Props) {
  const { t } = useI18n();
  const first = providers[0];
  const [choice, setChoice] = useState({ providerId: first?.id ?? '', model: first?.models.includes(chat.model) ? chat.model : initialModel(first) });
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (busy || !choice.providerId) return;
    if (choice.model.trim() === '') {
      setError(t('chat.modelRequired'));
      return;
    }
    setBusy(true);
    try {
      await onChoose({ providerId: choice.providerId, model: choice.model.trim() });
    } catch (e) {
      setError(fieldError(t, e, 'model') ?? errorText(t, e));
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="choose-provider" onSubmit={submit} data-testid="choose-provider">
      <p>{t('chat.providerGone')}</p>
      {providers.length === 0 ? (
        <p className="muted">{t('chat.noProviders')}</p>
      ) : (
        <>
          <ModelPicker
            providers={providers}
            providerId={choice.providerId}
            model={choice.model}
            onChange={(next) => {
              setChoice(next);
              setError(undefined);
            }}
            error={error}
            testId="choose-provider"
          />
          <div>
            <button type="submit" className="button button--primary" aria-busy={busy || undefined} data-testid="choose-provider-submit">
              {t('chat.chooseProvider')}
            </button>
          </div>
        </>
      )}
    </form>
  );
}
