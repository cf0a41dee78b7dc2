import { useEffect, useId, useMemo, useRef, useState } from 'react';
import { Icon } from '../../../components/Icon';
import { useI18n } from '../../../i18n/I18nProvider';
import { formatCount } from '../../../i18n/format';
import type { Provider } from '../../../ipc/bindings';
import { llmConfigApi } from '../../../ipc/llmConfig';
import { AddKeyDialog } from './AddKeyDialog';
import { DeleteKeyDialog } from './DeleteKeyDialog';
import { EditKeyDialog } from './EditKeyDialog';
import { KeyList, keyName } from './KeyList';
import { filterRows, quotaGroups, reorderShown, revokedStatusOf, type GroupFilter, type KeyRow } from './keyRows';
import { canReorder, keepExisting, nextSort, POOL_ORDER, selectClick, STATE_FILTERS, viewRows, type Sort, type StateFilter } from './keyTable';
import { ImportKeysDialog, type KeyImportApi } from './ImportKeysDialog';
import { BulkBar } from './BulkBar';
import { ConfirmDeleteDialog } from '../../../components/ConfirmDeleteDialog';
import { listen } from '../../../ipc/client';
import { RevokedKeyDialog } from './RevokedKeyDialog';
import { useKeyTests } from './useKeyTests';
import { usePool } from './usePool';
import { errorText } from '../../../i18n/problems';
import type { MessageKey } from '../../../i18n';

/** Which dialog is open, if any: each mode carries exactly what it needs. */
type Mode =
  | { kind: 'list' }
  | { kind: 'add' }
  | { kind: 'import' }
  /** Deleting the selected keys: one confirmation naming the count. */
  | { kind: 'bulkDelete'; ids: string[] }
  /** Exporting the selected keys in full: a warning first, then the backend's save dialog. */
  | { kind: 'exportFull'; ids: string[] }
  | { kind: 'delete'; row: KeyRow }
  | { kind: 'edit'; row: KeyRow }
  /** Switching back on a key the provider refused (`status`): asked first, with a test offered. */
  | { kind: 'revoked'; row: KeyRow; status: string };

