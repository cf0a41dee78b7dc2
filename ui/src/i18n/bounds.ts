import { LIMITS } from '../ipc/bindings';
import type { MessageKey } from './en';
import { formatCount } from './format';

/** The numbers a message about a bound states. */
interface Bound {
  readonly min?: number;
  readonly max?: number;
  readonly default?: number;
}

const chars = ({ maxChars }: { maxChars: number }): Bound => ({ max: maxChars });
const bytes = ({ maxBytes }: { maxBytes: number }): Bound => ({ max: maxBytes });
const range = ({ min, max }: { min: number; max: number }): Bound => ({ min, max });

/**
 * The messages that state a bound of the backend's arguments, with the bound each one states:
 * {@link boundVars} fills their `{min}`, `{max}` and `{default}` from `LIMITS`, so no dictionary
 * types a number the backend declares.
 */
export const BOUNDS: Partial<Record<MessageKey, Bound>> = {
  'general.maxWaitHint': range(LIMITS.maxWaitSeconds),
  'general.bindingIdleHint': range(LIMITS.bindingIdleMinutes),
  'general.usageRetentionHint': range(LIMITS.usageRetentionDays),
  'error.maxWaitRange': range(LIMITS.maxWaitSeconds),
  'error.bindingIdleRange': range(LIMITS.bindingIdleMinutes),
  'error.usageRetentionRange': range(LIMITS.usageRetentionDays),
  'add.weightHint': LIMITS.weight,
  'error.weightRange': range(LIMITS.weight),
  'error.weightRangeShort': range(LIMITS.weight),
  'limits.rpmHint': range(LIMITS.rpmLimit),
  'error.rpmRange': range(LIMITS.rpmLimit),
  'limits.concurrentHint': range(LIMITS.maxConcurrent),
  'error.concurrentRange': range(LIMITS.maxConcurrent),
  'error.apiKeyTooLong': chars(LIMITS.apiKey),
  'error.labelTooLong': chars(LIMITS.keyLabel),
  'error.quotaGroupTooLong': chars(LIMITS.quotaGroup),
  'error.nameTooLong': chars(LIMITS.providerName),
  'error.systemPromptTooLong': chars(LIMITS.systemPrompt),
  'chat.titleTooLong': chars(LIMITS.chatTitle),
  'usagePage.modelTooLong': bytes(LIMITS.modelName),
  'usagePage.priceRange': range(LIMITS.price),
  'namedTokens.rpmRange': range(LIMITS.tokenRequestsPerMinute),
  'namedTokens.tpmRange': range(LIMITS.tokenTokensPerMinute),
  'namedTokens.inFlightRange': range(LIMITS.tokenInFlight),
  'namedTokens.budgetUsdRange': range(LIMITS.tokenBudgetUsd),
  'namedTokens.budgetTokensRange': range(LIMITS.tokenBudgetTokens),
  'namedTokens.modelsTooMany': { max: LIMITS.tokenModels.maxItems },
  'localApi.portHint': LIMITS.port,
  'localApi.portRange': range(LIMITS.port),
};

/** Ports are written as plain digits (`65535`), like an address; other numbers as counts. */
const PLAIN_DIGITS: ReadonlySet<MessageKey> = new Set(['localApi.portHint', 'localApi.portRange']);

/** The placeholders of `key`'s bound, written as the language of `intlTag` writes numbers. */
export function boundVars(key: MessageKey, intlTag: string): Record<string, string> | undefined {
  const bound = BOUNDS[key];
  if (!bound) return undefined;
  const write = PLAIN_DIGITS.has(key) ? String : (n: number) => formatCount(n, intlTag);
  return Object.fromEntries(Object.entries(bound).map(([name, n]: [string, number]) => [name, write(n)]));
}
