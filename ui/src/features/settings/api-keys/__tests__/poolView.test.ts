import { describe, expect, it } from 'vitest';
import type { ApiKey } from '../../../../ipc/bindings';
import { keyRows } from '../keyRows';
import { POOL_ORDER } from '../table/keyTable';
import { groupFilterOf, groupFilterValue, poolView, type PoolViewChoice } from '../poolView';

const key = (id: string, extra: Partial<ApiKey> = {}): ApiKey => ({
  id, providerId: 'openai', label: id, apiKeyPreview: 'sk-…0000', isEnvRef: false, enabled: true, weight: 1,
  sortOrder: 0, disabledReason: null, disabledAt: null, createdAt: 0, updatedAt: 0, rpmLimit: null, maxConcurrent: null, quotaGroup: null, ...extra,
});
const rows = keyRows([key('a', { sortOrder: 0, quotaGroup: 'org-2' }), key('b', { sortOrder: 1 }), key('c', { sortOrder: 2, quotaGroup: 'org-1' })], null);
const choice = (extra: Partial<PoolViewChoice> = {}): PoolViewChoice => ({ group: { kind: 'all' }, state: 'all', search: '', sort: POOL_ORDER, ...extra });
const shownIds = (choose: PoolViewChoice, from = rows) => poolView(from, choose, 'en').shown.map((r) => r.key.id);

describe('poolView', () => {
  it('offers the groups the keys name, sorted, and "No group" while a key has none', () => {
    const view = poolView(rows, choice(), 'en');
    expect(view.groups).toEqual(['org-1', 'org-2']);
    expect(view.ungrouped).toBe(true);
    expect(view.reorderable, 'the pool’s own order').toBe(true);
  });

  it('shows a group’s keys, or the keys of none, and every key again once no key is in the chosen one', () => {
    expect(shownIds(choice({ group: { kind: 'group', name: 'org-1' } }))).toEqual(['c']);
    expect(shownIds(choice({ group: { kind: 'none' } }))).toEqual(['b']);
    expect(shownIds(choice({ group: { kind: 'group', name: 'org-9' } })), 'a group that is gone').toEqual(['a', 'b', 'c']);
    const grouped = rows.filter((r) => r.key.quotaGroup !== null);
    expect(poolView(grouped, choice({ group: { kind: 'none' } }), 'en').group, '"No group" with no such key left').toEqual({ kind: 'all' });
  });

  it('cannot reorder while sorted by a column', () => {
    expect(poolView(rows, choice({ sort: { column: 'weight', direction: 'ascending' } }), 'en').reorderable).toBe(false);
  });

  it('gives a group filter as a select value and back', () => {
    for (const filter of [{ kind: 'all' }, { kind: 'none' }, { kind: 'group', name: 'group:odd' }] as const) {
      expect(groupFilterOf(groupFilterValue(filter))).toEqual(filter);
    }
  });
});
