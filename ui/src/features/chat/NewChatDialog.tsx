import { useState, type FormEvent } from 'react';
import { Dialog } from '../../components/Dialog';
import { useI18n } from '../../i18n/I18nProvider';
import type { Provider } from '../../ipc/bindings';
import { IpcError } from '../../ipc/client';
import { ModelPicker } from './ModelPicker';
import { initialModel } from './models';

interface Props {
  providers: Provider[];
  onCreate: (choice: { providerId: string; model: string }) => Promise<unknown>;
  onClose: () => void;
}

/** Starts a chat: which provider, which of its models (its default preselected). */
export function NewChatDialog({ providers, onCreate, onClose }: Props) {
  const { t } = useI18n();
  const first = providers[0];
  const [choice, setChoice] = useState({ providerId: first?.id ?? '', model: initialModel(first) });
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (busy) return;
    if (choice.model.trim() === '') {
      setError(t('chat.modelRequired'));
      return;
    }
    setBusy(true);
    try {
      await onCreate({ providerId: choice.providerId, model: choice.model.trim() });
      onClose();
    } catch (e) {
      setError(e instanceof IpcError ? (e.issueFor('model') ?? e.message) : String(e));
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
          <ModelPicker
            providers={providers}
            providerId={choice.providerId}
            model={choice.model}
            onChange={(next) => {
              setChoice(next);
              setError(undefined);
            }}
            error={error}
            testId="new-chat"
          />
          <div className="dialog__actions">
            <button type="button" className="button" onClick={onClose}>
              {t('common.cancel')}
            </button>
            <button type="submit" className="button button--primary" aria-busy={busy || undefined} data-testid="new-chat-submit">
              {busy ? t('chat.creating') : t('chat.create')}
            </button>
          </div>
        </form>
      )}
    </Dialog>
  );
}
