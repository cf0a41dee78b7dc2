import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useLatestLoad } from '../../../hooks/useLatestLoad';
import type { AddApiKeyArgs, ApiKey, KeyUsage, PoolStatus } from '../../../ipc/bindings';
import { type IpcError, listen } from '../../../ipc/client';
import { type ApiKeyChanges, llmConfigApi } from '../../../ipc/llmConfig';
import { usageApi } from '../../../ipc/usage';
import { clockOffset } from '../../../clock';
import { keyRows, type KeyRow } from './keyRows';

/** How long to wait for `llmConfig:changed` after a write before reloading anyway. */
const EVENT_FALLBACK_MS = 3000;
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

interface Waiter {
  /** Only a reload started after this one counts: it reads what the write stored. */
  after: number;
  resolve: () => void;
}

/**
 * A provider's API key pool: the stored keys joined with the pool's live status.
 *
 * The list follows the backend: after a write it is reloaded when `llmConfig:changed` names this
 * provider, never patched from a guess. While a write is in flight the row shows the value asked
 * for (an override), dropped once the reload after the event has landed, so nothing flickers.
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
  const waiters = useRef<Waiter[]>([]);

  const load = useCallback(async () => {
    const loadAll = async () => {
      const [nextKeys, nextStatus] = await Promise.all([llmConfigApi.getApiKeys(providerId), llmConfigApi.getPoolStatus(providerId)]);
      return [nextKeys, nextStatus, await usageToday(providerId, nextStatus.now)] as const;
    };
    const mine = await loads.run(loadAll, {
      loaded: ([nextKeys, nextStatus, nextToday]) => {
        setKeys(nextKeys);
        setStatus(nextStatus);
        if (nextToday) setToday(nextToday);
        setOffset(clockOffset(nextStatus.now, Date.now()));
        setError(null);
      },
      failed: setError,
    });
    const settled = waiters.current.filter((w) => w.after < mine);
    waiters.current = waiters.current.filter((w) => w.after >= mine);
    for (const waiter of settled) waiter.resolve();
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
    void load();
    const stop = listen('llmConfig:changed', (change) => {
      if (change.providerId === providerId) void load();
    });
    const poll = setInterval(() => {
      if (document.visibilityState !== 'hidden') void loadStatus();
    }, STATUS_POLL_MS);
    return () => {
      stop();
      clearInterval(poll);
      loads.cancel(); // answers still in flight are for the old provider
    };
  }, [providerId, load, loadStatus, loads]);

  /**
   * Runs a write and resolves after the list reflects it: the reload triggered by the event
   * (or, if the event never comes, one started after a grace period).
   */
  const write = useCallback(
    async <T,>(command: () => Promise<T>): Promise<T> => {
      let resolveWaiter!: () => void;
      const reflected = new Promise<void>((resolve) => (resolveWaiter = resolve));
      const waiter: Waiter = { after: loads.lastNumber(), resolve: resolveWaiter };
      waiters.current.push(waiter);
      try {
        const result = await command();
        const fallback = setTimeout(() => void load(), EVENT_FALLBACK_MS);
        await reflected;
        clearTimeout(fallback);
        return result;
      } catch (e) {
        waiters.current = waiters.current.filter((w) => w !== waiter);
        throw e;
      }
    },
    [load, loads],
  );

  const withOverride = useCallback(
    async <T,>(id: string, override: Override, command: () => Promise<T>): Promise<T> => {
      setOverrides((all) => ({ ...all, [id]: { ...all[id], ...override } }));
      try {
        return await write(command);
      } finally {
        setOverrides(({ [id]: _, ...rest }) => rest);
      }
    },
    [write],
  );

  const actions = useMemo(
    () => ({
      add: (key: Omit<AddApiKeyArgs, 'providerId'>) => write(() => llmConfigApi.addApiKey({ providerId, ...key })),
      setWeight: (id: string, weight: number) => withOverride(id, { weight }, () => llmConfigApi.updateApiKey(id, { weight })),
      /** Label, weight, limits, quota group, a new secret: whatever `changes` gives, in one write. */
      update: (id: string, changes: ApiKeyChanges) => write(() => llmConfigApi.updateApiKey(id, changes)),
      toggle: (id: string, enabled: boolean) => withOverride(id, { enabled }, () => llmConfigApi.toggleApiKey(id, enabled)),
      remove: (id: string) => write(() => llmConfigApi.deleteApiKey(id)),
      /** Enabled, weight or quota group set on every key of `ids`, in one write. */
      updateMany: (ids: string[], changes: { enabled?: boolean; weight?: number; quotaGroup?: string }) => write(() => llmConfigApi.updateApiKeys(ids, changes)),
      removeMany: (ids: string[]) => write(() => llmConfigApi.deleteApiKeys(ids)),
      reorder: async (ids: string[]) => {
        setOrder(ids);
        try {
          return await write(() => llmConfigApi.reorderApiKeys(providerId, ids));
        } finally {
          setOrder(null);
        }
      },
      /** A cooldown lives only in the pool's memory: no event follows, so reload the status here. */
      resetCooldown: async (id: string) => {
        await llmConfigApi.resetCooldown(id);
        await loadStatus();
      },
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
