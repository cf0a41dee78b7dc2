import { describe, expect, it } from 'vitest';
import type { ApiKey } from '../../../../ipc/bindings';
import { ECHO_WAIT_MS, ownWrites } from '../ownWrites';
import { applyAnswer, goneKeys, movesLiveState, noKeys, storedKey, storedKeysOf } from '../writeAnswers';

const key = (id: string, extra: Partial<ApiKey> = {}): ApiKey => ({
  id, providerId: 'openai', label: null, apiKeyPreview: 'sk-…0000', isEnvRef: false, enabled: true, weight: 1,
  sortOrder: 0, disabledReason: null, disabledAt: null, createdAt: 0, updatedAt: 0, rpmLimit: null, maxConcurrent: null, quotaGroup: null, ...extra,
});
const ids = (keys: readonly ApiKey[]) => keys.map((k) => k.id);

describe('applyAnswer', () => {
  const held = [key('a'), key('b', { weight: 2 }), key('c')];

  it('replaces the answered row in its place and leaves every other row as it was', () => {
    const next = applyAnswer(held, storedKey(key('b', { weight: 7 })));
    expect(ids(next), 'same keys, same places').toEqual(['a', 'b', 'c']);
    expect(next[1].weight, 'the row as stored').toBe(7);
    expect(next[0], 'untouched rows are the same objects').toBe(held[0]);
  });

  it('adds a row the list does not hold yet, and drops the keys that went', () => {
    expect(ids(applyAnswer(held, storedKey(key('d'))))).toEqual(['a', 'b', 'c', 'd']);
    expect(ids(applyAnswer(held, goneKeys(['a', 'c'])))).toEqual(['b']);
    expect(applyAnswer(held, noKeys), 'nothing answered, nothing changed').toEqual(held);
  });

  it('takes a bulk update’s rows, and an asked key it does not answer as gone', () => {
    const next = applyAnswer(held, storedKeysOf(['a', 'b'], [key('b', { enabled: false })]));
    expect(ids(next), 'a exists no more').toEqual(['b', 'c']);
    expect(next[0].enabled).toBe(false);
  });

  it('takes a whole list as it is (a reorder)', () => {
    const all = [key('c', { sortOrder: 0 }), key('a', { sortOrder: 1 }), key('b', { sortOrder: 2 })];
    expect(applyAnswer(held, { kind: 'all', keys: all })).toEqual(all);
  });
});

describe('movesLiveState', () => {
  it('is true only for what the pool’s live view follows', () => {
    expect(movesLiveState({ enabled: true }), 'a key switched on starts afresh').toBe(true);
    expect(movesLiveState({ enabled: false }), 'a key switched off is off by its row').toBe(false);
    expect(movesLiveState({ quotaGroup: 'org-1' })).toBe(true);
    expect(movesLiveState({ quotaGroup: '' }), 'leaving a group moves it too').toBe(true);
    expect(movesLiveState({ apiKey: 'sk-new' })).toBe(true);
    expect(movesLiveState({}), 'a weight, a label, limits').toBe(false);
  });
});

describe('ownWrites', () => {
  it('takes the event that comes while a write runs as its echo, and reloads for the next', () => {
    const writes = ownWrites();
    const echo = writes.expect();
    expect(writes.heard(0), 'the write’s own event').toBe(true);
    writes.answered(echo, 1);
    expect(writes.heard(2), 'another’s change').toBe(false);
  });

  it('takes the event that comes after the answer as its echo, once', () => {
    const writes = ownWrites();
    writes.answered(writes.expect(), 0);
    expect(writes.heard(10)).toBe(true);
    expect(writes.heard(20), 'one event per write').toBe(false);
  });

  it('gives up an answered write’s echo that never comes, so it takes no later change of another’s', () => {
    const writes = ownWrites();
    writes.answered(writes.expect(), 0);
    expect(writes.heard(ECHO_WAIT_MS + 1)).toBe(false);
  });

  it('says when a failed write had taken an event: it was another’s, to be read', () => {
    const writes = ownWrites();
    const refused = writes.expect();
    expect(writes.heard(0)).toBe(true);
    expect(writes.failed(refused), 'a refused write emits nothing: the event was another’s').toBe(true);
    expect(writes.failed(writes.expect()), 'nothing taken, nothing to read').toBe(false);
  });

  it('takes one event per write in flight, and forgets them all on reset', () => {
    const writes = ownWrites();
    writes.expect();
    writes.expect();
    expect([writes.heard(0), writes.heard(0), writes.heard(0)]).toEqual([true, true, false]);
    writes.expect();
    writes.reset();
    expect(writes.heard(0), 'another provider: nothing of the old one is waited for').toBe(false);
  });
});
