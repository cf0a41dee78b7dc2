import type { KeyUsage, UsagePoint } from '../../ipc/bindings';
import { type Buckets, bucketIndex } from './usageRange';

/*
 * What the charts and their tables show, derived from the ledger's answers. Pure, so the numbers
 * a chart draws and the table beside it reads are the same arrays.
 */

/** A key row of the ledger, as both the summary's keys and the series' points name it. */
export type KeyRef = Pick<KeyUsage, 'providerId' | 'keyId' | 'sentWith'>;

/** A key across providers: the provider's id and the key's (`""` for the provider-level key). */
export const keyOf = (k: { providerId: string; keyId: string }) => `${k.providerId}\u0000${k.keyId}`;

/** `cached / input`, or null when there was no input to serve from a cache. */
export function cacheRatio(cachedTokens: number, inputTokens: number): number | null {
  return inputTokens > 0 ? cachedTokens / inputTokens : null;
}

export interface KeySeries {
  key: string;
  name: string;
  /** One value per bucket. */
  values: number[];
}

/**
 * Tokens (input and output) per key per bucket, one series per key in the summary's order (most
 * requests first), then any key only the series knows of.
 */
export function tokensPerKey(points: readonly UsagePoint[], buckets: Buckets, keys: readonly KeyUsage[], name: (key: KeyRef) => string): KeySeries[] {
  const series = new Map<string, KeySeries>();
  const seriesOf = (k: KeyRef) => {
    const id = keyOf(k);
    let found = series.get(id);
    if (!found) {
      found = { key: id, name: name(k), values: buckets.starts.map(() => 0) };
      series.set(id, found);
    }
    return found;
  };
  for (const k of keys) seriesOf(k);
  for (const point of points) {
    const index = bucketIndex(buckets, point.at);
    if (index >= 0) seriesOf(point).values[index] += point.inputTokens + point.outputTokens;
  }
  return [...series.values()].filter((s) => s.values.some((v) => v > 0));
}

export interface Activity {
  requests: number[];
  rateLimited: number[];
  failovers: number[];
}

/** Requests, 429s and failovers per bucket, summed over keys. */
export function activity(points: readonly UsagePoint[], buckets: Buckets): Activity {
  const zeros = () => buckets.starts.map(() => 0);
  const sums: Activity = { requests: zeros(), rateLimited: zeros(), failovers: zeros() };
  for (const point of points) {
    const index = bucketIndex(buckets, point.at);
    if (index < 0) continue;
    sums.requests[index] += point.requests;
    sums.rateLimited[index] += point.rateLimited;
    sums.failovers[index] += point.failovers;
  }
  return sums;
}

export interface ProviderCache {
  providerId: string;
  inputTokens: number;
  cachedTokens: number;
  /** Null when the provider had no input tokens. */
  ratio: number | null;
}

/** The prompt cache's share of each provider's input, from the summary's keys; in the order providers first appear. */
export function cacheByProvider(keys: readonly KeyUsage[]): ProviderCache[] {
  const providers = new Map<string, ProviderCache>();
  for (const k of keys) {
    const entry = providers.get(k.providerId) ?? { providerId: k.providerId, inputTokens: 0, cachedTokens: 0, ratio: null };
    entry.inputTokens += k.inputTokens;
    entry.cachedTokens += k.cachedTokens;
    entry.ratio = cacheRatio(entry.cachedTokens, entry.inputTokens);
    providers.set(k.providerId, entry);
  }
  return [...providers.values()];
}

/** The buckets where anything happened, for tables that list only those. */
export function activeBuckets(...series: readonly (readonly number[])[]): number[] {
  const length = series[0]?.length ?? 0;
  return Array.from({ length }, (_, i) => i).filter((i) => series.some((values) => values[i] > 0));
}
