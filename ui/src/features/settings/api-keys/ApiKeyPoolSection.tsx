import { useId, useRef, useState } from 'react';
import { Icon } from '../../../components/Icon';
import { useI18n } from '../../../i18n/I18nProvider';
import type { Provider } from '../../../ipc/bindings';
import { AddKeyDialog } from './AddKeyDialog';
import { DeleteKeyDialog } from './DeleteKeyDialog';
import { KeyList, keyName } from './KeyList';
import { filterRows, quotaGroups, reorderShown, type GroupFilter, type KeyRow } from './keyRows';
import { LimitsDialog } from './LimitsDialog';
import { PasteKeysDialog } from './PasteKeysDialog';
import { useKeyTests } from './useKeyTests';
import { usePool } from './usePool';
import { errorText } from '../../../i18n/problems';

/** Which dialog is open, if any: each mode carries exactly what it needs. */
type Mode = { kind: 'list' } | { kind: 'add' } | { kind: 'paste' } | { kind: 'delete'; row: KeyRow } | { kind: 'limits'; row: KeyRow };

/** Settings → Providers → a provider → API Key Pool. */
export function ApiKeyPoolSection({ provider }: { provider: Provider }) {
  const { t, intlTag } = useI18n();
  const titleId = useId();
  const filterId = useId();
  const [filter, setFilter] = useState<GroupFilter>({ kind: 'all' });
  const { state, actions } = usePool(provider.id);
  const { tests, test } = useKeyTests();
  const [mode, setMode] = useState<Mode>({ kind: 'list' });
  const [announcement, setAnnouncement] = useState('');
  const [problem, setProblem] = useState<string>();
  const addButton = useRef<HTMLButtonElement>(null);

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

  const rows = state.kind === 'loaded' ? state.rows : [];
  const enabled = rows.filter((r) => r.key.enabled).length;
  const groups = quotaGroups(rows, intlTag);
  const ungrouped = rows.some((r) => r.key.quotaGroup === null);
  // A group no key names any more (its keys moved or went) shows every key again.
  const chosen: GroupFilter =
    (filter.kind === 'group' && !groups.includes(filter.name)) || (filter.kind === 'none' && !ungrouped) ? { kind: 'all' } : filter;
  const shown = filterRows(rows, chosen);
  const filterValue = chosen.kind === 'group' ? `group:${chosen.name}` : chosen.kind;

  return (
    <section className="pool" aria-labelledby={titleId} data-testid="api-key-pool">
      <header className="pool__header">
        <div>
          <h3 id={titleId}>{t('pool.title')}</h3>
          {state.kind === 'loaded' && rows.length > 0 && (
            <p className="muted pool__summary" data-testid="pool-summary">
              {t('pool.summary', { enabled, total: rows.length })}
            </p>
          )}
        </div>
        <div className="pool__actions">
          <button type="button" className="button" onClick={() => setMode({ kind: 'paste' })} data-testid="paste-keys">
            <Icon name="paste" size={16} />
            {t('pool.paste')}
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
          <p className="pool__fallback">
            {provider.apiKeyPreview
              ? t('pool.emptyFallbackSet', { preview: provider.apiKeyPreview })
              : t('pool.emptyFallbackUnset')}
          </p>
        </div>
      )}
      {state.kind === 'loaded' && groups.length > 0 && (
        <div className="pool__filter" data-testid="pool-group-filter">
          <label htmlFor={filterId}>{t('add.quotaGroup')}</label>
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
          {shown.length !== rows.length && (
            <span className="muted" role="status" data-testid="pool-filtered">
              {t('pool.filtered', { shown: shown.length, total: rows.length })}
            </span>
          )}
        </div>
      )}
      {state.kind === 'loaded' && rows.length > 0 && (
        <KeyList
          rows={shown}
          offset={state.offset}
          onWeight={(id, weight) => actions.setWeight(id, weight)}
          onToggle={(id, on) => attempt(() => actions.toggle(id, on))}
          onDelete={(row) => setMode({ kind: 'delete', row })}
          onLimits={(row) => setMode({ kind: 'limits', row })}
          onResetCooldown={(id) => attempt(() => actions.resetCooldown(id))}
          onReorder={(ids, movedId) => {
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
          }}
          onCooldownEnd={() => void actions.refreshStatus()}
          tests={tests}
          // A test of an out-of-credit key re-checks its credit and may put it back in rotation.
          onTest={(id) => void test(id).then(() => actions.refreshStatus())}
        />
      )}

      {mode.kind === 'add' && (
        <AddKeyDialog
          onAdd={async (key) => {
            await actions.add(key);
            setAnnouncement(t('pool.added'));
          }}
          onClose={close}
          returnFocus={toAddButton}
        />
      )}
      {mode.kind === 'paste' && (
        <PasteKeysDialog
          onAdd={(key) => actions.add(key)}
          onClose={(added) => {
            if (added > 0) setAnnouncement(t('pool.addedMany', { count: added }));
            close();
          }}
        />
      )}
      {mode.kind === 'limits' && (
        <LimitsDialog
          name={keyName(mode.row, t('key.unlabeled'))}
          current={mode.row.key}
          onSave={async (limits) => {
            await actions.setLimits(mode.row.key.id, limits);
            setAnnouncement(t('limits.saved', { name: keyName(mode.row, t('key.unlabeled')) }));
          }}
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
