import { describe, expect, it } from 'vitest';
import type { KeyUsage, UsagePoint } from '../../../ipc/bindings';
import { activeBuckets, activity, cacheByProvider, cacheRatio, tokensPerKey } from '../usageFigures';
import type { Buckets } from '../usageRange';

const DAY = 86_400_000;
const buckets: Buckets = { starts: [0, DAY, 2 * DAY], end: 3 * DAY, series: 'day' };

function point(at: number, providerId: string, keyId: string, extra: Partial<UsagePoint> = {}): UsagePoint {
  return { at, providerId, keyId, sentWith: 'poolKey', requests: 1, failures: 0, rateLimited: 0, failovers: 0, inputTokens: 10, cachedTokens: 4, outputTokens: 2, ...extra };
}

function key(providerId: string, keyId: string, extra: Partial<KeyUsage> = {}): KeyUsage {
  return { providerId, keyId, sentWith: 'poolKey', label: keyId, p50LatencyMs: null, p95LatencyMs: null, requests: 1, failures: 0, rateLimited: 0, inputTokens: 0, cachedTokens: 0, outputTokens: 0, cost: null, costComplete: false, ...extra };
}

describe('usage figures', () => {
  it('sum input and output tokens per key and bucket, keys in the summary’s order', () => {
    const series = tokensPerKey(
      [point(0, 'openai', 'a'), point(DAY, 'openai', 'a', { inputTokens: 100 }), point(2 * DAY, 'openai', 'b'), point(0, 'anthropic', '')],
      buckets,
      [key('openai', 'b'), key('openai', 'a'), key('anthropic', '')],
      (k) => `${k.providerId}/${k.keyId}`,
    );
    expect(series).toEqual([
      { key: 'openai\u0000b', name: 'openai/b', values: [0, 0, 12] },
      { key: 'openai\u0000a', name: 'openai/a', values: [12, 102, 0] },
      { key: 'anthropic\u0000', name: 'anthropic/', values: [12, 0, 0] },
    ]);
  });

  it('leave out keys without tokens, and points outside the buckets', () => {
    const series = tokensPerKey([point(5 * DAY, 'openai', 'a'), point(0, 'openai', 'b', { inputTokens: 0, outputTokens: 0 })], buckets, [key('openai', 'a')], (k) => k.keyId);
    expect(series).toEqual([]);
  });

  it('sum an hourly series into the days, the last hour of a day in that day', () => {
    const HOUR = DAY / 24;
    const byHour: Buckets = { ...buckets, series: 'hour' };
    const sums = activity([point(0, 'openai', 'a'), point(23 * HOUR, 'openai', 'a'), point(DAY, 'openai', 'b'), point(3 * DAY, 'openai', 'a')], byHour);
    expect(sums.requests, 'the hour after the last day counts nowhere').toEqual([2, 1, 0]);
  });

  it('sum requests, 429s and failovers per bucket over every key', () => {
    const sums = activity(
      [point(0, 'openai', 'a', { requests: 3, rateLimited: 1, failovers: 1 }), point(0, 'openai', 'b', { requests: 2 }), point(2 * DAY, 'openai', 'a', { failovers: 2 })],
      buckets,
    );
    expect(sums).toEqual({ requests: [5, 0, 1], rateLimited: [1, 0, 0], failovers: [1, 0, 2] });
    expect(activeBuckets(sums.requests, sums.failovers)).toEqual([0, 2]);
  });

  it('give each provider the cache’s share of its input, none without input', () => {
    expect(cacheRatio(0, 0)).toBeNull();
    expect(
      cacheByProvider([
        key('openai', 'a', { inputTokens: 100, cachedTokens: 50 }),
        key('anthropic', '', { inputTokens: 0, cachedTokens: 0 }),
        key('openai', 'b', { inputTokens: 300, cachedTokens: 50 }),
      ]),
    ).toEqual([
      { providerId: 'openai', inputTokens: 400, cachedTokens: 100, ratio: 0.25 },
      { providerId: 'anthropic', inputTokens: 0, cachedTokens: 0, ratio: null },
    ]);
  });
});
