import { describe, expect, it } from 'vitest';
import type { KeyImportPreview } from '../../../../ipc/bindings';
import { type ImportPhase, noProgress, progressed } from '../importPhase';

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
