import { useId, useRef, useState } from 'react';
import { Dialog } from './Dialog';
import { useI18n } from '../i18n/I18nProvider';
import { errorText } from '../i18n/problems';

interface Props {
  title: string;
  /** Says what goes and that it cannot be undone. */
  body: string;
  confirmLabel: string;
  /** How a failed deletion is worded, given the backend's message. */
  failure: (message: string) => string;
  /** `delete-key` gives `delete-key-dialog`, `delete-key-cancel`, `delete-key-confirm`. */
  testId: string;
  onConfirm: () => Promise<unknown>;
  onClose: () => void;
  returnFocus?: () => HTMLElement | null | undefined;
}

/**
 * Asks before deleting something. Cancel has the initial focus, so Enter never deletes by
 * accident; a failure is shown in place and the dialog stays open.
 */
export function ConfirmDeleteDialog({ title, body, confirmLabel, failure, testId, onConfirm, onClose, returnFocus }: Props) {
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
      setError(errorText(t, e));
      setBusy(false);
    }
  }

  return (
    <Dialog
      title={title}
      role="alertdialog"
      onClose={onClose}
      initialFocus={cancel}
      returnFocus={returnFocus}
      describedBy={bodyId}
      testId={`${testId}-dialog`}
    >
      <p id={bodyId} className="dialog__body">
        {body}
      </p>
      {error && (
        <p className="form-error" role="alert">
          {failure(error)}
        </p>
      )}
      <div className="dialog__actions">
        <button ref={cancel} type="button" className="button" onClick={onClose} data-testid={`${testId}-cancel`}>
          {t('common.cancel')}
        </button>
        <button type="button" className="button button--danger" onClick={confirm} aria-busy={busy || undefined} data-testid={`${testId}-confirm`}>
          {confirmLabel}
        </button>
      </div>
    </Dialog>
  );
}
