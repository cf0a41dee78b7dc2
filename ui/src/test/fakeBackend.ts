import type { ApiKey, KeyStatus, PoolStatus, Provider } from '../ipc/llmConfig';
import type { AppStatus } from '../ipc/app';

/**
 * An in-memory stand-in for the Rust backend, behind the mocked `invoke` and `listen`: it keeps
 * keys, answers the llmConfig commands, and emits `llmConfig:changed` after writes, so
 * component tests exercise the same "write, then follow the event" flow as the real app.
 */
export interface Call {
  command: string;
  args: Record<string, unknown>;
}

type Listener = (event: { event: string; payload: unknown }) => void;

export const READY: AppStatus = {
  version: '0.1.0',
  dataDir: '/data',
  logDir: '/data/logs',
  database: { state: 'ready', path: '/data/keypool.sqlite3' },
};

export function provider(id: string, name: string, extra: Partial<Provider> = {}): Provider {
  return { id, name, kind: 'openai', baseUrl: `https://${id}.example/v1`, apiKeyPreview: null, builtin: true, sortOrder: 0, keyCount: 0, createdAt: 0, updatedAt: 0, ...extra };
}

export function createFakeBackend(now = Date.UTC(2026, 0, 15, 14, 10)) {
  const providers: Provider[] = [
    provider('openai', 'OpenAI', { apiKeyPreview: 'sk-…prov', sortOrder: 0 }),
    provider('anthropic', 'Anthropic', { kind: 'anthropic', sortOrder: 1 }),
  ];
  const keys: (ApiKey & { secret: string })[] = [];
  const live = new Map<string, Partial<KeyStatus>>();
  const listeners = new Map<string, Set<Listener>>();
  const calls: Call[] = [];
  const rejections = new Map<string, unknown>();
  let nextId = 1;
  let clock = now;
  /** When false, writes do not emit (to test the fallback reload). */
  let emitting = true;

  const preview = (secret: string) => (secret.startsWith('$') ? secret : `${secret.slice(0, 3)}…${secret.slice(-4)}`);
  const publicKey = ({ secret: _, ...key }: ApiKey & { secret: string }): ApiKey => ({ ...key });
  const byProvider = (providerId: string) => keys.filter((k) => k.providerId === providerId).sort((a, b) => a.sortOrder - b.sortOrder);
  const find = (id: string) => {
    const key = keys.find((k) => k.id === id);
    if (!key) throw { code: 'not_found', message: `no API key ${id}` };
    return key;
  };

  function emit(providerId: string) {
    if (!emitting) return;
    // like Tauri: delivered asynchronously, after the command answered or around it
    queueMicrotask(() => listeners.get('llmConfig:changed')?.forEach((l) => l({ event: 'llmConfig:changed', payload: { providerId } })));
  }

  function add(providerId: string, secret: string, extra: Partial<ApiKey> = {}): ApiKey {
    const key = {
      id: `key-${nextId++}`,
      providerId,
      label: null,
      apiKeyPreview: preview(secret),
      isEnvRef: secret.startsWith('$'),
      enabled: true,
      weight: 1,
      sortOrder: byProvider(providerId).length,
      disabledReason: null,
      disabledAt: null,
      createdAt: clock,
      updatedAt: clock,
      secret,
      ...extra,
    };
    keys.push(key);
    return publicKey(key);
  }

  const handlers: Record<string, (args: Record<string, unknown>) => unknown> = {
    'app:getStatus': () => READY,
    'llmConfig:getProviders': () => providers.map((p) => ({ ...p, keyCount: byProvider(p.id).length })),
    'llmConfig:getApiKeys': ({ providerId }) => byProvider(providerId as string).map(publicKey),
    'llmConfig:getPoolStatus': ({ providerId }): PoolStatus => ({
      providerId: providerId as string,
      now: clock,
      keys: byProvider(providerId as string).map((k) => ({
        id: k.id,
        label: k.label,
        state: k.enabled ? 'active' : 'disabled',
        coolingUntil: null,
        consecutiveErrors: 0,
        lastError: null,
        lastUsedAt: null,
        requestCount: 0,
        failureCount: 0,
        ...live.get(k.id),
      })),
    }),
    'llmConfig:addApiKey': (args) => {
      const { providerId, apiKey, label, weight, enabled } = args as { providerId: string; apiKey: string; label?: string; weight?: number; enabled?: boolean };
      if (keys.some((k) => k.providerId === providerId && k.secret === apiKey.trim())) {
        throw { code: 'conflict', message: 'this key is already in the pool' };
      }
      const key = add(providerId, apiKey.trim(), { label: label ?? null, weight: weight ?? 1, enabled: enabled ?? true });
      emit(providerId);
      return key;
    },
    'llmConfig:updateApiKey': ({ id, ...changes }) => {
      const key = find(id as string);
      Object.assign(key, changes, { updatedAt: clock });
      emit(key.providerId);
      return publicKey(key);
    },
    'llmConfig:toggleApiKey': ({ id, enabled }) => {
      const key = find(id as string);
      key.enabled = enabled as boolean;
      if (key.enabled) key.disabledReason = null;
      emit(key.providerId);
      return publicKey(key);
    },
    'llmConfig:deleteApiKey': ({ id }) => {
      const key = find(id as string);
      keys.splice(keys.indexOf(key), 1);
      emit(key.providerId);
      return { id };
    },
    'llmConfig:reorderApiKeys': ({ providerId, ids }) => {
      (ids as string[]).forEach((id, index) => (find(id).sortOrder = index));
      emit(providerId as string);
      return byProvider(providerId as string).map(publicKey);
    },
    'llmConfig:resetCooldown': ({ id }) => {
      find(id as string);
      live.delete(id as string);
      return { id };
    },
  };

  return {
    calls,
    keys: (providerId = 'openai') => byProvider(providerId).map(publicKey),
    add,
    /** The pool's live view of a key: cooling, statistics. */
    setLive: (id: string, status: Partial<KeyStatus>) => live.set(id, status),
    setClock: (ms: number) => (clock = ms),
    /** The next call of `command` rejects with `error` (a backend `{ code, message, issues }`). */
    rejectNext: (command: string, error: unknown) => rejections.set(command, error),
    stopEmitting: () => (emitting = false),
    emit,
    callsOf: (command: string) => calls.filter((c) => c.command === command).map((c) => c.args),
    async invoke(command: string, args: Record<string, unknown> = {}) {
      calls.push({ command, args });
      for (const [field, value] of Object.entries(args)) {
        if (value === null || value === undefined) throw { code: 'validation', message: `${field}: null`, issues: [{ path: field, message: 'must not be null' }] };
      }
      const rejection = rejections.get(command);
      if (rejection) {
        rejections.delete(command);
        throw rejection;
      }
      const handler = handlers[command];
      if (!handler) throw { code: 'internal', message: `unknown command ${command}` };
      return structuredClone(handler(args));
    },
    async listen(event: string, handler: Listener) {
      const set = listeners.get(event) ?? new Set();
      set.add(handler);
      listeners.set(event, set);
      return () => set.delete(handler);
    },
  };
}

export type FakeBackend = ReturnType<typeof createFakeBackend>;
