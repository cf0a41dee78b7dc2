import type { ApiKey, Budget, KeyBalance, KeyStatus, KeyUsage, KeyWindows, PoolStatus } from '../../../ipc/bindings';

/** What the state badge shows: a discriminated union so each state carries exactly its data. */
export type RowState =
  | { kind: 'active' }
  | { kind: 'cooling'; until: number }
  /** A `$NAME` key whose variable has no usable value: the pool skips it until it has one. */
  | { kind: 'unsetVar'; name: string }
  /** Kept in the system keychain, which is not reachable now: not deleted, not used. */
  | { kind: 'unavailable' }
  /** Out of credit: out of rotation, probed in the background; back by itself when a probe succeeds. */
  | { kind: 'exhausted'; nextProbeAt: number | null }
  /** `reason` is the backend's (`HTTP 401`), null when the user switched the key off. */
  | { kind: 'disabled'; reason: string | null; at: number | null };

/** A key's use since the user's midnight, from the usage ledger (it survives restarts). */
export interface TodayUsage {
  requests: number;
  failures: number;
  /** Input (cached included) and output tokens. */
  tokens: number;
}

export interface KeyRow {
  key: ApiKey;
  state: RowState;
  today: TodayUsage;
  lastUsedAt: number | null;
  /** What the provider last announced the key has left, per model. */
  budgets: Budget[];
  /** Requests using the key right now. */
  inFlight: number;
  /** What the key's account has left, as last read; null where the provider reads none. */
  balance: KeyBalance | null;
  /** What the key's coding plan has left of each window, as last read; null where none is read. */
  windows: KeyWindows | null;
  /** When the key expires, where it says (a short-term Bedrock key). */
  expiresAt: number | null;
}

/**
 * Joins the stored keys (the list, in sortOrder) with the pool's live view and today's usage.
 * The stored entry decides whether a key is off; the pool adds cooldowns, running out of credit,
 * budgets and the last use. A key the pool has not seen yet (status fetched before the key was
 * added) counts as active; a key the ledger has no attempt of today has used nothing.
 */
export function keyRows(keys: readonly ApiKey[], status: PoolStatus | null, today: readonly KeyUsage[] = []): KeyRow[] {
  const byId = new Map<string, KeyStatus>(status?.keys.map((s) => [s.id, s]) ?? []);
  const usage = new Map(today.map((u) => [u.keyId, u]));
  return [...keys]
    .sort((a, b) => a.sortOrder - b.sortOrder || a.createdAt - b.createdAt)
    .map((key) => {
      const live = byId.get(key.id);
      return {
        key,
        state: rowState(key, live),
        today: todayOf(usage.get(key.id)),
        lastUsedAt: live?.lastUsedAt ?? null,
        budgets: live?.budgets ?? [],
        inFlight: live?.inFlight ?? 0,
        balance: live?.balance ?? null,
        windows: live?.windows ?? null,
        expiresAt: live?.expiresAt ?? null,
      };
    });
}

function todayOf(usage: KeyUsage | undefined): TodayUsage {
  return usage
    ? { requests: usage.requests, failures: usage.failures, tokens: usage.inputTokens + usage.outputTokens }
    : { requests: 0, failures: 0, tokens: 0 };
}

function rowState(key: ApiKey, live: KeyStatus | undefined): RowState {
  if (!key.enabled) return { kind: 'disabled', reason: key.disabledReason, at: key.disabledAt };
  if (live?.unsetVar) return { kind: 'unsetVar', name: live.unsetVar };
  if (live?.state === 'unavailable') return { kind: 'unavailable' };
  if (live?.state === 'exhausted') return { kind: 'exhausted', nextProbeAt: live.nextProbeAt };
  if (live?.state === 'cooling' && live.coolingUntil !== null) return { kind: 'cooling', until: live.coolingUntil };
  return { kind: 'active' };
}

/** How a key is known: its label, else its preview, else `unlabeled`. */
export function keyName(row: KeyRow, unlabeled: string): string {
  return row.key.label ?? (row.key.apiKeyPreview || unlabeled);
}

/**
 * The status a key was refused with when the provider refused the key itself (`401`, `403`: it
 * may have been revoked), so switching it back on is asked about first; null for any other.
 */
export function revokedStatusOf(key: ApiKey): string | null {
  if (key.enabled || key.disabledReason === null) return null;
  const status = httpStatusOf(key.disabledReason);
  return status === '401' || status === '403' ? status : null;
}

/**
 * A model of a key resting on its own while the key serves its other models: cooling after its
 * per-minute quota, or used up for the day until the provider's day ends. Its quota group's.
 */
export interface ModelRest {
  scope: string;
  kind: 'cooling' | 'usedUp';
  /** When it serves again (backend clock). */
  until: number;
}

/** The models that rest at `now` (backend clock), in the pool's order; a used-up day says more than a cooldown. */
export function modelRests(budgets: readonly Budget[], now: number): ModelRest[] {
  return budgets.flatMap((budget): ModelRest[] => {
    if (budget.usedUpUntil !== null && budget.usedUpUntil > now) return [{ scope: budget.scope, kind: 'usedUp', until: budget.usedUpUntil }];
    if (budget.coolingUntil !== null && budget.coolingUntil > now) return [{ scope: budget.scope, kind: 'cooling', until: budget.coolingUntil }];
    return [];
  });
}

/** `HTTP 401` → `401`; anything else is not an HTTP status. */
export function httpStatusOf(reason: string): string | null {
  return /^HTTP (\d{3})$/.exec(reason.trim())?.[1] ?? null;
}

/** Which keys the table shows: every key, the keys of no quota group, or one group's. */
export type GroupFilter = { kind: 'all' } | { kind: 'none' } | { kind: 'group'; name: string };

/** The quota groups the keys name, each once, sorted as the UI's language sorts. */
export function quotaGroups(rows: readonly KeyRow[], intlTag: string): string[] {
  const names = new Set(rows.flatMap((row) => (row.key.quotaGroup === null ? [] : [row.key.quotaGroup])));
  return [...names].sort(new Intl.Collator(intlTag).compare);
}

export function filterRows(rows: readonly KeyRow[], filter: GroupFilter): KeyRow[] {
  switch (filter.kind) {
    case 'all':
      return [...rows];
    case 'none':
      return rows.filter((row) => row.key.quotaGroup === null);
    case 'group':
      return rows.filter((row) => row.key.quotaGroup === filter.name);
  }
}

/**
 * The whole pool's order after the keys shown (a filtered part of it) were reordered: they trade
 * the places they hold among themselves, every other key keeps its place. `shownOrder` holds the
 * shown keys' ids in their new order.
 */
export function reorderShown(allIds: readonly string[], shownOrder: readonly string[]): string[] {
  const shown = new Set(shownOrder);
  let next = 0;
  return allIds.map((id) => (shown.has(id) ? shownOrder[next++] : id));
}

/** Moves the item at `from` to `to` (both in range), returning a new array. */
export function moved<T>(items: readonly T[], from: number, to: number): T[] {
  const next = [...items];
  const [item] = next.splice(from, 1);
  next.splice(to, 0, item);
  return next;
}
