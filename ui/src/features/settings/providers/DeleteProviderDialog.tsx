import { useId, useRef, useState } from 'react';
import { Dialog } from '../../../components/Dialog';
import { useI18n } from '../../../i18n/I18nProvider';
import type { Provider } from '../../../ipc/llmConfig';

interface Props {
  provider: Provider;
  onConfirm: () => Promise<unknown>;
  onClose: () => void;
}

/** Says how many pool keys go with the provider and that it cannot be undone; Cancel has the focus. */
export function DeleteProviderDialog({ provider, onConfirm, onClose }: Props) {
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
      title={t('provider.deleteTitle', { name: provider.name })}
      role="alertdialog"
      onClose={onClose}
      initialFocus={cancel}
      describedBy={bodyId}
      testId="delete-provider-dialog"
    >
      <p id={bodyId} className="dialog__body">
        {provider.keyCount > 0
          ? t('provider.deleteBody', { name: provider.name, count: provider.keyCount })
          : t('provider.deleteBodyNoKeys', { name: provider.name })}
      </p>
      {error && (
        <p className="form-error" role="alert">
          {t('pool.actionFailed', { message: error })}
        </p>
      )}
      <div className="dialog__actions">
        <button ref={cancel} type="button" className="button" onClick={onClose} data-testid="delete-provider-cancel">
          {t('common.cancel')}
        </button>
        <button type="button" className="button button--danger" onClick={confirm} aria-busy={busy || undefined} data-testid="delete-provider-confirm">
          {t('provider.deleteConfirm')}
        </button>
      </div>
    </Dialog>
  );
}
