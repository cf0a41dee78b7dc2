import { type ErrorCode, type ErrorDetails, type IpcError, type Issue, type KeyUsage, LIMITS, type Price, type SentWith, type UsagePoint, type UsageTotals } from '../ipc/bindings';
import type { Handlers } from './fakeBackend';

/*
 * The fake backend's usage ledger: attempts a test sets, summed the way the backend sums them
 * (totals and latencies per key, costs from the prices, series in buckets from `from` rounded down
 * to the hour), behind the `usage:*` commands with the backend's argument rules.
 */

/** One upstream attempt, as the ledger records it. */
export interface LedgerAttempt {
  at: number;
  providerId: string;
  /** `""` for the provider-level key, {@link NO_KEY} for a request sent without any key. */
  keyId: string;
  model: string;
  /** `rateLimited` and `authRejected` were failed over from; `stopped` is not a failure. */
  outcome: 'answered' | 'failed' | 'rateLimited' | 'authRejected' | 'stopped';
  inputTokens: number;
  cachedTokens: number;
  outputTokens: number;
  latencyMs: number;
}

/** The key id the backend's ledger keeps requests sent without any key under (store's `NO_KEY`). */
export const NO_KEY = '(no key)';

/** What a key row sent its requests with, from its id, as the backend says it. */
function sentWith(keyId: string): SentWith {
  return keyId === '' ? 'providerKey' : keyId === NO_KEY ? 'noKey' : 'poolKey';
}

/** An attempt answered by key `keyId` of `providerId` at `at`: 100 input tokens, 40 cached, 20 out, 800 ms. */
export function attempt(at: number, providerId: string, keyId: string, extra: Partial<LedgerAttempt> = {}): LedgerAttempt {
  return { at, providerId, keyId, model: 'gpt-4o-mini', outcome: 'answered', inputTokens: 100, cachedTokens: 40, outputTokens: 20, latencyMs: 800, ...extra };
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

type BackendError = (code: ErrorCode, message: string, issues?: Issue[], details?: ErrorDetails) => IpcError;
type Rule = { kind: 'string'; max?: number; maxBytes?: number } | { kind: 'time' } | { kind: 'dollars' } | { kind: 'bucket' };

/** The backend's strict parsing: unknown fields, missing ones and wrong types are issues at their paths. */
function checkArgs(fail: BackendError, args: Record<string, unknown>, rules: Record<string, Rule>, required: readonly string[] = []) {
  const issues: Issue[] = [];
  for (const field of Object.keys(args)) {
    if (!(field in rules)) issues.push({ path: field, code: 'unknown_field', message: 'unknown field' });
  }
  for (const field of required) {
    if (args[field] === undefined) issues.push({ path: field, code: 'required', message: 'is required' });
  }
  for (const [field, rule] of Object.entries(rules)) {
    const value = args[field];
    if (value === undefined) continue;
    const wrong = (expected: string): Issue => ({ path: field, code: 'wrong_type', params: { expected }, message: `expected ${expected}` });
    switch (rule.kind) {
      case 'string':
        if (typeof value !== 'string') issues.push(wrong('string'));
        else if (value.trim() === '') issues.push({ path: field, code: 'blank', message: 'must not be blank' });
        else if (rule.max !== undefined && [...value].length > rule.max) issues.push({ path: field, code: 'too_long', params: { max: rule.max }, message: `at most ${rule.max} characters` });
        else if (rule.maxBytes !== undefined && new TextEncoder().encode(value).length > rule.maxBytes) issues.push({ path: field, code: 'too_long', params: { max: rule.maxBytes }, message: `at most ${rule.maxBytes} bytes` });
        break;
      case 'time':
        if (!Number.isInteger(value)) issues.push(wrong('integer'));
        else if ((value as number) < 0) issues.push({ path: field, code: 'too_small', params: { min: 0 }, message: 'must be at least 0' });
        break;
      case 'dollars':
        if (typeof value !== 'number' || !Number.isFinite(value)) issues.push(wrong('number'));
        else if (value < LIMITS.price.min) issues.push({ path: field, code: 'too_small', params: { min: LIMITS.price.min }, message: `must be at least ${LIMITS.price.min}` });
        else if (value > LIMITS.price.max) issues.push({ path: field, code: 'too_large', params: { max: LIMITS.price.max }, message: `must be at most ${LIMITS.price.max}` });
        break;
      case 'bucket':
        if (value !== 'hour' && value !== 'day') issues.push({ path: field, code: 'invalid', message: 'hour or day' });
        break;
    }
  }
  if (issues.length > 0) throw fail('validation', issues.map((i) => `${i.path}: ${i.message}`).join('; '), issues);
}

function checkOrder(fail: BackendError, from: number | undefined, to: number | undefined) {
  if (from !== undefined && to !== undefined && from >= to) {
    throw fail('validation', 'from: must be before to', [{ path: 'from', code: 'range_order', message: 'must be before to' }]);
  }
}

/** The nearest-rank percentile of `values` (sorted here), or null for none. */
function percentile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)];
}

