import { useI18n } from '../i18n/I18nProvider';

interface Props {
  onCancel: () => void;
  /** A save runs: the submit button says so (`busyLabel`) and is marked busy. */
  busy: boolean;
  label: string;
  busyLabel: string;
  /** The submit button's test id; the cancel button's is given separately where tests use it. */
  testId: string;
  cancelTestId?: string;
}

/** A form dialog's buttons: Cancel, then the primary submit button. */
export function FormActions({ onCancel, busy, label, busyLabel, testId, cancelTestId }: Props) {
  const { t } = useI18n();
  return (
    <div className="dialog__actions">
      <button type="button" className="button" onClick={onCancel} data-testid={cancelTestId}>
        {t('common.cancel')}
      </button>
      <button type="submit" className="button button--primary" aria-busy={busy || undefined} data-testid={testId}>
        {busy ? busyLabel : label}
      </button>
    </div>
  );
}
