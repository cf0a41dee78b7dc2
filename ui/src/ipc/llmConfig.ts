import { listen } from '@tauri-apps/api/event';
import { call } from './client';

/** A provider as the backend lists it; its own key only as a masked preview. */
export interface Provider {
  id: string;
  name: string;
  kind: 'openai' | 'anthropic';
  baseUrl: string;
  /** The provider-level key, masked; used while the pool is empty. */
  apiKeyPreview: string | null;
  builtin: boolean;
  sortOrder: number;
  /** The models offered when starting a chat with this provider. */
  models: string[];
  defaultModel: string | null;
  keyCount: number;
  createdAt: number;
  updatedAt: number;
}

/** A pool entry as stored. The secret never comes back: only `apiKeyPreview`. */
export interface ApiKey {
  id: string;
  providerId: string;
  label: string | null;
  /** `sk-…9f3a`, or a `$NAME` reference as written. */
  apiKeyPreview: string;
  isEnvRef: boolean;
  enabled: boolean;
  weight: number;
  sortOrder: number;
  /** Why the backend switched the key off, e.g. `HTTP 401`; null when the user did. */
  disabledReason: string | null;
  disabledAt: number | null;
  createdAt: number;
  updatedAt: number;
}

export type KeyState = 'active' | 'cooling' | 'disabled';

export interface KeyStatus {
  id: string;
  label: string | null;
  state: KeyState;
  coolingUntil: number | null;
  consecutiveErrors: number;
  lastError: {
    kind: 'rate_limited' | 'auth_rejected' | 'unresolved_env';
    status: number | null;
    message: string;
    at: number | null;
  } | null;
  lastUsedAt: number | null;
  /** Statistics since the app started. */
  requestCount: number;
  failureCount: number;
}

export interface PoolStatus {
  providerId: string;
  /** The backend's clock when it answered, so the UI can count down without trusting its own. */
  now: number;
  keys: KeyStatus[];
}

/** Optional fields are omitted, never `null`: the backend rejects an explicit null. */
export interface NewApiKey {
  providerId: string;
  apiKey: string;
  label?: string;
  enabled?: boolean;
  weight?: number;
}

export interface ApiKeyChanges {
  label?: string;
  apiKey?: string;
  enabled?: boolean;
  weight?: number;
}

export type ProviderKind = Provider['kind'];

/** A provider to add; optional fields omitted, never null. */
export interface NewProvider {
  name: string;
  kind: ProviderKind;
  baseUrl: string;
  apiKey?: string;
  models?: string[];
  defaultModel?: string;
}

/** Only the fields to change. `apiKey: ""` removes the provider-level key; `defaultModel: ""` clears it. */
export interface ProviderChanges {
  name?: string;
  kind?: ProviderKind;
  baseUrl?: string;
  apiKey?: string;
  models?: string[];
  defaultModel?: string;
}

/** What testing one key against its provider found (the provider's model list, fetched with that key). */
export interface KeyTestResult {
  ok: boolean;
  /** The HTTP status, or null when no answer came (network, unresolved `$NAME`). */
  status: number | null;
  message: string;
  latencyMs: number;
}

/** Drops `undefined` fields so they are absent from the IPC payload. */
export function defined<T extends object>(value: T): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));
}

export const llmConfigApi = {
  getProviders: () => call<Provider[]>('llmConfig:getProviders'),
  getApiKeys: (providerId: string) => call<ApiKey[]>('llmConfig:getApiKeys', { providerId }),
  addApiKey: (key: NewApiKey) => call<ApiKey>('llmConfig:addApiKey', defined(key)),
  updateApiKey: (id: string, changes: ApiKeyChanges) => call<ApiKey>('llmConfig:updateApiKey', defined({ id, ...changes })),
  deleteApiKey: (id: string) => call<{ id: string }>('llmConfig:deleteApiKey', { id }),
  toggleApiKey: (id: string, enabled: boolean) => call<ApiKey>('llmConfig:toggleApiKey', { id, enabled }),
  reorderApiKeys: (providerId: string, ids: string[]) => call<ApiKey[]>('llmConfig:reorderApiKeys', { providerId, ids }),
  getPoolStatus: (providerId: string) => call<PoolStatus>('llmConfig:getPoolStatus', { providerId }),
  resetCooldown: (id: string) => call<{ id: string }>('llmConfig:resetCooldown', { id }),
  addProvider: (provider: NewProvider) => call<Provider>('llmConfig:addProvider', defined(provider)),
  updateProvider: (id: string, changes: ProviderChanges) => call<Provider>('llmConfig:updateProvider', defined({ id, ...changes })),
  /** Deletes the provider and its pool keys; its chats stay, with `providerId: null`. */
  deleteProvider: (id: string) => call<{ id: string; deletedKeys: number }>('llmConfig:deleteProvider', { id }),
  testApiKey: (id: string) => call<KeyTestResult>('llmConfig:testApiKey', { id }),
};

export const LLM_CONFIG_CHANGED = 'llmConfig:changed';

/**
 * Calls `handler` whenever the backend wrote a provider's keys (a command, or the pool disabling
 * a key after 401/403). Returns an unsubscribe function usable at once, even before the
 * subscription is confirmed.
 */
export function onLlmConfigChanged(handler: (change: { providerId: string }) => void): () => void {
  let stopped = false;
  let unlisten: (() => void) | undefined;
  listen<{ providerId: string }>(LLM_CONFIG_CHANGED, (event) => {
    if (!stopped) handler(event.payload);
  }).then(
    (stop) => {
      if (stopped) stop();
      else unlisten = stop;
    },
    (error: unknown) => console.error('could not subscribe to llmConfig:changed', error),
  );
  return () => {
    stopped = true;
    unlisten?.();
  };
}