const zero = (): Omit<UsageTotals, 'cost' | 'costComplete'> & { failovers: number } => ({
  requests: 0,
  failures: 0,
  rateLimited: 0,
  failovers: 0,
  inputTokens: 0,
  cachedTokens: 0,
  outputTokens: 0,
});

function addAttempt(into: ReturnType<typeof zero>, a: LedgerAttempt) {
  into.requests += 1;
  if (a.outcome !== 'answered' && a.outcome !== 'stopped') into.failures += 1;
  if (a.outcome === 'rateLimited') into.rateLimited += 1;
  if (a.outcome === 'rateLimited' || a.outcome === 'authRejected') into.failovers += 1;
  into.inputTokens += a.inputTokens;
  into.cachedTokens += a.cachedTokens;
  into.outputTokens += a.outputTokens;
}

/** What `a` cost at `price`: cached input at its own price (or the input price), as the backend counts. */
function costOf(a: LedgerAttempt, price: Price): number {
  const fresh = Math.max(0, a.inputTokens - a.cachedTokens);
  return (fresh * price.inputPerMillion + a.cachedTokens * (price.cachedInputPerMillion ?? price.inputPerMillion) + a.outputTokens * price.outputPerMillion) / 1_000_000;
}

interface Options {
  fail: BackendError;
  /** The key's label or masked preview; null when it was deleted. */
  keyLabel: (keyId: string) => string | null;
  now: () => number;
}

