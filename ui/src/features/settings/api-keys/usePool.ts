import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useLatestLoad } from '../../../hooks/useLatestLoad';
import type { AddApiKeyArgs, ApiKey, KeyUsage, PoolStatus, Written } from '../../../ipc/bindings';
import { type IpcError, listen } from '../../../ipc/client';
import { type ApiKeyChanges, llmConfigApi } from '../../../ipc/llmConfig';
import { usageApi } from '../../../ipc/usage';
import { clockOffset } from '../../../clock';
import { keyRows, type KeyRow } from './keyRows';
import { applyAnswer, goneKeys, type KeysAnswer, movesLiveState, noKeys, storedKey, storedKeysOf, writtenValue } from './writeAnswers';
import { writeGenerations } from './writeGenerations';

/** Request counts and cooldowns change without a write; refresh them this often. */
const STATUS_POLL_MS = 10_000;

/**
 * The provider's keys' use since the user's midnight (by the backend's clock, `now`), from the
 * ledger. Best effort: statistics that cannot be read leave the list usable, with the last
 * figures (or none).
 */
async function usageToday(providerId: string, now: number): Promise<KeyUsage[] | null> {
  const midnight = new Date(now);
  midnight.setHours(0, 0, 0, 0);
  try {
    return (await usageApi.getSummary({ providerId, from: midnight.getTime() })).keys;
  } catch {
    return null;
  }
}

export type PoolLoad =
  | { kind: 'loading' }
  | { kind: 'failed'; error: IpcError }
  | { kind: 'loaded'; rows: KeyRow[]; offset: number };

interface Override {
  enabled?: boolean;
  weight?: number;
}

/**
 * A provider's API key pool: the stored keys joined with the pool's live status.
 *
 * The list follows the backend. A write of this view shows what the write answered (each key
 * command answers with what it stored, and the generation its write got), so its own
 * `llmConfig:changed`, which carries that generation, reads nothing again; a `llmConfig:changed`
 * of any other generation naming this provider reloads the keys, the status and today's use (see
 * `writeGenerations`). While a switch or a weight is being written the row shows the value asked
 * for (an override), dropped once the answer is in, so nothing flickers.
 */
