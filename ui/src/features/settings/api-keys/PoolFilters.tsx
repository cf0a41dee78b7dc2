import { useId } from 'react';
import { useI18n } from '../../../i18n/I18nProvider';
import { STATE_FILTERS, type StateFilter } from './table/keyTable';
import { groupFilterOf, groupFilterValue } from './poolView';
import type { PoolViewState } from './usePoolView';

/** The table's filters: by state, by a search, by quota group (when any key has one); and how many are shown. */
export function PoolFilters({ view, total }: { view: PoolViewState; total: number }) {
  const { t } = useI18n();
  const stateId = useId();
  const searchId = useId();
  const groupId = useId();
  const { groups } = view;
  return (
    <div className="pool__filter" data-testid="pool-filters">
      <label htmlFor={stateId}>{t('table.stateFilter')}</label>
      <select
        id={stateId}
        className="input select"
        value={view.state}
        onChange={(e) => view.setState(e.target.value as StateFilter)}
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
        value={view.search}
        onChange={(e) => view.setSearch(e.target.value)}
        data-testid="pool-search"
      />
      {groups.length > 0 && <label htmlFor={groupId}>{t('add.quotaGroup')}</label>}
      {groups.length > 0 && (
        <select
          id={groupId}
          className="input select"
          value={groupFilterValue(view.group)}
          onChange={(e) => view.setGroup(groupFilterOf(e.target.value))}
          data-testid="pool-group-filter-select"
        >
          <option value="all">{t('pool.groupAll')}</option>
          {groups.map((group) => (
            <option key={group} value={`group:${group}`}>
              {group}
            </option>
          ))}
          {view.ungrouped && <option value="none">{t('pool.groupNone')}</option>}
        </select>
      )}
      {view.shown.length !== total && (
        <span className="muted" role="status" data-testid="pool-filtered">
          {t('pool.filtered', { shown: view.shown.length, total })}
        </span>
      )}
    </div>
  );
}
