import { useId, useRef, useState } from 'react';
import { Dialog } from '../../components/Dialog';
import { useI18n } from '../../i18n/I18nProvider';

interface Props {
  title: string;
  onConfirm: () => Promise<unknown>;
  onClose: () => void;
}

/** Asks before deleting a chat and its messages; Cancel has the focus. */
export function DeleteChatDialog({ title, onConfirm, onClose }: Props) {
  const { t } = useI18n();
  const bodyId = useId();
  const cancel = useRef<HTMLButtonElement>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();

  async function confirm() {
    if (busy) return;
    setBusy(true);
    try {
      await onConfirm();
      onClose();
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
      setBusy(false);
    }
  }

  return (
    <Dialog title={t('chat.deleteTitle')} role="alertdialog" onClose={onClose} initialFocus={cancel} describedBy={bodyId} testId="delete-chat-dialog">
      <p id={bodyId} className="dialog__body">
        {t('chat.deleteBody', { title })}
      </p>
      {error && (
        <p className="form-error" role="alert">
          {t('chat.actionFailed', { message: error })}
        </p>
      )}
      <div className="dialog__actions">
        <button ref={cancel} type="button" className="button" onClick={onClose} data-testid="delete-chat-cancel">
          {t('common.cancel')}
        </button>
        <button type="button" className="button button--danger" onClick={confirm} aria-busy={busy || undefined} data-testid="delete-chat-confirm">
          {t('chat.deleteConfirm')}
        </button>
      </div>
    </Dialog>
  );
}
