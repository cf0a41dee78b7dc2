import { z } from 'zod';
import type { MessageKey } from '../../../i18n';
import { formatCount } from '../../../i18n/format';
import type { Translate } from '../../../i18n/problems';
import { type BudgetPeriod, LIMITS, type TokenRules, type TokenRulesInput } from '../../../ipc/bindings';
import type { FieldErrors, Parsed } from '../../../forms/fieldErrors';
import { refusal, wholeNumberFromText } from '../../../forms/parsers';
import { priceFromText } from '../../usage/priceForm';

/*
 * A named token's limits as a form: the rules of `TokenRulesInput` in the backend (each field
 * empty for no limit; a budget in dollars or tokens per period; rates and a cap on requests in
 * flight within `LIMITS`; model globs; an expiry date), and the one-line summary its row shows.
 * Pure; the backend stays the authority and its issues land at the same fields.
 */

export const RULE_FIELDS = ['budget', 'requestsPerMinute', 'tokensPerMinute', 'maxInFlight', 'models', 'expires'] as const;
export type RuleField = (typeof RULE_FIELDS)[number];
export type RulesForm = Record<RuleField, string>;
export type BudgetUnit = 'usd' | 'tokens';
export const PERIODS: readonly BudgetPeriod[] = ['day', 'week', 'month', 'total'];

/** The backend's path of each field's issues. */
export const RULE_PATHS: Record<RuleField, string> = {
  budget: 'rules.budget',
  requestsPerMinute: 'rules.requestsPerMinute',
  tokensPerMinute: 'rules.tokensPerMinute',
  maxInFlight: 'rules.maxInFlight',
  models: 'rules.models',
  expires: 'rules.expiresAt',
};

/** `date` (`2026-12-31`) as the moment it stops: the start of the next day, local time. */
export function expiryOfDate(date: string): number {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date.trim());
  if (!match) return Number.NaN;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const start = new Date(year, month - 1, day);
  if (start.getFullYear() !== year || start.getMonth() !== month - 1 || start.getDate() !== day) return Number.NaN;
  return new Date(year, month - 1, day + 1).getTime();
}

