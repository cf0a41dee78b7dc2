import type { AddApiKeyArgs, AddProviderArgs, KeyReading, ListModelsForArgs, SetKeyLimitsArgs, StartKeyImportArgs, UpdateApiKeyArgs, UpdateApiKeysArgs, UpdateProviderArgs } from './bindings';
import { call, defined } from './client';

/** The fields of an update besides the id: only those to change. */
export type ApiKeyChanges = Omit<UpdateApiKeyArgs, 'id'>;
/** A key's own limits; an absent one is removed. */
export type KeyLimits = Omit<SetKeyLimitsArgs, 'id'>;
/** `apiKey: ""` removes the provider-level key; `defaultModel: ""` clears it. */
export type ProviderChanges = Omit<UpdateProviderArgs, 'id'>;

export const llmConfigApi = {
  getProviders: () => call('llmConfig:getProviders'),
  getApiKeys: (providerId: string) => call('llmConfig:getApiKeys', { providerId }),
  addApiKey: (key: AddApiKeyArgs) => call('llmConfig:addApiKey', defined(key)),
  updateApiKey: (id: string, changes: ApiKeyChanges) => call('llmConfig:updateApiKey', defined({ id, ...changes })),
  /** Replaces both of a key's own limits: one left out is removed. */
  setKeyLimits: (id: string, limits: KeyLimits) => call('llmConfig:setKeyLimits', defined({ id, ...limits })),
  deleteApiKey: (id: string) => call('llmConfig:deleteApiKey', { id }),
  toggleApiKey: (id: string, enabled: boolean) => call('llmConfig:toggleApiKey', { id, enabled }),
  reorderApiKeys: (providerId: string, ids: string[]) => call('llmConfig:reorderApiKeys', { providerId, ids }),
  getPoolStatus: (providerId: string) => call('llmConfig:getPoolStatus', { providerId }),
  resetCooldown: (id: string) => call('llmConfig:resetCooldown', { id }),
  addProvider: (provider: AddProviderArgs) => call('llmConfig:addProvider', defined(provider)),
  updateProvider: (id: string, changes: ProviderChanges) => call('llmConfig:updateProvider', defined({ id, ...changes })),
  /** Deletes the provider and its pool keys; its chats stay, with `providerId: null`. */
  deleteProvider: (id: string) => call('llmConfig:deleteProvider', { id }),
  testApiKey: (id: string) => call('llmConfig:testApiKey', { id }),
  /** What a text holds (new keys, repeats, keys already in the pool), read by the provider's key shapes or one per line, before anything is sent or saved. */
  previewKeyImport: (providerId: string, text: string, reading: KeyReading) => call('llmConfig:previewKeyImport', { providerId, text, reading }),
  /** Starts a previewed import; its progress follows as `llmConfig:keyImportProgress`. */
  startKeyImport: (args: StartKeyImportArgs) => call('llmConfig:startKeyImport', defined(args)),
  /** Stops an import: the keys already saved stay. */
  cancelKeyImport: (importId: string) => call('llmConfig:cancelKeyImport', { importId }),
  /** Sets what `changes` gives on every key of `ids`, in one write. */
  updateApiKeys: (ids: string[], changes: Omit<UpdateApiKeysArgs, 'ids'>) => call('llmConfig:updateApiKeys', defined({ ids, ...changes })),
  deleteApiKeys: (ids: string[]) => call('llmConfig:deleteApiKeys', { ids }),
  /** Tests each key (bounded concurrency in the backend); the results in the order of `ids`. */
  testApiKeys: (ids: string[]) => call('llmConfig:testApiKeys', { ids }),
  /** Writes a CSV of the keys' metadata (`full`: with the keys themselves) where the user chooses. */
  exportApiKeys: (providerId: string, ids: string[], full: boolean) => call('llmConfig:exportApiKeys', { providerId, ids, full }),
  /** The models the provider's models endpoint lists; kept by the backend until `refresh`. */
  listModels: (providerId: string, refresh = false) => call('llmConfig:listModels', refresh ? { providerId, refresh } : { providerId }),
  /** The models a provider not saved yet lists (the Add provider form); nothing is kept. */
  listModelsFor: (provider: ListModelsForArgs) => call('llmConfig:listModelsFor', defined(provider)),
};

