import { useEffect, useId, useRef, useState } from 'react';
import type { MessageKey } from '../../../i18n';
import { useI18n } from '../../../i18n/I18nProvider';
import { errorText } from '../../../i18n/problems';
import type { Provider } from '../../../ipc/bindings';
import { KeyList } from './table/KeyList';
import { keyName, reorderShown, revokedStatusOf } from './keyRows';
import type { SortColumn } from './table/keyTable';
import type { KeyCommands } from './keyCommands';
import { PoolBulkBar } from './bulk/PoolBulkBar';
import type { PoolDialog } from './dialogs/poolDialog';
import { PoolDialogs } from './dialogs/PoolDialogs';
import { PoolEmpty } from './PoolEmpty';
import { PoolFilters } from './PoolFilters';
import { PoolHeader } from './PoolHeader';
import { PoolMessages } from './PoolMessages';
import { useAddedKeys } from './useAddedKeys';
import { useKeyTests } from './useKeyTests';
import { usePool } from './usePool';
import { usePoolFeedback } from './usePoolFeedback';
import { usePoolView } from './usePoolView';
import { useStable } from './useStable';

/**
 * Settings → Providers → a provider → API Key Pool: the pool's keys (usePool), what the user
 * chose to see and select of them (usePoolView), what was just done (usePoolFeedback), and the
 * dialog open, if any (PoolDialogs).
 */
export function ApiKeyPoolSection({ provider }: { provider: Provider }) {
  const { t } = useI18n();
  const titleId = useId();
  const { state, actions } = usePool(provider.id);
  const rows = state.kind === 'loaded' ? state.rows : [];
  const offset = state.kind === 'loaded' ? state.offset : 0;
  const view = usePoolView(rows);
  const feedback = usePoolFeedback();
  const added = useAddedKeys(rows);
  const { tests, test, testMany } = useKeyTests();
  const [dialog, setDialog] = useState<PoolDialog>({ kind: 'none' });
  const addButton = useRef<HTMLButtonElement>(null);

  const commands = useStable<KeyCommands>({
    weight: (id, weight) => {
      added.clear();
      return actions.setWeight(id, weight);
    },
    // On goes straight on, except for a key the provider refused: that one is asked about first.
    toggle: (id, on) => {
      added.clear();
      const row = rows.find((r) => r.key.id === id);
      const status = on && row ? revokedStatusOf(row.key) : null;
      if (row && status) setDialog({ kind: 'revoked', row, status });
      else feedback.attempt(() => actions.toggle(id, on));
    },
    enable: (id) => {
      added.clear();
      feedback.attempt(() => actions.toggle(id, true));
    },
    remove: (row) => {
      added.clear();
      setDialog({ kind: 'delete', row });
    },
    edit: (row) => {
      added.clear();
      setDialog({ kind: 'edit', row });
    },
    resetCooldown: (id) => {
      added.clear();
      feedback.attempt(() => actions.resetCooldown(id));
    },
    cooldownEnd: () => void actions.refreshStatus(),
    // A test of an out-of-credit key re-checks its credit and may put it back in rotation.
    test: (id) => {
      added.clear();
      void test(id).then(() => actions.refreshStatus());
    },
  });

  /** The shown keys' new order, in the whole pool (every key not shown keeps its place). */
  function reorder(ids: string[], movedId: string) {
    const row = rows.find((r) => r.key.id === movedId);
    if (!row) return;
    added.clear();
    const position = ids.indexOf(movedId) + 1;
    const order = reorderShown(
      rows.map((r) => r.key.id),
      ids,
    );
    feedback.attempt(() => actions.reorder(order), t('pool.moved', { name: keyName(row, t('key.unlabeled')), position, total: ids.length }));
  }

  function sortBy(column: Exclude<SortColumn, 'order'>) {
    const next = view.sortBy(column);
    feedback.announce(
      next.column === 'order'
        ? t('table.poolOrder')
        : t('table.sorted', { column: t(`pool.col${column[0].toUpperCase()}${column.slice(1)}` as MessageKey), direction: t(`table.${next.direction}`) }),
    );
  }

  // Choosing keys for a bulk action is going on to something else.
  const clearAdded = added.clear;
  const selecting = view.selected.size > 0;
  useEffect(() => {
    if (selecting) clearAdded();
  }, [selecting, clearAdded]);

  const loaded = state.kind === 'loaded';
  return (
    <section className="pool" aria-labelledby={titleId} data-testid="api-key-pool">
      <PoolHeader
        titleId={titleId}
        counts={loaded && rows.length > 0 ? { enabled: rows.filter((r) => r.key.enabled).length, total: rows.length } : null}
        onImport={() => {
          added.importBegins();
          setDialog({ kind: 'import' });
        }}
        onAdd={() => setDialog({ kind: 'add' })}
        addButton={addButton}
      />
      <PoolMessages announcement={feedback.announcement} problem={feedback.problem} added={added.added} />

      {state.kind === 'loading' && (
        <p className="muted pool__loading" aria-busy="true">
          {t('pool.loading')}
        </p>
      )}
      {state.kind === 'failed' && (
        <div className="form-error" role="alert">
          <p>{t('pool.loadFailed', { message: errorText(t, state.error) })}</p>
          <button type="button" className="button" onClick={() => void actions.reload()}>
            {t('providers.retry')}
          </button>
        </div>
      )}
      {loaded && rows.length === 0 && <PoolEmpty provider={provider} />}
      {loaded && rows.length > 0 && <PoolFilters view={view} total={rows.length} />}
      {loaded && view.selected.size > 0 && (
        <PoolBulkBar providerId={provider.id} view={view} actions={actions} feedback={feedback} testMany={testMany} open={setDialog} rows={rows} />
      )}
      {loaded && rows.length > 0 && view.shown.length === 0 && (
        <p className="muted pool__no-match" data-testid="pool-no-match">
          {t('table.noMatch')}
        </p>
      )}
      {loaded && rows.length > 0 && (
        <KeyList
          rows={view.shown}
          offset={offset}
          commands={commands}
          fresh={added.added?.ids ?? []}
          onReorder={view.reorderable ? reorder : null}
          tests={tests}
          sort={view.sort}
          onSort={sortBy}
          selected={view.selected}
          onSelect={view.select}
          onSelectShown={view.selectShown}
        />
      )}

      <PoolDialogs
        dialog={dialog}
        provider={provider}
        offset={offset}
        actions={actions}
        announce={feedback.announce}
        keysAdded={added.keysAdded}
        importReloaded={added.importReloaded}
        clearSelection={view.clearSelection}
        close={() => setDialog({ kind: 'none' })}
        returnFocus={() => addButton.current}
        testMany={testMany}
      />
    </section>
  );
}
