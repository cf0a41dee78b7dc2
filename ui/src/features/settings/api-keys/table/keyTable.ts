import type { KeyRow, RowState } from '../keyRows';

/**
 * What the key table shows of the pool: a state filter, a search, a sort, and the selection the
 * bulk actions work on. Pure: the component keeps the state, these functions derive the rows.
 */

/** The states a user filters by; a `$NAME` key without a value counts as unavailable (not used). */
export const STATE_FILTERS = ['active', 'cooling', 'exhausted', 'disabled', 'unavailable'] as const;
export type StateFilter = 'all' | (typeof STATE_FILTERS)[number];

export function stateGroupOf(state: RowState): (typeof STATE_FILTERS)[number] {
  return state.kind === 'unsetVar' ? 'unavailable' : state.kind;
}

/** The columns a user sorts by; `order` is the pool's own order (sortOrder), the one reordering changes. */
export type SortColumn = 'order' | 'key' | 'weight' | 'state' | 'usage' | 'enabled';
export interface Sort {
  column: SortColumn;
  direction: 'ascending' | 'descending';
}
export const POOL_ORDER: Sort = { column: 'order', direction: 'ascending' };

/** States in the order a sort by state puts them: usable first, then the ones resting, then off. */
const STATE_RANK: Record<(typeof STATE_FILTERS)[number], number> = { active: 0, cooling: 1, exhausted: 2, unavailable: 3, disabled: 4 };

export interface TableView {
  state: StateFilter;
  /** Matched, case-insensitively, against the label, the preview and the quota group. */
  search: string;
  sort: Sort;
}

/**
 * The rows shown, in the order shown. `rows` come in the pool's order; a sort is stable, so equal
 * rows keep that order. `name` is how an unlabelled key is named (its preview), for sorting by key.
 */
export function viewRows(rows: readonly KeyRow[], view: TableView, compare: (a: string, b: string) => number): KeyRow[] {
  const needle = view.search.trim().toLocaleLowerCase();
  const shown = rows.filter((row) => {
    if (view.state !== 'all' && stateGroupOf(row.state) !== view.state) return false;
    if (!needle) return true;
    const { label, apiKeyPreview, quotaGroup } = row.key;
    return [label, apiKeyPreview, quotaGroup].some((text) => text?.toLocaleLowerCase().includes(needle));
  });
  if (view.sort.column === 'order') return view.sort.direction === 'ascending' ? shown : shown.reverse();
  const sign = view.sort.direction === 'ascending' ? 1 : -1;
  const by = sorter(view.sort.column, compare);
  return shown
    .map((row, index) => ({ row, index }))
    .sort((a, b) => sign * by(a.row, b.row) || a.index - b.index)
    .map(({ row }) => row);
}

function sorter(column: Exclude<SortColumn, 'order'>, compare: (a: string, b: string) => number): (a: KeyRow, b: KeyRow) => number {
  switch (column) {
    case 'key':
      return (a, b) => compare(a.key.label ?? a.key.apiKeyPreview, b.key.label ?? b.key.apiKeyPreview);
    case 'weight':
      return (a, b) => a.key.weight - b.key.weight;
    case 'state':
      return (a, b) => STATE_RANK[stateGroupOf(a.state)] - STATE_RANK[stateGroupOf(b.state)];
    case 'usage':
      return (a, b) => a.today.requests - b.today.requests || a.today.tokens - b.today.tokens;
    case 'enabled':
      return (a, b) => Number(a.key.enabled) - Number(b.key.enabled);
  }
}

/**
 * The pool's own order can be changed only while the rows are shown in it (not sorted by a
 * column). Filtered rows can: the shown keys trade the places they hold among themselves, every
 * other key keeps its place (`reorderShown`), as the quota group filter always did.
 */
export function canReorder(view: TableView): boolean {
  return view.sort.column === 'order' && view.sort.direction === 'ascending';
}

/** A click on a column's header: ascending first, then descending, then back to the pool's order. */
export function nextSort(current: Sort, column: Exclude<SortColumn, 'order'>): Sort {
  if (current.column !== column) return { column, direction: 'ascending' };
  return current.direction === 'ascending' ? { column, direction: 'descending' } : POOL_ORDER;
}

/**
 * The selection after a click on `id`'s checkbox (`checked`: its new state). With shift held and
 * an anchor among the shown rows, every shown row from the anchor to `id` takes that state.
 */
export function selectClick(
  selected: ReadonlySet<string>,
  shownIds: readonly string[],
  anchor: string | null,
  id: string,
  checked: boolean,
  range: boolean,
): Set<string> {
  const next = new Set(selected);
  const from = anchor === null ? -1 : shownIds.indexOf(anchor);
  const to = shownIds.indexOf(id);
  const ids = range && from >= 0 && to >= 0 ? shownIds.slice(Math.min(from, to), Math.max(from, to) + 1) : [id];
  for (const each of ids) {
    if (checked) next.add(each);
    else next.delete(each);
  }
  return next;
}

/** The selection without keys that are gone (deleted elsewhere, or by a bulk delete). */
export function keepExisting(selected: ReadonlySet<string>, rows: readonly KeyRow[]): Set<string> {
  const ids = new Set(rows.map((row) => row.key.id));
  return new Set([...selected].filter((id) => ids.has(id)));
}
