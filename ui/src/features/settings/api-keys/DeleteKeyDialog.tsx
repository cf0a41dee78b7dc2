import { useId, useRef, useState } from 'react';
import { Dialog } from '../../../components/Dialog';
import { useI18n } from '../../../i18n/I18nProvider';

interface Props {
  name: string;
  onConfirm: () => Promise<unknown>;
  onClose: () => void;
  returnFocus?: () => HTMLElement | null | undefined;
}

/** Asks before deleting, and says that it cannot be undone. Cancel has the initial focus. */
export function DeleteKeyDialog({ name, onConfirm, onClose, returnFocus }: Props) {
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
    <Dialog
      title={t('delete.title')}
      role="alertdialog"
      onClose={onClose}
      initialFocus={cancel}
      returnFocus={returnFocus}
      describedBy={bodyId}
      testId="delete-key-dialog"
    >
      <p id={bodyId} className="dialog__body">
        {t('delete.body', { name })}
      </p>
      {error && (
        <p className="form-error" role="alert">
          {t('pool.actionFailed', { message: error })}
        </p>
      )}
      <div className="dialog__actions">
        <button ref={cancel} type="button" className="button" onClick={onClose} data-testid="delete-key-cancel">
          {t('common.cancel')}
        </button>
        <button type="button" className="button button--danger" onClick={confirm} aria-busy={busy || undefined} data-testid="delete-key-confirm">
          {t('delete.confirm')}
        </button>
      </div>
    </Dialog>
  );
}