export function usePool(providerId: string) {
  const [keys, setKeys] = useState<ApiKey[] | null>(null);
  const [status, setStatus] = useState<PoolStatus | null>(null);
  const [today, setToday] = useState<KeyUsage[]>([]);
  const [offset, setOffset] = useState(0);
  const [error, setError] = useState<IpcError | null>(null);
  const [overrides, setOverrides] = useState<Record<string, Override>>({});
  const [order, setOrder] = useState<string[] | null>(null);

  const loads = useLatestLoad();
  const [generations] = useState(writeGenerations);
  const shown = useRef(providerId);
  shown.current = providerId;

  const load = useCallback(async () => {
    const loadAll = async () => {
      const [nextKeys, nextStatus] = await Promise.all([llmConfigApi.getApiKeys(providerId), llmConfigApi.getPoolStatus(providerId)]);
      return [nextKeys, nextStatus, await usageToday(providerId, nextStatus.now)] as const;
    };
    for (let again = true; again; ) {
      again = false;
      const since = generations.newest();
      await loads.run(loadAll, {
        loaded: ([nextKeys, nextStatus, nextToday]) => {
          // A write of this view answered meanwhile, with a newer generation: the keys may have
          // been read before it committed, and would hide it. Read them again.
          if (generations.newest() !== since) {
            again = true;
            return;
          }
          setKeys(nextKeys);
          setStatus(nextStatus);
          if (nextToday) setToday(nextToday);
          setOffset(clockOffset(nextStatus.now, Date.now()));
          setError(null);
        },
        failed: setError,
      });
    }
  }, [providerId, loads, generations]);

  const loadStatus = useCallback(async () => {
    try {
      const next = await llmConfigApi.getPoolStatus(providerId);
      const nextToday = await usageToday(providerId, next.now);
      setStatus(next);
      setOffset(clockOffset(next.now, Date.now()));
      if (nextToday) setToday(nextToday);
    } catch {
      // a failed refresh of statistics keeps the last ones; the next write or poll retries
    }
  }, [providerId]);

  useEffect(() => {
    setKeys(null);
    setStatus(null);
    setToday([]);
    setError(null);
    generations.reset();
    void load();
    const stop = listen('llmConfig:changed', (change) => {
      if (change.providerId === providerId && generations.heard(change.generation)) void load();
    });
    const poll = setInterval(() => {
      if (document.visibilityState !== 'hidden') void loadStatus();
    }, STATUS_POLL_MS);
    return () => {
      stop();
      clearInterval(poll);
      loads.cancel(); // answers still in flight are for the old provider
    };
  }, [providerId, load, loadStatus, loads, generations]);

  /**
   * Runs a write and shows what it answered (`answer`). `live`: the write moves the pool's live
   * view of a key, which no answer carries, so the status is asked again. Resolves once the list
   * shows the write.
   */
  const write = useCallback(
    async <T extends object>(command: () => Promise<Written<T>>, answer: (result: T) => KeysAnswer, live = false): Promise<T> => {
      const own = generations.started();
      let written: Written<T>;
      try {
        written = await command();
      } catch (e) {
        if (generations.failed(own)) void load(); // an event heard meanwhile was another write's
        throw e;
      }
      const missed = generations.answered(own, written.generation);
      const result = writtenValue(written);
      if (shown.current !== providerId) return result; // the view has moved to another provider
      setKeys((held) => held && applyAnswer(held, answer(result)));
      if (missed) void load();
      if (live) await loadStatus();
      return result;
    },
    [providerId, generations, load, loadStatus],
  );

  const withOverride = useCallback(async <T,>(id: string, override: Override, command: () => Promise<T>): Promise<T> => {
    setOverrides((all) => ({ ...all, [id]: { ...all[id], ...override } }));
    try {
      return await command();
    } finally {
      setOverrides(({ [id]: _, ...rest }) => rest);
    }
  }, []);

  const actions = useMemo(
    () => ({
      add: (key: Omit<AddApiKeyArgs, 'providerId'>) => write(() => llmConfigApi.addApiKey({ providerId, ...key }), storedKey, true),
      setWeight: (id: string, weight: number) => withOverride(id, { weight }, () => write(() => llmConfigApi.updateApiKey(id, { weight }), storedKey)),
      /** Label, weight, limits, quota group, a new secret: whatever `changes` gives, in one write. */
      update: (id: string, changes: ApiKeyChanges) => write(() => llmConfigApi.updateApiKey(id, changes), storedKey, movesLiveState(changes)),
      toggle: (id: string, enabled: boolean) =>
        withOverride(id, { enabled }, () => write(() => llmConfigApi.toggleApiKey(id, enabled), storedKey, movesLiveState({ enabled }))),
      remove: (id: string) => write(() => llmConfigApi.deleteApiKey(id), (gone) => goneKeys([gone.id])),
      /** Enabled, weight or quota group set on every key of `ids`, in one write. */
      updateMany: async (ids: string[], changes: { enabled?: boolean; weight?: number; quotaGroup?: string }) =>
        (await write(() => llmConfigApi.updateApiKeys(ids, changes), (stored) => storedKeysOf(ids, stored.keys), movesLiveState(changes))).keys,
      /** Every key of `ids` goes (one that was gone already too): the answer counts them. */
      removeMany: (ids: string[]) => write(() => llmConfigApi.deleteApiKeys(ids), () => goneKeys(ids)),
      reorder: async (ids: string[]) => {
        setOrder(ids);
        try {
          return (await write(() => llmConfigApi.reorderApiKeys(providerId, ids), (all): KeysAnswer => ({ kind: 'all', keys: all.keys }))).keys;
        } finally {
          setOrder(null);
        }
      },
      /** A cooldown lives only in the pool's memory: no key row changes, the status is read again. */
      resetCooldown: (id: string) => write(() => llmConfigApi.resetCooldown(id), () => noKeys, true),
      refreshStatus: loadStatus,
      reload: load,
    }),
    [providerId, write, withOverride, load, loadStatus],
  );

  const state: PoolLoad = useMemo(() => {
    if (keys === null) return error ? { kind: 'failed', error } : { kind: 'loading' };
    let rows = keyRows(keys, status, today).map((row) => {
      const override = overrides[row.key.id];
      if (!override) return row;
      const key = { ...row.key, ...override };
      return { ...row, key, state: override.enabled === false ? { kind: 'disabled' as const, reason: null, at: null } : override.enabled ? { kind: 'active' as const } : row.state };
    });
    if (order) {
      const index = new Map(order.map((id, i) => [id, i]));
      rows = [...rows].sort((a, b) => (index.get(a.key.id) ?? 0) - (index.get(b.key.id) ?? 0));
    }
    return { kind: 'loaded', rows, offset };
  }, [keys, status, today, error, overrides, order, offset]);

  return { state, actions };
}

export type PoolActions = ReturnType<typeof usePool>['actions'];
