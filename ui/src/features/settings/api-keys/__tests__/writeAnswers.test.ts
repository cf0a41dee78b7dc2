import { describe, expect, it } from 'vitest';
import type { ApiKey } from '../../../../ipc/bindings';
import { applyAnswer, goneKeys, movesLiveState, noKeys, storedKey, storedKeysOf } from '../writeAnswers';
import { writeGenerations } from '../writeGenerations';

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

describe('writeGenerations', () => {
  it('reads nothing again for its own write’s event, and reads any other', () => {
    const writes = writeGenerations();
    expect(writes.answered(writes.started(), 5), 'nothing heard meanwhile').toBe(false);
    expect(writes.heard(5), 'the write’s own event: its answer is shown').toBe(false);
    expect(writes.heard(6), 'another’s change').toBe(true);
    expect(writes.heard(5), 'one event per write: the same generation again is not taken for an echo').toBe(true);
  });

  it('takes an event that comes before its write’s answer as its echo once the answer names it', () => {
    const writes = writeGenerations();
    const write = writes.started();
    expect(writes.heard(7), 'it may be the write’s own: wait for the answer').toBe(false);
    expect(writes.answered(write, 7), 'it was').toBe(false);
    expect(writes.heard(8)).toBe(true);
  });

  it('reads an event heard while its write ran when the answer names another generation', () => {
    const writes = writeGenerations();
    const write = writes.started();
    expect(writes.heard(3)).toBe(false);
    expect(writes.answered(write, 4), 'the event was of another write').toBe(true);
    expect(writes.heard(4), 'and the write’s own, coming later, reads nothing').toBe(false);
  });

  it('never loses another’s change to an echo that does not come', () => {
    const writes = writeGenerations();
    writes.answered(writes.started(), 1);
    expect(writes.heard(2), 'the event of generation 1 never came; 2 is not it').toBe(true);
  });

  it('says when a failed write had an event wait for it: a refused write emits nothing', () => {
    const writes = writeGenerations();
    const refused = writes.started();
    expect(writes.heard(2)).toBe(false);
    expect(writes.failed(refused), 'the event was another’s, to be read').toBe(true);
    expect(writes.failed(writes.started()), 'nothing heard, nothing to read').toBe(false);
  });

  it('holds events until every write in flight has answered', () => {
    const writes = writeGenerations();
    const first = writes.started();
    const second = writes.started();
    expect([writes.heard(1), writes.heard(2), writes.heard(3)]).toEqual([false, false, false]);
    expect(writes.answered(second, 2), 'the first is still in flight').toBe(false);
    expect(writes.answered(first, 1), 'generation 3 is neither write’s').toBe(true);
  });

  it('keeps the newest generation it applied, as the writes committed', () => {
    const writes = writeGenerations();
    expect(writes.newest()).toBe(0);
    const early = writes.started();
    writes.answered(writes.started(), 9);
    writes.answered(early, 8);
    expect(writes.newest(), 'an answer that comes late does not move it back').toBe(9);
  });

  it('forgets every write on reset', () => {
    const writes = writeGenerations();
    const old = writes.started();
    writes.answered(writes.started(), 4);
    writes.reset();
    expect(writes.heard(4), 'another provider: nothing of the old one is taken for an echo').toBe(true);
    expect(writes.answered(old, 5), 'a write of the old provider answering late').toBe(false);
    expect(writes.heard(5), 'is not this view’s').toBe(true);
    expect(writes.newest()).toBe(0);
  });
});
