import { ConfirmDeleteDialog } from '../../components/ConfirmDeleteDialog';
import { useI18n } from '../../i18n/I18nProvider';

interface Props {
  title: string;
  onConfirm: () => Promise<unknown>;
  onClose: () => void;
}

/** Asks before deleting a chat and its messages. */
export function DeleteChatDialog({ title, onConfirm, onClose }: Props) {
  const { t } = useI18n();
  return (
    <ConfirmDeleteDialog
      title={t('chat.deleteTitle')}
      body={t('chat.deleteBody', { title })}
      confirmLabel={t('chat.deleteConfirm')}
      failure={(message) => t('chat.actionFailed', { message })}
      testId="delete-chat"
      onConfirm={onConfirm}
      onClose={onClose}
    />
  );
}