/** Settings → Providers → a provider → API Key Pool. */
export function ApiKeyPoolSection({ provider }: { provider: Provider }) {
  const { t, intlTag } = useI18n();
  const titleId = useId();
  const filterId = useId();
  const stateFilterId = useId();
  const searchId = useId();
  const [filter, setFilter] = useState<GroupFilter>({ kind: 'all' });
  const [stateFilter, setStateFilter] = useState<StateFilter>('all');
  const [search, setSearch] = useState('');
  const [sort, setSort] = useState<Sort>(POOL_ORDER);
  const [selection, setSelection] = useState<{ ids: ReadonlySet<string>; anchor: string | null }>({ ids: new Set(), anchor: null });
  const { state, actions } = usePool(provider.id);
  const { tests, test, testMany } = useKeyTests();
  const [mode, setMode] = useState<Mode>({ kind: 'list' });
  const [announcement, setAnnouncement] = useState('');
  /** What was just added, said where it can be seen (the new rows are scrolled to). */
  const [added, setAdded] = useState<{ count: number; ids: string[] } | null>(null);
  const [problem, setProblem] = useState<string>();
  const addButton = useRef<HTMLButtonElement>(null);
  /** The pool's key ids when an import began: the keys after it that are not among them are new. */
  const beforeImport = useRef<Set<string>>(new Set());
  /** A bulk action is running (the bar's buttons wait). */
  const [bulkBusy, setBulkBusy] = useState(false);
  /** An import ran and the list has been reloaded since: its new keys are to be marked. */
  const [importDone, setImportDone] = useState(false);
  const importApi: KeyImportApi = useMemo(
    () => ({
      preview: (text) => llmConfigApi.previewKeyImport(provider.id, text),
      start: (importId, settings) => llmConfigApi.startKeyImport({ importId, ...settings }),
      cancel: (importId) => llmConfigApi.cancelKeyImport(importId),
      onProgress: (handler) => listen('llmConfig:keyImportProgress', handler),
    }),
    [provider.id],
  );

  const close = () => setMode({ kind: 'list' });
  const toAddButton = () => addButton.current;

  /** Runs an action from a row; a failure is shown above the list (it has no field). */
  function attempt(action: () => Promise<unknown>, done?: string) {
    setProblem(undefined);
    action().then(
      () => done && setAnnouncement(done),
      (error: unknown) => setProblem(t('pool.actionFailed', { message: errorText(t, error) })),
    );
  }

  /** Runs a bulk action on the selection; its result is announced, a failure shown above the list. */
  function bulk<T>(action: () => Promise<T>, done: (result: T) => string) {
    setProblem(undefined);
    setBulkBusy(true);
    action().then(
      (result) => {
        setBulkBusy(false);
        setAnnouncement(done(result));
      },
      (error: unknown) => {
        setBulkBusy(false);
        setProblem(t('pool.actionFailed', { message: errorText(t, error) }));
      },
    );
  }

  const rows = state.kind === 'loaded' ? state.rows : [];
  const enabled = rows.filter((r) => r.key.enabled).length;
  const offset = state.kind === 'loaded' ? state.offset : 0;

  /** On goes straight on, except for a key the provider refused: that one is asked about first. */
  function toggle(id: string, on: boolean) {
    const row = rows.find((r) => r.key.id === id);
    const status = on && row ? revokedStatusOf(row.key) : null;
    if (row && status) setMode({ kind: 'revoked', row, status });
    else attempt(() => actions.toggle(id, on));
  }

  function keysAdded(ids: string[]) {
    if (ids.length > 0) setAdded({ count: ids.length, ids });
  }
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs once the reload after an import has landed; `rows` is read then
  useEffect(() => {
    if (!importDone) return;
    setImportDone(false);
    keysAdded(rows.filter((r) => !beforeImport.current.has(r.key.id)).map((r) => r.key.id));
  }, [importDone]);

  const groups = quotaGroups(rows, intlTag);
  const ungrouped = rows.some((r) => r.key.quotaGroup === null);
  // A group no key names any more (its keys moved or went) shows every key again.
  const chosen: GroupFilter =
    (filter.kind === 'group' && !groups.includes(filter.name)) || (filter.kind === 'none' && !ungrouped) ? { kind: 'all' } : filter;
  const view = { state: stateFilter, search, sort };
  const collator = new Intl.Collator(intlTag);
  const shown = viewRows(filterRows(rows, chosen), view, collator.compare);
  const reorderable = canReorder(view);
  /** Only keys that still exist count as selected (a reload may have removed some). */
  const selected = keepExisting(selection.ids, rows);
  const shownIds = shown.map((r) => r.key.id);
  const filterValue = chosen.kind === 'group' ? `group:${chosen.name}` : chosen.kind;

  return (
    <section className="pool" aria-labelledby={titleId} data-testid="api-key-pool">
      <header className="pool__header">
        <div>
          <h3 id={titleId}>{t('pool.title')}</h3>
          {state.kind === 'loaded' && rows.length > 0 && (
            <p className="muted pool__summary" data-testid="pool-summary">
              {t('pool.summary', { enabled: formatCount(enabled, intlTag), total: formatCount(rows.length, intlTag) })}
            </p>
          )}
        </div>
        <div className="pool__actions">
          <button
            type="button"
            className="button"
            aria-haspopup="dialog"
            onClick={() => {
              beforeImport.current = new Set(rows.map((r) => r.key.id));
              setMode({ kind: 'import' });
            }}
            data-testid="import-keys"
          >
            <Icon name="paste" size={16} />
            {t('pool.import')}
          </button>
          <button
            ref={addButton}
            type="button"
            className="button button--primary"
            onClick={() => setMode({ kind: 'add' })}
            data-testid="add-key"
          >
            <Icon name="plus" size={16} />
            {t('pool.add')}
          </button>
        </div>
      </header>

      <p className="visually-hidden" role="status" aria-live="polite" data-testid="pool-announcement">
        {announcement}
      </p>
      {problem && (
        <p className="form-error" role="alert" data-testid="pool-problem">
          {problem}
        </p>
      )}
      <p className={added ? 'pool__notice' : 'visually-hidden'} role="status" data-testid="pool-added">
        {added && (
          <>
            <Icon name="check" size={16} />
            {t('pool.addedMany', { count: added.count })}
          </>
        )}
      </p>

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
      {state.kind === 'loaded' && rows.length === 0 && (
        <div className="pool__empty" data-testid="pool-empty">
          <span className="pool__empty-icon" aria-hidden="true">
            <Icon name="key" size={28} />
          </span>
          <h4>{t('pool.emptyTitle')}</h4>
          <p>{t('pool.emptyBody')}</p>
          <p>{t('pool.emptyWeights')}</p>
          <p className="pool__fallback" data-testid="pool-fallback">
            {provider.apiKeyPreview
              ? t('pool.emptyFallbackSet', { preview: provider.apiKeyPreview })
              : provider.local
                ? t('pool.emptyLocal')
                : t('pool.emptyFallbackUnset')}
          </p>
        </div>
      )}
      {state.kind === 'loaded' && rows.length > 0 && (
        <div className="pool__filter" data-testid="pool-filters">
          <label htmlFor={stateFilterId}>{t('table.stateFilter')}</label>
          <select
            id={stateFilterId}
            className="input select"
            value={stateFilter}
            onChange={(e) => setStateFilter(e.target.value as StateFilter)}
            data-testid="pool-state-filter"
          >
            <option value="all">{t('table.stateAll')}</option>
            {STATE_FILTERS.map((kind) => (
              <option key={kind} value={kind}>
                {t(`table.state.${kind}`)}
              </option>
            ))}
          </select>
          <label htmlFor={searchId}>{t('table.search')}</label>
          <input
            id={searchId}
            type="search"
            className="input pool__search"
            placeholder={t('table.searchHint')}
            autoComplete="off"
            spellCheck={false}
            value={search}
            onChange={(e) => setSearch(e.target.value)}
            data-testid="pool-search"
          />
          {groups.length > 0 && <label htmlFor={filterId}>{t('add.quotaGroup')}</label>}
          {groups.length > 0 && (
          <select
            id={filterId}
            className="input select"
            value={filterValue}
            onChange={(e) => {
              const value = e.target.value;
              setFilter(value.startsWith('group:') ? { kind: 'group', name: value.slice('group:'.length) } : { kind: value === 'none' ? 'none' : 'all' });
            }}
            data-testid="pool-group-filter-select"
          >
            <option value="all">{t('pool.groupAll')}</option>
            {groups.map((group) => (
              <option key={group} value={`group:${group}`}>
                {group}
              </option>
            ))}
            {ungrouped && <option value="none">{t('pool.groupNone')}</option>}
          </select>
          )}
          {shown.length !== rows.length && (
            <span className="muted" role="status" data-testid="pool-filtered">
              {t('pool.filtered', { shown: shown.length, total: rows.length })}
            </span>
          )}
        </div>
      )}
      {state.kind === 'loaded' && selected.size > 0 && (
        <BulkBar
          count={selected.size}
          shownCount={shown.length}
          busy={bulkBusy}
          onSelectShown={() => setSelection({ ids: new Set([...selected, ...shownIds]), anchor: null })}
          onClear={() => setSelection({ ids: new Set(), anchor: null })}
          onEnable={() => bulk(() => actions.updateMany([...selected], { enabled: true }), (keys) => t('bulkbar.enabled', { count: keys.length }))}
          onDisable={() => bulk(() => actions.updateMany([...selected], { enabled: false }), (keys) => t('bulkbar.disabled', { count: keys.length }))}
          onWeight={(weight) => bulk(() => actions.updateMany([...selected], { weight }), (keys) => t('bulkbar.weightSet', { count: keys.length, weight }))}
          onGroup={(group) =>
            bulk(
              () => actions.updateMany([...selected], { quotaGroup: group }),
              (keys) => (group ? t('bulkbar.groupSet', { count: keys.length, group }) : t('bulkbar.groupCleared', { count: keys.length })),
            )
          }
          onTest={() =>
            bulk(
              async () => {
                const results = await testMany([...selected]);
                void actions.refreshStatus();
                return results;
              },
              (results) => t('bulkbar.tested', { count: results.length, ok: results.filter((r) => r.ok).length, failed: results.filter((r) => !r.ok).length }),
            )
          }
          onExportCsv={() =>
            bulk(
              () => llmConfigApi.exportApiKeys(provider.id, [...selected], false),
              (exported) => (exported.path === null ? t('bulkbar.exportCancelled') : t('bulkbar.exported', { count: exported.count, path: exported.path })),
            )
          }
          onExportFull={() => setMode({ kind: 'exportFull', ids: [...selected] })}
          onDelete={() => setMode({ kind: 'bulkDelete', ids: [...selected] })}
        />
      )}
      {state.kind === 'loaded' && rows.length > 0 && shown.length === 0 && (
        <p className="muted pool__no-match" data-testid="pool-no-match">
          {t('table.noMatch')}
        </p>
      )}
      {state.kind === 'loaded' && rows.length > 0 && (
        <KeyList
          rows={shown}
          sort={sort}
          onSort={(column) => {
            const next = nextSort(sort, column);
            setSort(next);
            setAnnouncement(
              next.column === 'order'
                ? t('table.poolOrder')
                : t('table.sorted', { column: t(`pool.col${column[0].toUpperCase()}${column.slice(1)}` as MessageKey), direction: t(`table.${next.direction}`) }),
            );
          }}
          selected={selected}
          onSelect={(id, checked, range) => setSelection({ ids: selectClick(selected, shownIds, selection.anchor, id, checked, range), anchor: id })}
          onSelectShown={(checked) =>
            setSelection({ ids: checked ? new Set([...selected, ...shownIds]) : new Set([...selected].filter((id) => !shownIds.includes(id))), anchor: null })
          }
          offset={state.offset}
          onWeight={(id, weight) => actions.setWeight(id, weight)}
          onToggle={toggle}
          onEnable={(id) => attempt(() => actions.toggle(id, true))}
          onDelete={(row) => setMode({ kind: 'delete', row })}
          onEdit={(row) => setMode({ kind: 'edit', row })}
          fresh={added?.ids ?? []}
          onResetCooldown={(id) => attempt(() => actions.resetCooldown(id))}
          onReorder={reorderable ? (ids, movedId) => {
            const row = rows.find((r) => r.key.id === movedId);
            if (!row) return;
            const position = ids.indexOf(movedId) + 1;
            const order = reorderShown(
              rows.map((r) => r.key.id),
              ids,
            );
            attempt(
              () => actions.reorder(order),
              t('pool.moved', { name: keyName(row, t('key.unlabeled')), position, total: ids.length }),
            );
          } : null}
          onCooldownEnd={() => void actions.refreshStatus()}
          tests={tests}
          // A test of an out-of-credit key re-checks its credit and may put it back in rotation.
          onTest={(id) => void test(id).then(() => actions.refreshStatus())}
        />
      )}

      {mode.kind === 'add' && (
        <AddKeyDialog
          onAdd={async (key) => {
            const stored = await actions.add(key);
            keysAdded([stored.id]);
          }}
          onClose={close}
          returnFocus={toAddButton}
        />
      )}
      {mode.kind === 'import' && (
        <ImportKeysDialog
          api={importApi}
          onClose={(started) => {
            // The keys now in the pool that were not before: marked, the first scrolled to, counted.
            if (started) void actions.reload().then(() => setImportDone(true));
            close();
          }}
          returnFocus={toAddButton}
        />
      )}
      {mode.kind === 'bulkDelete' && (
        <ConfirmDeleteDialog
          title={t('bulkDelete.title')}
          body={t('bulkDelete.body', { count: mode.ids.length })}
          confirmLabel={t('bulkDelete.confirm', { count: mode.ids.length })}
          failure={(message) => t('pool.actionFailed', { message })}
          testId="bulk-delete"
          onConfirm={async () => {
            const { deleted } = await actions.removeMany(mode.ids);
            setSelection({ ids: new Set(), anchor: null });
            setAnnouncement(t('bulkbar.deleted', { count: deleted }));
          }}
          onClose={close}
          returnFocus={toAddButton}
        />
      )}
      {mode.kind === 'exportFull' && (
        <ConfirmDeleteDialog
          title={t('exportFull.title')}
          body={t('exportFull.body', { count: mode.ids.length })}
          confirmLabel={t('exportFull.confirm')}
          failure={(message) => t('pool.actionFailed', { message })}
          testId="export-full"
          onConfirm={async () => {
            const exported = await llmConfigApi.exportApiKeys(provider.id, mode.ids, true);
            setAnnouncement(exported.path === null ? t('bulkbar.exportCancelled') : t('bulkbar.exported', { count: exported.count, path: exported.path }));
          }}
          onClose={close}
          returnFocus={toAddButton}
        />
      )}
      {mode.kind === 'edit' && (
        <EditKeyDialog
          name={keyName(mode.row, t('key.unlabeled'))}
          current={mode.row.key}
          onSave={async (changes) => {
            const saved = await actions.update(mode.row.key.id, changes);
            setAnnouncement(t('edit.saved', { name: saved.label ?? saved.apiKeyPreview }));
          }}
          onClose={close}
          returnFocus={toAddButton}
        />
      )}
      {mode.kind === 'revoked' && (
        <RevokedKeyDialog
          name={keyName(mode.row, t('key.unlabeled'))}
          provider={provider.name}
          status={mode.status}
          at={mode.row.key.disabledAt}
          offset={offset}
          onTest={() => llmConfigApi.testApiKey(mode.row.key.id)}
          onEnable={() => actions.toggle(mode.row.key.id, true)}
          onClose={close}
          returnFocus={toAddButton}
        />
      )}
      {mode.kind === 'delete' && (
        <DeleteKeyDialog
          name={keyName(mode.row, t('key.unlabeled'))}
          onConfirm={async () => {
            await actions.remove(mode.row.key.id);
            setAnnouncement(t('pool.deleted'));
          }}
          onClose={close}
          returnFocus={toAddButton}
        />
      )}
    </section>
  );
}
