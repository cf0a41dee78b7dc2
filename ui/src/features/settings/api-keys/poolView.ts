import { filterRows, quotaGroups, type GroupFilter, type KeyRow } from './keyRows';
import { canReorder, viewRows, type Sort, type StateFilter } from './table/keyTable';

/** What the user chose to see of the pool: a quota group, a state, a search, a sort. */
export interface PoolViewChoice {
  group: GroupFilter;
  state: StateFilter;
  search: string;
  sort: Sort;
}

/** What the table shows for a choice, derived from the pool's rows. */
export interface PoolView {
  /** The quota groups the keys name, sorted; the group filter offers them. */
  groups: string[];
  /** Some key has no group: the filter offers "No group". */
  ungrouped: boolean;
  /** The group filter in force: the one chosen, or every key when no key is in it any more. */
  group: GroupFilter;
  /** The rows shown, in the order shown. */
  shown: KeyRow[];
  /** The pool's own order can be changed here (not while sorted by a column). */
  reorderable: boolean;
}

/** The table for `choice`. A group no key names any more (its keys moved or went) shows every key again. */
export function poolView(rows: readonly KeyRow[], choice: PoolViewChoice, intlTag: string): PoolView {
  const groups = quotaGroups(rows, intlTag);
  const ungrouped = rows.some((row) => row.key.quotaGroup === null);
  const gone = (choice.group.kind === 'group' && !groups.includes(choice.group.name)) || (choice.group.kind === 'none' && !ungrouped);
  const group: GroupFilter = gone ? { kind: 'all' } : choice.group;
  const view = { state: choice.state, search: choice.search, sort: choice.sort };
  const shown = viewRows(filterRows(rows, group), view, new Intl.Collator(intlTag).compare);
  return { groups, ungrouped, group, shown, reorderable: canReorder(view) };
}

/** A group filter as the value of its `<select>` option, and back. */
export function groupFilterValue(filter: GroupFilter): string {
  return filter.kind === 'group' ? `group:${filter.name}` : filter.kind;
}

export function groupFilterOf(value: string): GroupFilter {
  if (value.startsWith('group:')) return { kind: 'group', name: value.slice('group:'.length) };
  return { kind: value === 'none' ? 'none' : 'all' };
}
