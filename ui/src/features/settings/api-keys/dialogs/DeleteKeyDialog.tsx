import { ConfirmDeleteDialog } from '../../../../components/ConfirmDeleteDialog';
import { useI18n } from '../../../../i18n/I18nProvider';

interface Props {
  name: string;
  onConfirm: () => Promise<unknown>;
  onClose: () => void;
  returnFocus?: () => HTMLElement | null | undefined;
}

/** Asks before deleting a key, and says that it cannot be undone. */
export function DeleteKeyDialog({ name, onConfirm, onClose, returnFocus }: Props) {
  const { t } = useI18n();
  return (
    <ConfirmDeleteDialog
      title={t('delete.title')}
      body={t('delete.body', { name })}
      confirmLabel={t('delete.confirm')}
      failure={(message) => t('pool.actionFailed', { message })}
      testId="delete-key"
      onConfirm={onConfirm}
      onClose={onClose}
      returnFocus={returnFocus}
    />
  );
}