export function createFakeLedger({ fail, keyLabel, now }: Options) {
  let attempts: LedgerAttempt[] = [];
  const prices = new Map<string, Price>();
  /** The ranges exported, in order. */
  const exports: { providerId?: string; from?: number; to?: number }[] = [];
  let exportAnswer: { path: string | null } | { error: IpcError } = { path: '/home/me/keypool-usage.csv' };

  const range = (from: number | undefined, to: number | undefined) => {
    const end = to ?? now() + 1;
    return { from: from ?? end - 30 * DAY, to: end };
  };

  const handlers: Handlers = {
    'usage:getSummary': (args) => {
      checkArgs(fail, args, { providerId: { kind: 'string' }, from: { kind: 'time' }, to: { kind: 'time' } });
      checkOrder(fail, args.from, args.to);
      const { from, to } = range(args.from, args.to);
      const chosen = attempts.filter((a) => a.at >= from && a.at < to && (args.providerId === undefined || a.providerId === args.providerId));
      const byKey = new Map<string, LedgerAttempt[]>();
      for (const a of chosen) byKey.set(`${a.providerId}\u0000${a.keyId}`, [...(byKey.get(`${a.providerId}\u0000${a.keyId}`) ?? []), a]);
      const spend = (list: LedgerAttempt[]) => {
        const sums = zero();
        let cost: number | null = null;
        let costComplete = list.length > 0;
        for (const a of list) {
          addAttempt(sums, a);
          const price = prices.get(a.model);
          if (price) cost = (cost ?? 0) + costOf(a, price);
          else if (a.inputTokens + a.outputTokens > 0) costComplete = false;
        }
        const { failovers: _, ...totals } = sums;
        return { ...totals, cost, costComplete };
      };
      const keys: KeyUsage[] = [...byKey.values()].map((list) => ({
        providerId: list[0].providerId,
        keyId: list[0].keyId,
        sentWith: sentWith(list[0].keyId),
        label: sentWith(list[0].keyId) === 'poolKey' ? keyLabel(list[0].keyId) : null,
        p50LatencyMs: percentile(list.map((a) => a.latencyMs), 0.5),
        p95LatencyMs: percentile(list.map((a) => a.latencyMs), 0.95),
        ...spend(list),
      }));
      keys.sort((a, b) => b.requests - a.requests || a.keyId.localeCompare(b.keyId));
      const unpricedModels = [...new Set(chosen.filter((a) => a.inputTokens + a.outputTokens > 0 && !prices.has(a.model)).map((a) => a.model))].sort();
      const firstAt = chosen.length > 0 ? Math.min(...chosen.map((a) => a.at)) : null;
      return { from, to, totals: spend(chosen), keys, unpricedModels, firstAt };
    },
    'usage:getSeries': (args) => {
      checkArgs(fail, args, { providerId: { kind: 'string' }, keyId: { kind: 'string' }, bucket: { kind: 'bucket' }, from: { kind: 'time' }, to: { kind: 'time' } }, ['bucket', 'from', 'to']);
      checkOrder(fail, args.from, args.to);
      const size = args.bucket === 'hour' ? HOUR : DAY;
      if ((args.to - args.from) / size > LIMITS.seriesBuckets.maxItems) {
        throw fail('validation', 'to: too many buckets', [{ path: 'to', code: 'too_many_buckets', params: { max: LIMITS.seriesBuckets.maxItems }, message: 'too many buckets' }]);
      }
      const start = Math.floor(args.from / HOUR) * HOUR;
      const points = new Map<string, UsagePoint & ReturnType<typeof zero>>();
      for (const a of attempts) {
        const hour = Math.floor(a.at / HOUR) * HOUR;
        if (hour < start || hour >= args.to) continue;
        if (args.providerId !== undefined && a.providerId !== args.providerId) continue;
        if (args.keyId !== undefined && a.keyId !== args.keyId) continue;
        const at = start + Math.floor((hour - start) / size) * size;
        const id = `${at}\u0000${a.providerId}\u0000${a.keyId}`;
        const point = points.get(id) ?? { at, providerId: a.providerId, keyId: a.keyId, sentWith: sentWith(a.keyId), ...zero() };
        addAttempt(point, a);
        points.set(id, point);
      }
      const sorted = [...points.values()].sort((a, b) => a.at - b.at || a.providerId.localeCompare(b.providerId) || a.keyId.localeCompare(b.keyId));
      return { from: args.from, to: args.to, points: sorted };
    },
    'usage:exportCsv': async (args) => {
      checkArgs(fail, args, { providerId: { kind: 'string' }, from: { kind: 'time' }, to: { kind: 'time' } });
      checkOrder(fail, args.from, args.to);
      exports.push({ ...args });
      if ('error' in exportAnswer) throw exportAnswer.error;
      const { from, to } = range(args.from, args.to);
      const rows = attempts.filter((a) => a.at >= from && a.at < to && (args.providerId === undefined || a.providerId === args.providerId));
      return { path: exportAnswer.path, rows: exportAnswer.path === null ? 0 : rows.length };
    },
    'usage:getPrices': (args) => {
      checkArgs(fail, args, {});
      return [...prices.values()].sort((a, b) => a.model.localeCompare(b.model));
    },
    'usage:setPrice': (args) => {
      const rules: Record<string, Rule> = {
        model: { kind: 'string', maxBytes: LIMITS.modelName.maxBytes },
        inputPerMillion: { kind: 'dollars' },
        cachedInputPerMillion: { kind: 'dollars' },
        outputPerMillion: { kind: 'dollars' },
      };
      checkArgs(fail, args, rules, ['model', 'inputPerMillion', 'outputPerMillion']);
      const price: Price = {
        model: args.model.trim(),
        inputPerMillion: args.inputPerMillion,
        cachedInputPerMillion: args.cachedInputPerMillion ?? null,
        outputPerMillion: args.outputPerMillion,
        updatedAt: now(),
      };
      prices.set(price.model, price);
      return price;
    },
    'usage:purge': (args) => {
      checkArgs(fail, args, { before: { kind: 'time' } });
      const before = args.before === undefined ? Number.POSITIVE_INFINITY : Math.floor(args.before / HOUR) * HOUR;
      const kept = attempts.filter((a) => a.at >= before);
      const deleted = attempts.length - kept.length;
      attempts = kept;
      return { attempts: deleted };
    },
    'usage:deletePrice': (args) => {
      checkArgs(fail, args, { model: { kind: 'string' } }, ['model']);
      if (!prices.delete(args.model)) {
        throw fail('not_found', `price for model "${args.model}" does not exist`, undefined, { kind: 'notFound', what: 'price for model' });
      }
      return { model: args.model };
    },
  };

  return {
    handlers,
    /** The attempts the ledger holds from now on. */
    setAttempts: (list: LedgerAttempt[]) => (attempts = [...list]),
    /** When the key was last sent upstream, by the ledger (as `getPoolStatus` reports it after a restart). */
    lastAttemptOf: (keyId: string): number | null => {
      const at = attempts.filter((a) => a.keyId === keyId).map((a) => a.at);
      return at.length > 0 ? Math.max(...at) : null;
    },
    prices: () => [...prices.values()],
    setPrice: (price: Omit<Price, 'updatedAt'>) => prices.set(price.model, { ...price, updatedAt: now() }),
    /** The arguments of the CSV exports (provider and range), in order. */
    exports: () => exports,
    /** What the next CSV exports answer: the path saved to (null: the dialog was cancelled), or an error. */
    onExport: (answer: { path: string | null } | { error: IpcError }) => (exportAnswer = answer),
  };
}
