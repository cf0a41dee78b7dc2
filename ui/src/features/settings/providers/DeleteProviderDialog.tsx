import { ConfirmDeleteDialog } from '../../../components/ConfirmDeleteDialog';
import { useI18n } from '../../../i18n/I18nProvider';
import type { Provider } from '../../../ipc/bindings';

interface Props {
  provider: Provider;
  onConfirm: () => Promise<unknown>;
  onClose: () => void;
}

/** Says how many pool keys go with the provider and that it cannot be undone. */
export function DeleteProviderDialog({ provider, onConfirm, onClose }: Props) {
  const { t } = useI18n();
  const body =
    provider.keyCount > 0
      ? t('provider.deleteBody', { name: provider.name, count: provider.keyCount })
      : t('provider.deleteBodyNoKeys', { name: provider.name });
  return (
    <ConfirmDeleteDialog
      title={t('provider.deleteTitle', { name: provider.name })}
      body={body}
      confirmLabel={t('provider.deleteConfirm')}
      failure={(message) => t('pool.actionFailed', { message })}
      testId="delete-provider"
      onConfirm={onConfirm}
      onClose={onClose}
    />
  );
}