/** The date an expiry falls after (the last day it works), as a date field writes it. */
export function dateOfExpiry(at: number): string {
  const last = new Date(at - 1);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${last.getFullYear()}-${pad(last.getMonth() + 1)}-${pad(last.getDate())}`;
}

/** A number field: empty is no limit, anything else a whole number within `range`. */
function whole(range: { min: number; max: number }, key: MessageKey) {
  return z
    .string()
    .transform((text) => (text.trim() === '' ? undefined : wholeNumberFromText(text)))
    .pipe(z.number(refusal(key)).int(refusal(key)).min(range.min, refusal(key)).max(range.max, refusal(key)).optional());
}

const GLOB_BREAKERS = /[[\]{}\p{Cc}]/u;

const schema = z.object({
  budget: z.string(),
  requestsPerMinute: whole(LIMITS.tokenRequestsPerMinute, 'namedTokens.rpmRange'),
  tokensPerMinute: whole(LIMITS.tokenTokensPerMinute, 'namedTokens.tpmRange'),
  maxInFlight: whole(LIMITS.tokenInFlight, 'namedTokens.inFlightRange'),
  models: z
    .string()
    .transform((text) => text.split(/[\s,]+/).filter(Boolean))
    .pipe(
      z
        .array(z.string().refine((glob) => !GLOB_BREAKERS.test(glob) && new TextEncoder().encode(glob).length <= LIMITS.modelName.maxBytes, refusal('namedTokens.modelsBad')))
        .max(LIMITS.tokenModels.maxItems, refusal('namedTokens.modelsTooMany')),
    ),
  expires: z
    .string()
    .transform((text) => (text.trim() === '' ? undefined : expiryOfDate(text)))
    .pipe(z.number(refusal('namedTokens.expiresBad')).optional()),
});

/** The form checked into what `localApi:updateToken` takes. */
export function parseRules(form: RulesForm, unit: BudgetUnit, period: BudgetPeriod): Parsed<TokenRulesInput, RuleField> {
  const errors: FieldErrors<RuleField> = {};
  const result = schema.safeParse(form);
  if (!result.success) {
    for (const issue of result.error.issues) errors[String(issue.path[0]) as RuleField] ??= issue.message as MessageKey;
  }
  let budget: TokenRulesInput['budget'];
  const amount = form.budget.trim();
  if (amount !== '') {
    if (unit === 'usd') {
      const usd = priceFromText(amount);
      if (Number.isNaN(usd) || usd < LIMITS.tokenBudgetUsd.min || usd > LIMITS.tokenBudgetUsd.max) errors.budget = 'namedTokens.budgetUsdRange';
      else budget = { usd };
    } else {
      const tokens = wholeNumberFromText(amount);
      if (Number.isNaN(tokens) || tokens < LIMITS.tokenBudgetTokens.min || tokens > LIMITS.tokenBudgetTokens.max) errors.budget = 'namedTokens.budgetTokensRange';
      else budget = { tokens };
    }
  }
  if (!result.success || Object.keys(errors).length > 0) return { ok: false, errors };
  const { requestsPerMinute, tokensPerMinute, maxInFlight, models, expires } = result.data;
  const rules: TokenRulesInput = { models };
  if (budget) Object.assign(rules, { budget, budgetPeriod: period });
  if (requestsPerMinute !== undefined) rules.requestsPerMinute = requestsPerMinute;
  if (tokensPerMinute !== undefined) rules.tokensPerMinute = tokensPerMinute;
  if (maxInFlight !== undefined) rules.maxInFlight = maxInFlight;
  if (expires !== undefined) rules.expiresAt = expires;
  return { ok: true, value: rules };
}

/** A token's rules as the form shows them, with the budget's unit and period. */
export function rulesForm(rules: TokenRules): { form: RulesForm; unit: BudgetUnit; period: BudgetPeriod } {
  const budget = rules.budget;
  const unit: BudgetUnit = budget && 'tokens' in budget ? 'tokens' : 'usd';
  const text = (n: number | null) => (n === null ? '' : String(n));
  return {
    form: {
      budget: budget === null ? '' : 'usd' in budget ? String(budget.usd) : String(budget.tokens),
      requestsPerMinute: text(rules.requestsPerMinute),
      tokensPerMinute: text(rules.tokensPerMinute),
      maxInFlight: text(rules.maxInFlight),
      models: rules.models.join(' '),
      expires: rules.expiresAt === null ? '' : dateOfExpiry(rules.expiresAt),
    },
    unit,
    period: rules.budgetPeriod ?? 'month',
  };
}

const PERIOD_WORDS: Record<BudgetPeriod, MessageKey> = {
  day: 'namedTokens.perDay',
  week: 'namedTokens.perWeek',
  month: 'namedTokens.perMonth',
  total: 'namedTokens.inTotal',
};

/** Dollars as the row writes them: `$20.00`. */
export function usd(amount: number, intlTag: string): string {
  return new Intl.NumberFormat(intlTag, { style: 'currency', currency: 'USD' }).format(amount);
}

/** What a token may do, in a few words (`$20.00 a month · 60 requests/min · only gpt-*`). */
export function rulesSummary(t: Translate, rules: TokenRules, intlTag: string): string {
  const parts: string[] = [];
  if (rules.budget) {
    const amount = 'usd' in rules.budget ? usd(rules.budget.usd, intlTag) : t('namedTokens.tokens', { count: formatCount(rules.budget.tokens, intlTag) });
    parts.push(`${amount} ${t(PERIOD_WORDS[rules.budgetPeriod ?? 'month'])}`);
  }
  if (rules.requestsPerMinute !== null) parts.push(t('namedTokens.summaryRpm', { count: formatCount(rules.requestsPerMinute, intlTag) }));
  if (rules.tokensPerMinute !== null) parts.push(t('namedTokens.summaryTpm', { count: formatCount(rules.tokensPerMinute, intlTag) }));
  if (rules.maxInFlight !== null) parts.push(t('namedTokens.summaryInFlight', { count: formatCount(rules.maxInFlight, intlTag) }));
  if (rules.models.length > 0) parts.push(t('namedTokens.summaryModels', { models: rules.models.join(t('list.separator')) }));
  if (rules.expiresAt !== null) {
    const date = new Intl.DateTimeFormat(intlTag, { dateStyle: 'medium' }).format(new Date(rules.expiresAt - 1));
    parts.push(t('namedTokens.summaryExpires', { date }));
  }
  return parts.length === 0 ? t('namedTokens.noLimits') : parts.join(' · ');
}

/** The period a budget is counted over, in words, for the form's select. */
export function periodWord(t: Translate, period: BudgetPeriod): string {
  return t(PERIOD_WORDS[period]);
}
