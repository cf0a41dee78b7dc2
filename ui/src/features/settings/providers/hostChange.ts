import type { ApiKey, Provider } from '../../../ipc/bindings';
import { IpcError } from '../../../ipc/client';
import type { ProviderChanges } from '../../../ipc/llmConfig';

/*
 * Moving a provider's base URL to another origin (scheme, host or port) while it holds keys sends
 * those keys to the new host. The backend refuses such an update unless it carries
 * `confirmHostChange: true`, and answers which keys would go (`details.kind === 'hostChange'`).
 * The UI asks first when it can tell, and asks from the backend's answer when it could not. Pure.
 *
 * Whether a URL may be a base URL at all is the backend's rule alone: the form shows its answer.
 */

/** The URL, or null when it does not parse. */
function parse(text: string): URL | null {
  try {
    return new URL(text.trim());
  } catch {
    return null;
  }
}

/**
 * Whether two base URLs share scheme, host and port (the URL standard's origin, which the
 * backend compares too; an unparsable one shares nothing). Only for asking early: when the
 * backend finds another origin the UI did not, its refusal asks the same question.
 */
export function sameOrigin(a: string, b: string): boolean {
  const [x, y] = [parse(a), parse(b)];
  return x !== null && y !== null && x.origin === y.origin;
}

/** The host (with a port when it has one) a base URL points at, for saying where keys go. */
export function hostOf(text: string): string {
  return parse(text)?.host || text.trim();
}

/** A key that would be sent to the new host, as the dialog names it. */
export type SentKey =
  /** A pool key by its label or masked preview, or a name the backend gave. */
  | { kind: 'named'; name: string }
  /** The stored provider-level key, by its masked preview. */
  | { kind: 'providerKey'; preview: string }
  /** The provider-level key typed in this edit (never shown). */
  | { kind: 'newProviderKey' };

export interface HostMove {
  from: string;
  to: string;
  keys: SentKey[];
}

/**
 * Whether `changes` move `provider` to another origin while keys would go with it (pool keys,
 * or the provider-level key it keeps or gets in the same update), as far as the UI can tell
 * before asking the backend. Only an `https` URL is judged here: the backend's base URL rule
 * lets every one through, so the question is the only one left. A plain `http` URL goes to the
 * backend first, which may refuse it outright, and otherwise asks through its refusal.
 */
export function movesKeys(provider: Provider, changes: ProviderChanges): changes is ProviderChanges & { baseUrl: string } {
  if (changes.baseUrl === undefined || parse(changes.baseUrl)?.protocol !== 'https:') return false;
  if (sameOrigin(changes.baseUrl, provider.baseUrl)) return false;
  return provider.keyCount > 0 || providerKeyAfter(provider, changes) !== null;
}

function providerKeyAfter(provider: Provider, changes: ProviderChanges): SentKey | null {
  if (changes.apiKey === '') return null;
  if (changes.apiKey !== undefined) return { kind: 'newProviderKey' };
  return provider.apiKeyPreview ? { kind: 'providerKey', preview: provider.apiKeyPreview } : null;
}

/** The move `changes` make, naming the pool's keys (label, else masked preview) and the provider-level key. */
export function hostMoveOf(
  provider: Provider,
  changes: ProviderChanges & { baseUrl: string },
  poolKeys: readonly Pick<ApiKey, 'label' | 'apiKeyPreview'>[],
): HostMove {
  const keys: SentKey[] = poolKeys.map((key) => ({ kind: 'named', name: key.label ?? key.apiKeyPreview }));
  const providerKey = providerKeyAfter(provider, changes);
  if (providerKey) keys.push(providerKey);
  return { from: provider.baseUrl, to: changes.baseUrl, keys };
}

/** The move the backend refused to make unconfirmed, from its error; null for any other error. */
export function hostMoveOfError(error: unknown): HostMove | null {
  if (!(error instanceof IpcError) || error.details?.kind !== 'hostChange') return null;
  const { from, to, keys } = error.details;
  return { from, to, keys: keys.map((name) => ({ kind: 'named', name })) };
}
