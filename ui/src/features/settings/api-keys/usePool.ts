import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useLatestLoad } from '../../../hooks/useLatestLoad';
import type { AddApiKeyArgs, ApiKey, KeyUsage, PoolStatus } from '../../../ipc/bindings';
import { type IpcError, listen } from '../../../ipc/client';
import { type ApiKeyChanges, llmConfigApi } from '../../../ipc/llmConfig';
import { usageApi } from '../../../ipc/usage';
import { clockOffset } from '../../../clock';
import { keyRows, type KeyRow } from './keyRows';
import { ownWrites } from './ownWrites';
import { applyAnswer, goneKeys, type KeysAnswer, movesLiveState, noKeys, storedKey, storedKeysOf } from './writeAnswers';

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
 * command answers with what it stored), and its own `llmConfig:changed` reads nothing again;
 * any other `llmConfig:changed` naming this provider reloads the keys, the status and today's
 * use. While a switch or a weight is being written the row shows the value asked for (an
 * override), dropped once the answer is in, so nothing flickers.
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
  /** Full loads in flight: one may have read the keys before a write that answers meanwhile. */
  const loading = useRef(0);
  const [echoes] = useState(ownWrites);
  const shown = useRef(providerId);
  shown.current = providerId;

  const load = useCallback(async () => {
    const loadAll = async () => {
      const [nextKeys, nextStatus] = await Promise.all([llmConfigApi.getApiKeys(providerId), llmConfigApi.getPoolStatus(providerId)]);
      return [nextKeys, nextStatus, await usageToday(providerId, nextStatus.now)] as const;
    };
    loading.current += 1;
    try {
      await loads.run(loadAll, {
        loaded: ([nextKeys, nextStatus, nextToday]) => {
          setKeys(nextKeys);
          setStatus(nextStatus);
          if (nextToday) setToday(nextToday);
          setOffset(clockOffset(nextStatus.now, Date.now()));
          setError(null);
        },
        failed: setError,
      });
    } finally {
      loading.current -= 1;
    }
  }, [providerId, loads]);

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
    echoes.reset();
    void load();
    const stop = listen('llmConfig:changed', (change) => {
      if (change.providerId === providerId && !echoes.heard(Date.now())) void load();
    });
    const poll = setInterval(() => {
      if (document.visibilityState !== 'hidden') void loadStatus();
    }, STATUS_POLL_MS);
    return () => {
      stop();
      clearInterval(poll);
      loads.cancel(); // answers still in flight are for the old provider
    };
  }, [providerId, load, loadStatus, loads, echoes]);

  /**
   * Runs a write and shows what it answered (`answer`). `live`: the write moves the pool's live
   * view of a key, which no answer carries, so the status is asked again. Resolves once the list
   * shows the write.
   */
  const write = useCallback(
    async <T,>(command: () => Promise<T>, answer: (result: T) => KeysAnswer, live = false): Promise<T> => {
      const echo = echoes.expect();
      let result: T;
      try {
        result = await command();
      } catch (e) {
        if (echoes.failed(echo)) void load(); // the event it took was another write's
        throw e;
      }
      echoes.answered(echo, Date.now());
      if (shown.current !== providerId) return result; // the view has moved to another provider
      setKeys((held) => held && applyAnswer(held, answer(result)));
      // A reload in flight may have read the keys before this write: one started now reads after it.
      if (loading.current > 0) void load();
      if (live) await loadStatus();
      return result;
    },
    [providerId, echoes, load, loadStatus],
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
      updateMany: (ids: string[], changes: { enabled?: boolean; weight?: number; quotaGroup?: string }) =>
        write(() => llmConfigApi.updateApiKeys(ids, changes), (stored) => storedKeysOf(ids, stored), movesLiveState(changes)),
      /** Every key of `ids` goes (one that was gone already too): the answer counts them. */
      removeMany: (ids: string[]) => write(() => llmConfigApi.deleteApiKeys(ids), () => goneKeys(ids)),
      reorder: async (ids: string[]) => {
        setOrder(ids);
        try {
          return await write(() => llmConfigApi.reorderApiKeys(providerId, ids), (all): KeysAnswer => ({ kind: 'all', keys: all }));
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
