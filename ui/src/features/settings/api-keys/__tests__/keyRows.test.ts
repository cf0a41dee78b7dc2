import { describe, expect, it } from 'vitest';
import type { ApiKey, KeyStatus, KeyUsage, PoolStatus } from '../../../../ipc/bindings';
import { httpStatusOf, keyRows, moved } from '../keyRows';

const key = (id: string, extra: Partial<ApiKey> = {}): ApiKey => ({
  id, providerId: 'openai', label: null, apiKeyPreview: 'sk-…0000', isEnvRef: false, enabled: true, weight: 1,
  sortOrder: 0, disabledReason: null, disabledAt: null, createdAt: 0, updatedAt: 0, rpmLimit: null, maxConcurrent: null, quotaGroup: null, ...extra,
});

const live = (id: string, extra: Partial<KeyStatus> = {}): KeyStatus => ({
  id, label: null, quotaGroup: null, state: 'active', coolingUntil: null, consecutiveErrors: 0, lastError: null, lastUsedAt: null,
  requestCount: 0, failureCount: 0, budgets: [], inFlight: 0, nextProbeAt: null, unsetVar: null, balance: null, windows: null, expiresAt: null, ...extra,
});

const used = (keyId: string, extra: Partial<KeyUsage> = {}): KeyUsage => ({
  providerId: 'openai', keyId, sentWith: 'poolKey', label: null, p50LatencyMs: null, p95LatencyMs: null, requests: 0, failures: 0, rateLimited: 0,
  inputTokens: 0, cachedTokens: 0, outputTokens: 0, cost: null, costComplete: true, ...extra,
});

describe('keyRows', () => {
  it('lists keys in sortOrder, then creation order', () => {
    const rows = keyRows([key('c', { sortOrder: 1 }), key('b', { sortOrder: 0, createdAt: 2 }), key('a', { sortOrder: 0, createdAt: 1 })], null);
    expect(rows.map((r) => r.key.id)).toEqual(['a', 'b', 'c']);
  });

  it('takes cooldowns and the last use from the pool, today’s use from the ledger, and being off from the stored key', () => {
    const status: PoolStatus = {
      providerId: 'openai',
      now: 1000,
      keys: [
        live('a', { state: 'cooling', coolingUntil: 61_000, consecutiveErrors: 1, lastUsedAt: 900, requestCount: 99, failureCount: 9 }),
        live('b', { state: 'disabled' }),
      ],
    };
    const today = [used('a', { requests: 7, failures: 1, inputTokens: 110, cachedTokens: 50, outputTokens: 12 }), used('b', { requests: 1 })];
    const rows = keyRows([key('a'), key('b', { enabled: false, disabledReason: 'HTTP 401', disabledAt: 500 }), key('c')], status, today);
    expect(rows.map((r) => r.state)).toEqual([
      { kind: 'cooling', until: 61_000 },
      { kind: 'disabled', reason: 'HTTP 401', at: 500 },
      { kind: 'active' },
    ]);
    expect(rows[0], 'not the counters the pool keeps in memory since the start').toMatchObject({ today: { requests: 7, failures: 1, tokens: 122 }, lastUsedAt: 900 });
    expect(rows[1].today).toEqual({ requests: 1, failures: 0, tokens: 0 });
    expect(rows[2], 'a key with no attempt today has used nothing').toMatchObject({ today: { requests: 0, failures: 0, tokens: 0 }, lastUsedAt: null });
  });

  it('shows a key out of credit as such, with its next check, unless the user switched it off', () => {
    const status: PoolStatus = {
      providerId: 'openai',
      now: 1000,
      keys: [
        live('a', { state: 'exhausted', nextProbeAt: 901_000, lastError: { kind: 'quota_exhausted', status: 402, message: 'out of credit (HTTP 402)', at: 1000 } }),
        live('b', { state: 'exhausted', nextProbeAt: 901_000 }),
      ],
    };
    const rows = keyRows([key('a'), key('b', { enabled: false })], status);
    expect(rows.map((r) => r.state)).toEqual([
      { kind: 'exhausted', nextProbeAt: 901_000 },
      { kind: 'disabled', reason: null, at: null },
    ]);
  });
});

describe('keys kept in a keychain that is not reachable', () => {
  it('show as unavailable unless switched off', () => {
    const status: PoolStatus = { providerId: 'openai', now: 1000, keys: [live('a', { state: 'unavailable' }), live('b', { state: 'unavailable' })] };
    const rows = keyRows([key('a'), key('b', { enabled: false })], status);
    expect(rows.map((r) => r.state)).toEqual([{ kind: 'unavailable' }, { kind: 'disabled', reason: null, at: null }]);
  });
});

describe('helpers', () => {
  it('shows a $NAME key whose variable is unset as such, unless switched off', () => {
    const status: PoolStatus = { providerId: 'openai', now: 0, keys: [live('env', { unsetVar: 'OPENAI_KEY' }), live('off', { unsetVar: 'OTHER' })] };
    const rows = keyRows([key('env', { isEnvRef: true }), key('off', { isEnvRef: true, enabled: false })], status);
    expect(rows.map((r) => r.state)).toEqual([{ kind: 'unsetVar', name: 'OPENAI_KEY' }, { kind: 'disabled', reason: null, at: null }]);
  });

  it('reads the HTTP status out of a disabled reason', () => {
    expect(httpStatusOf('HTTP 401')).toBe('401');
    expect(httpStatusOf('revoked')).toBeNull();
  });

  it('moves an item', () => {
    expect(moved(['a', 'b', 'c'], 0, 2)).toEqual(['b', 'c', 'a']);
    expect(moved(['a', 'b', 'c'], 2, 0)).toEqual(['c', 'a', 'b']);
  });
});
