import { useState } from 'react';
import { useI18n } from '../../../i18n/I18nProvider';
import type { GroupFilter, KeyRow } from './keyRows';
import { keepExisting, nextSort, POOL_ORDER, selectClick, type Sort, type SortColumn, type StateFilter } from './table/keyTable';
import { poolView } from './poolView';

interface Selection {
  ids: ReadonlySet<string>;
  /** The row last clicked: a shift-click selects from it. */
  anchor: string | null;
}

const NONE: Selection = { ids: new Set(), anchor: null };

/**
 * What the user sees of the pool and has selected: the filters, the search, the sort (the view
 * itself derived by `poolView`), and the keys the bulk actions work on.
 */
export function usePoolView(rows: readonly KeyRow[]) {
  const { intlTag } = useI18n();
  const [group, setGroup] = useState<GroupFilter>({ kind: 'all' });
  const [state, setState] = useState<StateFilter>('all');
  const [search, setSearch] = useState('');
  const [sort, setSort] = useState<Sort>(POOL_ORDER);
  const [selection, setSelection] = useState<Selection>(NONE);

  const view = poolView(rows, { group, state, search, sort }, intlTag);
  const shownIds = view.shown.map((row) => row.key.id);
  /** Only keys that still exist count as selected (a reload may have removed some). */
  const selected = keepExisting(selection.ids, rows);

  return {
    ...view,
    state,
    search,
    sort,
    selected,
    setGroup,
    setState,
    setSearch,
    /** A click on a column's header; answers the sort it leads to. */
    sortBy: (column: Exclude<SortColumn, 'order'>): Sort => {
      const next = nextSort(sort, column);
      setSort(next);
      return next;
    },
    /** A row's checkbox changed; `range`: shift was held. */
    select: (id: string, checked: boolean, range: boolean) => setSelection({ ids: selectClick(selected, shownIds, selection.anchor, id, checked, range), anchor: id }),
    /** Every shown row joins the selection (`checked`), or leaves it. */
    selectShown: (checked: boolean) =>
      setSelection({ ids: checked ? new Set([...selected, ...shownIds]) : new Set([...selected].filter((id) => !shownIds.includes(id))), anchor: null }),
    clearSelection: () => setSelection(NONE),
  };
}

export type PoolViewState = ReturnType<typeof usePoolView>;
