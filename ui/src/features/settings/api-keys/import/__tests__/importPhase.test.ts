import { describe, expect, it } from 'vitest';
import type { KeyImportPreview } from '../../../../../ipc/bindings';
import { focusAfterRemoval, type ImportPhase, keptKeys, keyShapes, noProgress, progressed, withoutLeftOut } from '../importPhase';

const preview: KeyImportPreview = {
  importId: 'import-1',
  found: 3,
  new: [
    { index: 0, preview: 'sk-…0001' },
    { index: 1, preview: 'sk-…0002' },
  ],
  duplicatesInPaste: 1,
  duplicatesInPool: 0,
  unrecognisedLines: [],
};
const start = noProgress(preview);
const running: ImportPhase = { kind: 'running', progress: start, cancelling: false };

describe('an import’s phase', () => {
  it('starts with nothing counted, out of the new keys found', () => {
    expect(start).toMatchObject({ importId: 'import-1', total: 2, checked: 0, added: 0, state: 'running' });
  });

  it('moves the counts on while running, keeping a cancel asked for', () => {
    const next = progressed({ ...running, cancelling: true }, { ...start, checked: 1, added: 1 });
    expect(next).toEqual({ kind: 'running', cancelling: true, progress: { ...start, checked: 1, added: 1 } });
  });

  it('finishes on an ended state, and nothing moves it back', () => {
    const done = progressed(running, { ...start, added: 2, state: 'done' });
    expect(done).toEqual({ kind: 'finished', progress: { ...start, added: 2, state: 'done' } });
    expect(progressed(done, { ...start, checked: 1 }), 'a late running event after the end').toBe(done);
    expect(progressed({ kind: 'edit' }, { ...start, state: 'done' }), 'nothing started here').toEqual({ kind: 'edit' });
  });
});

describe('the keys an import lists before it sends any', () => {
  const three: KeyImportPreview = { ...preview, new: [...preview.new, { index: 4, preview: 'sk-…0004' }] };

  it('names each kind’s key shapes from the kinds’ table', () => {
    expect(keyShapes('openai')).toBe('sk-…');
    expect(keyShapes('gemini')).toBe('AIza…');
    expect(keyShapes('anthropic')).toBe('sk-ant-…');
  });

  it('keeps the keys not left out, by index, and the preview as it was when none are', () => {
    expect(keptKeys(three, new Set([1])).map((k) => k.index)).toEqual([0, 4]);
    expect(withoutLeftOut(three, new Set()), 'nothing left out: the same preview').toBe(three);
    expect(withoutLeftOut(three, new Set([0, 4])).new).toEqual([{ index: 1, preview: 'sk-…0002' }]);
    expect(withoutLeftOut(three, new Set([9])).new, 'an index not in the list changes nothing').toHaveLength(3);
  });

  it('moves the focus to the next row’s Remove, the previous one’s at the end, none when the list empties', () => {
    const kept = three.new;
    expect(focusAfterRemoval(kept, 0), 'the first: the next').toBe(1);
    expect(focusAfterRemoval(kept, 4), 'the last: the previous').toBe(1);
    expect(focusAfterRemoval([kept[2]], 4), 'the only one: none').toBeNull();
    expect(focusAfterRemoval(kept, 7), 'not listed: none').toBeNull();
  });
});
