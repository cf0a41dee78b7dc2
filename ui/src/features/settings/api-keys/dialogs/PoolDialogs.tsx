import { useMemo } from 'react';
import { ConfirmDeleteDialog } from '../../../../components/ConfirmDeleteDialog';
import { useI18n } from '../../../../i18n/I18nProvider';
import type { KeyTestResult, Provider } from '../../../../ipc/bindings';
import { listen } from '../../../../ipc/client';
import { llmConfigApi } from '../../../../ipc/llmConfig';
import { AddKeyDialog } from './AddKeyDialog';
import { DeleteKeyDialog } from './DeleteKeyDialog';
import { EditKeyDialog } from './EditKeyDialog';
import { keyShapes } from '../import/importPhase';
import { ImportKeysDialog } from '../import/ImportKeysDialog';
import { keyName, type KeyRow } from '../keyRows';
import { exportedText, type PoolDialog } from './poolDialog';
import { RevokedKeyDialog } from './RevokedKeyDialog';
import { BulkRevokedDialog } from './BulkRevokedDialog';
import type { KeyImportApi } from '../import/useKeyImport';
import type { PoolActions } from '../usePool';

interface Props {
  dialog: PoolDialog;
  provider: Provider;
  /** Backend clock minus UI clock. */
  offset: number;
  actions: PoolActions;
  announce: (text: string) => void;
  /** Keys the Add dialog stored. */
  keysAdded: (ids: string[]) => void;
  /** An import ran and the pool has been read again since. */
  importReloaded: () => void;
  /** The selected keys are gone. */
  clearSelection: () => void;
  close: () => void;
  /** Where focus goes when the dialog's own opener is gone. */
  returnFocus: () => HTMLElement | null;
  /** Tests keys in one command, showing each one's result in its row. */
  testMany: (ids: string[]) => Promise<KeyTestResult[]>;
}

/** The open dialog, bound to the pool: what it saves goes through the pool's writes. */
export function PoolDialogs({ dialog, provider, offset, actions, announce, keysAdded, importReloaded, clearSelection, close, returnFocus, testMany }: Props) {
  const { t } = useI18n();
  const importApi: KeyImportApi = useMemo(
    () => ({
      preview: (text, reading) => llmConfigApi.previewKeyImport(provider.id, text, reading),
      start: (importId, settings, leftOut) => llmConfigApi.startKeyImport({ importId, ...settings, ...(leftOut.length > 0 ? { leftOut } : {}) }),
      cancel: (importId) => llmConfigApi.cancelKeyImport(importId),
      onProgress: (handler) => listen('llmConfig:keyImportProgress', handler),
    }),
    [provider.id],
  );
  const asked = { failure: (message: string) => t('pool.actionFailed', { message }), onClose: close, returnFocus };
  const name = (row: KeyRow) => keyName(row, t('key.unlabeled'));

  switch (dialog.kind) {
    case 'none':
      return null;
    case 'add':
      return <AddKeyDialog onAdd={async (key) => keysAdded([(await actions.add(key)).id])} onClose={close} returnFocus={returnFocus} />;
    case 'import':
      return (
        <ImportKeysDialog
          api={importApi}
          shapes={keyShapes(provider.kind)}
          onClose={(started) => {
            // An import answers with counts, not keys: the pool is read again, and the keys new in it are marked.
            if (started) void actions.reload().then(importReloaded);
            close();
          }}
          returnFocus={returnFocus}
        />
      );
    case 'bulkDelete':
      return (
        <ConfirmDeleteDialog
          {...asked}
          title={t('bulkDelete.title')}
          body={t('bulkDelete.body', { count: dialog.ids.length })}
          confirmLabel={t('bulkDelete.confirm', { count: dialog.ids.length })}
          testId="bulk-delete"
          onConfirm={async () => {
            const { deleted } = await actions.removeMany(dialog.ids);
            clearSelection();
            announce(t('bulkbar.deleted', { count: deleted }));
          }}
        />
      );
    case 'exportFull':
      return (
        <ConfirmDeleteDialog
          {...asked}
          title={t('exportFull.title')}
          body={t('exportFull.body', { count: dialog.ids.length })}
          confirmLabel={t('exportFull.confirm')}
          testId="export-full"
          onConfirm={async () => announce(exportedText(t, await llmConfigApi.exportApiKeys(provider.id, dialog.ids, true)))}
        />
      );
    case 'edit':
      return (
        <EditKeyDialog
          name={name(dialog.row)}
          current={dialog.row.key}
          onSave={async (changes) => {
            const saved = await actions.update(dialog.row.key.id, changes);
            announce(t('edit.saved', { name: saved.label ?? saved.apiKeyPreview }));
          }}
          onClose={close}
          returnFocus={returnFocus}
        />
      );
    case 'revoked':
      return (
        <RevokedKeyDialog
          name={name(dialog.row)}
          provider={provider.name}
          status={dialog.status}
          at={dialog.row.key.disabledAt}
          offset={offset}
          onTest={() => llmConfigApi.testApiKey(dialog.row.key.id)}
          onEnable={() => actions.toggle(dialog.row.key.id, true)}
          onClose={close}
          returnFocus={returnFocus}
        />
      );
    case 'bulkRevoked':
      return (
        <BulkRevokedDialog
          provider={provider.name}
          ids={dialog.ids}
          refused={dialog.refused}
          onTest={testMany}
          onEnable={async (ids) => {
            const keys = await actions.updateMany(ids, { enabled: true });
            announce(t('bulkbar.enabled', { count: keys.length }));
          }}
          onClose={close}
          returnFocus={returnFocus}
        />
      );
    case 'delete':
      return (
        <DeleteKeyDialog
          name={name(dialog.row)}
          onConfirm={async () => {
            await actions.remove(dialog.row.key.id);
            announce(t('pool.deleted'));
          }}
          onClose={close}
          returnFocus={returnFocus}
        />
      );
  }
}
