import type { Chat, Provider } from '../../ipc/bindings';

/** The model a new chat with `provider` starts on: its default, else its first, else none (type one). */
export function initialModel(provider: Provider | undefined): string {
  return provider?.defaultModel ?? provider?.models[0] ?? '';
}

/** A chat's provider by id; undefined when it was deleted (or is not loaded yet). */
export function providerOf(providers: Provider[], id: string | null): Provider | undefined {
  return id === null ? undefined : providers.find((p) => p.id === id);
}

/**
 * The provider a new chat preselects: the one last chatted with (the most recently active chat's)
 * when its pool can answer now; else the first that can with a key of the user's (a fresh
 * install's keyless local server, which may not be running, comes after a provider the user gave
 * keys); else the first that can at all; else the last one used, else the first. A provider with
 * no keys is never preferred over one that can answer.
 */
export function preferredProvider(providers: readonly Provider[], chats: readonly Chat[]): Provider | undefined {
  const recent = [...chats].sort((a, b) => b.updatedAt - a.updatedAt);
  const lastUsed = recent.map((chat) => providers.find((p) => p.id === chat.providerId)).find((p) => p !== undefined);
  if (lastUsed?.answerable) return lastUsed;
  const keyed = providers.find((p) => p.answerable && (p.keyCount > 0 || p.apiKeyPreview !== null));
  return keyed ?? providers.find((p) => p.answerable) ?? lastUsed ?? providers[0];
}
