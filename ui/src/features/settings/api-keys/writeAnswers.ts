import type { ApiKey, Written } from '../../../ipc/bindings';

/**
 * What a write to the keys stored, as the list of keys sees it. Every key command answers with
 * what it stored, so the list takes that answer instead of reading every key again.
 */
export type KeysAnswer =
  /** These rows as stored now (each replaces the row of its id, or joins the list); `gone`: ids that exist no more. */
  | { kind: 'rows'; keys: readonly ApiKey[]; gone: readonly string[] }
  /** The provider's whole list, in its order (a reorder answers it). */
  | { kind: 'all'; keys: readonly ApiKey[] };

/** One key as stored now (an add, an update, a toggle). */
export const storedKey = (key: ApiKey): KeysAnswer => ({ kind: 'rows', keys: [key], gone: [] });

/** No key changed (a cooldown reset: the pool's memory only). */
export const noKeys: KeysAnswer = { kind: 'rows', keys: [], gone: [] };

/** Keys that went (a delete). */
export const goneKeys = (ids: readonly string[]): KeysAnswer => ({ kind: 'rows', keys: [], gone: ids });

/**
 * The keys of `asked` as stored now: a bulk update answers the ones that exist, so an asked id
 * not among them is gone.
 */
export function storedKeysOf(asked: readonly string[], keys: readonly ApiKey[]): KeysAnswer {
  const answered = new Set(keys.map((key) => key.id));
  return { kind: 'rows', keys, gone: asked.filter((id) => !answered.has(id)) };
}

/** A write's answer without the generation the write got: what it stored. */
export function writtenValue<T extends object>({ generation: _, ...value }: Written<T>): T {
  return value as T;
}

/** The keys held after `answer`; every other key stays as it was. */
export function applyAnswer(keys: readonly ApiKey[], answer: KeysAnswer): ApiKey[] {
  if (answer.kind === 'all') return [...answer.keys];
  const stored = new Map(answer.keys.map((key) => [key.id, key]));
  const gone = new Set(answer.gone);
  const held = new Set(keys.map((key) => key.id));
  return [...keys.filter((key) => !gone.has(key.id)).map((key) => stored.get(key.id) ?? key), ...answer.keys.filter((key) => !held.has(key.id))];
}

/**
 * Whether a change moves the pool's live view of a key, which only the backend knows and no key
 * row carries: a key switched on starts afresh, another quota group shares other cooldowns and
 * budgets, another secret may resolve (or not) anew. A weight, a label or limits move nothing there.
 */
export function movesLiveState(changes: { enabled?: boolean; quotaGroup?: string; apiKey?: string }): boolean {
  return changes.enabled === true || changes.quotaGroup !== undefined || changes.apiKey !== undefined;
}
