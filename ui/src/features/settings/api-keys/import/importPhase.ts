import { type ImportKeyPreview, type KeyImportPreview, type KeyImportProgress, PROVIDER_KINDS, type ProviderKind } from '../../../../ipc/bindings';

/** What the dialog shows of an import's progress (whose provider it is, the dialog knows). */
export type Progress = Omit<KeyImportProgress, 'providerId'>;

/** Where the import dialog is: the text and settings being edited, the import running, or its end. */
export type ImportPhase =
  | { kind: 'edit' }
  | { kind: 'running'; progress: Progress; cancelling: boolean }
  | { kind: 'finished'; progress: Progress; error?: string };

/** A previewed import before its first key: nothing counted yet. */
export function noProgress(preview: KeyImportPreview): Progress {
  return {
    importId: preview.importId,
    total: preview.new.length,
    checked: 0,
    valid: 0,
    invalid: 0,
    rateLimited: 0,
    unreachable: 0,
    added: 0,
    duplicates: 0,
    state: 'running',
  };
}

/**
 * The phase after the backend told how the import stands (its start's answer, or a progress
 * event): still running, the counts move on; ended, the import is finished. Nothing moves the
 * dialog back to editing, nor past its end.
 */
export function progressed(phase: ImportPhase, progress: Progress): ImportPhase {
  if (phase.kind === 'edit') return phase;
  if (progress.state === 'running') return phase.kind === 'running' ? { ...phase, progress } : phase;
  return { kind: 'finished', progress };
}

/** The keys validation refused: invalid, still rate-limited, or not reachable to check. */
export const refusedCount = (progress: Progress) => progress.invalid + progress.rateLimited + progress.unreachable;

/** Why the refused keys were refused, when one reason covers them all; `mixed` otherwise. */
export function refusedReason(progress: Progress): 'invalid' | 'rateLimited' | 'unreachable' | 'mixed' {
  const buckets = (['invalid', 'rateLimited', 'unreachable'] as const).filter((b) => progress[b] > 0);
  return buckets.length === 1 ? buckets[0] : 'mixed';
}

/** What the keys of a provider of `kind` start with, as the form names them: `sk-…`. */
export function keyShapes(kind: ProviderKind): string {
  const row = PROVIDER_KINDS.find((k) => k.id === kind);
  return (row?.keyPrefixes ?? []).map((prefix) => `${prefix}…`).join(', ');
}

/** The preview's new keys the user kept: its list less those left out (by index). */
export function keptKeys(preview: KeyImportPreview, leftOut: ReadonlySet<number>): ImportKeyPreview[] {
  return leftOut.size === 0 ? preview.new : preview.new.filter((key) => !leftOut.has(key.index));
}

/** `preview` as the user left it: its new keys less those left out. */
export function withoutLeftOut(preview: KeyImportPreview, leftOut: ReadonlySet<number>): KeyImportPreview {
  return leftOut.size === 0 ? preview : { ...preview, new: keptKeys(preview, leftOut) };
}

/**
 * The row whose Remove takes the focus after the row of `index` left the list `kept` (the list
 * before the removal): the next one, else the previous one; `null` when it was the last.
 */
export function focusAfterRemoval(kept: readonly ImportKeyPreview[], index: number): number | null {
  const at = kept.findIndex((key) => key.index === index);
  if (at < 0) return null;
  return kept[at + 1]?.index ?? kept[at - 1]?.index ?? null;
}
