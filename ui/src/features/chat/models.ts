import type { Provider } from '../../ipc/bindings';

/** The model a new chat with `provider` starts on: its default, else its first, else none (type one). */
export function initialModel(provider: Provider | undefined): string {
  return provider?.defaultModel ?? provider?.models[0] ?? '';
}

/** A chat's provider by id; undefined when it was deleted (or is not loaded yet). */
export function providerOf(providers: Provider[], id: string | null): Provider | undefined {
  return id === null ? undefined : providers.find((p) => p.id === id);
}
