import { useI18n } from '../../../../i18n/I18nProvider';
import type { KeyTestResult } from '../../../../ipc/bindings';
import { type KeyRow, revokedStatusOf } from '../keyRows';
import { llmConfigApi } from '../../../../ipc/llmConfig';
import { BulkBar } from './BulkBar';
import { exportedText, type PoolDialog } from '../dialogs/poolDialog';
import type { PoolFeedback } from '../usePoolFeedback';
import type { PoolActions } from '../usePool';
import type { PoolViewState } from '../usePoolView';

interface Props {
  providerId: string;
  view: PoolViewState;
  actions: PoolActions;
  feedback: PoolFeedback;
  /** Tests the keys in one command; resolves with their results. */
  testMany: (ids: string[]) => Promise<KeyTestResult[]>;
  /** Opens a dialog that asks first (a delete, a full export, turning on refused keys). */
  open: (dialog: PoolDialog) => void;
  /** Every row of the pool, to tell which selected keys the provider refused. */
  rows: readonly KeyRow[];
}

/** The bulk bar, bound to the selected keys: each button one command, its result announced. */
export function PoolBulkBar({ providerId, view, actions, feedback, testMany, open, rows }: Props) {
  const { t } = useI18n();
  const ids = () => [...view.selected];
  const { bulk } = feedback;
  return (
    <BulkBar
      count={view.selected.size}
      shownCount={view.shown.length}
      busy={feedback.busy}
      onSelectShown={() => view.selectShown(true)}
      onClear={view.clearSelection}
      onEnable={() => {
        // As for one key: those the provider refused are asked about first, with a test offered.
        const refused = rows.filter((row) => view.selected.has(row.key.id) && revokedStatusOf(row.key) !== null).map((row) => row.key.id);
        if (refused.length > 0) open({ kind: 'bulkRevoked', ids: ids(), refused });
        else bulk(() => actions.updateMany(ids(), { enabled: true }), (keys) => t('bulkbar.enabled', { count: keys.length }));
      }}
      onDisable={() => bulk(() => actions.updateMany(ids(), { enabled: false }), (keys) => t('bulkbar.disabled', { count: keys.length }))}
      onWeight={(weight) => bulk(() => actions.updateMany(ids(), { weight }), (keys) => t('bulkbar.weightSet', { count: keys.length, weight }))}
      onGroup={(group) =>
        bulk(
          () => actions.updateMany(ids(), { quotaGroup: group }),
          (keys) => (group ? t('bulkbar.groupSet', { count: keys.length, group }) : t('bulkbar.groupCleared', { count: keys.length })),
        )
      }
      onTest={() =>
        bulk(
          async () => {
            const results = await testMany(ids());
            void actions.refreshStatus();
            return results;
          },
          (results) => t('bulkbar.tested', { count: results.length, ok: results.filter((r) => r.ok).length, failed: results.filter((r) => !r.ok).length }),
        )
      }
      onExportCsv={() => bulk(() => llmConfigApi.exportApiKeys(providerId, ids(), false), (exported) => exportedText(t, exported))}
      onExportFull={() => open({ kind: 'exportFull', ids: ids() })}
      onDelete={() => open({ kind: 'bulkDelete', ids: ids() })}
    />
  );
}
