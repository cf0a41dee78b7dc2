import { z } from 'zod';
import type { MessageKey } from '../../../../i18n';
import { type ApiKey, LIMITS } from '../../../../ipc/bindings';
import type { ApiKeyChanges } from '../../../../ipc/llmConfig';
import type { FieldErrors, Parsed } from '../../../../forms/fieldErrors';
import { apiKeySchema, refusal, wholeNumberFromText } from '../../../../forms/parsers';

/*
 * The backend's argument rules (README, "IPC commands"), checked before a round trip with the
 * bounds the backend declares (`LIMITS`). Messages are i18n keys; the backend stays the
 * authority and its issues are shown at the same fields.
 */

/** Trimmed; empty means no label. */
export const labelSchema = z.string().trim().max(LIMITS.keyLabel.maxChars, refusal('error.labelTooLong'));

/** Trimmed; empty means a group of its own. */
export const quotaGroupSchema = z.string().trim().max(LIMITS.quotaGroup.maxChars, refusal('error.quotaGroupTooLong'));

export const weightSchema = z
  .number(refusal('error.weightRange'))
  .int(refusal('error.weightRange'))
  .min(LIMITS.weight.min, refusal('error.weightRange'))
  .max(LIMITS.weight.max, refusal('error.weightRange'));

/** ArrowUp/ArrowDown on a weight field: the next weight within its bounds, or null for other keys. */
export function stepWeight(text: string, key: string): string | null {
  if (key !== 'ArrowUp' && key !== 'ArrowDown') return null;
  const { min, max } = LIMITS.weight;
  const current = wholeNumberFromText(text);
  const base = Number.isNaN(current) ? LIMITS.weight.default : current;
  return String(Math.min(max, Math.max(min, base + (key === 'ArrowUp' ? 1 : -1))));
}

/** A user limit as typed: empty (or left out) means none; else a whole number within `bounds`. */
function limitText(bounds: { min: number; max: number }, error: MessageKey) {
  return z
    .string()
    .default('')
    .transform((text) => (text.trim() === '' ? undefined : wholeNumberFromText(text)))
    .pipe(z.number(refusal(error)).int(refusal(error)).min(bounds.min, refusal(error)).max(bounds.max, refusal(error)).optional());
}

/** A key's limits as typed: requests per minute and requests at once, each optional. */
export const limitsFormSchema = z.object({
  rpmLimit: limitText(LIMITS.rpmLimit, 'error.rpmRange'),
  maxConcurrent: limitText(LIMITS.maxConcurrent, 'error.concurrentRange'),
});

export type LimitsForm = z.input<typeof limitsFormSchema>;
/** What `llmConfig:setKeyLimits` and `llmConfig:addApiKey` take: an absent limit is none. */
export interface Limits {
  rpmLimit?: number;
  maxConcurrent?: number;
}

/** The add form as typed: text fields, the weight as text (empty means the default), the limits. */
export const addKeyFormSchema = z.object({
  apiKey: apiKeySchema,
  label: labelSchema,
  quotaGroup: quotaGroupSchema.default(''),
  weight: z
    .string()
    .transform((text) => (text.trim() === '' ? LIMITS.weight.default : wholeNumberFromText(text)))
    .pipe(weightSchema),
  ...limitsFormSchema.shape,
});

export type AddKeyForm = z.input<typeof addKeyFormSchema>;
/** What the add form sends, besides the provider. */
export type NewKey = { apiKey: string; label?: string; weight: number; quotaGroup?: string } & Limits;

/** The edit form as typed: a new secret (empty keeps the stored one), label, weight, limits, quota group. */
export const editKeyFormSchema = z.object({
  apiKey: z.string().transform((text) => text.trim()).pipe(z.union([z.literal(''), apiKeySchema])),
  label: labelSchema,
  weight: z.string().transform(wholeNumberFromText).pipe(weightSchema),
  ...limitsFormSchema.shape,
  quotaGroup: quotaGroupSchema,
});

export type EditKeyForm = z.input<typeof editKeyFormSchema>;

/** A stored key as the edit form shows it. */
export function editKeyText(key: ApiKey): Required<EditKeyForm> {
  return { apiKey: '', label: key.label ?? '', weight: String(key.weight), ...limitsText(key), quotaGroup: key.quotaGroup ?? '' };
}

/**
 * The edit form, checked, as the changes `llmConfig:updateApiKey` takes: only what differs from
 * `key` (a label or quota group emptied is sent as `""`, which removes it; the limits go as a
 * pair, both replaced). Nothing changed: an empty object.
 */
export function parseEditKeyForm(form: EditKeyForm, key: ApiKey): Parsed<ApiKeyChanges, keyof EditKeyForm> {
  const result = editKeyFormSchema.safeParse(form);
  if (!result.success) return { ok: false, errors: fieldErrors(result.error) };
  const { apiKey, label, weight, rpmLimit, maxConcurrent, quotaGroup } = result.data;
  const changes: ApiKeyChanges = {};
  if (apiKey !== '') changes.apiKey = apiKey;
  if (label !== (key.label ?? '')) changes.label = label;
  if (weight !== key.weight) changes.weight = weight;
  if ((rpmLimit ?? null) !== key.rpmLimit || (maxConcurrent ?? null) !== key.maxConcurrent) {
    changes.limits = setLimits({ rpmLimit, maxConcurrent });
  }
  if (quotaGroup !== (key.quotaGroup ?? '')) changes.quotaGroup = quotaGroup;
  return { ok: true, value: changes };
}

/** First message per field, as i18n keys. */
function fieldErrors<F extends string>(error: z.ZodError): FieldErrors<F> {
  const errors: FieldErrors<F> = {};
  for (const issue of error.issues) {
    const field = String(issue.path[0] ?? '') as F;
    errors[field] ??= issue.message as MessageKey;
  }
  return errors;
}

/** Only the limits that are set: an absent one is none (the backend refuses null). */
function setLimits({ rpmLimit, maxConcurrent }: Limits): Limits {
  return { ...(rpmLimit !== undefined ? { rpmLimit } : {}), ...(maxConcurrent !== undefined ? { maxConcurrent } : {}) };
}

/** The add form, checked and normalised into what `llmConfig:addApiKey` takes (no empty label, no empty limit). */
export function parseAddKeyForm(form: AddKeyForm): Parsed<NewKey, keyof AddKeyForm> {
  const result = addKeyFormSchema.safeParse(form);
  if (!result.success) return { ok: false, errors: fieldErrors(result.error) };
  const { apiKey, label, weight, quotaGroup, ...limits } = result.data;
  return { ok: true, value: { apiKey, weight, ...(label ? { label } : {}), ...(quotaGroup ? { quotaGroup } : {}), ...setLimits(limits) } };
}

/** The limits form, checked and normalised into what `llmConfig:setKeyLimits` takes besides the id. */
export function parseLimitsForm(form: LimitsForm): Parsed<Limits, keyof LimitsForm> {
  const result = limitsFormSchema.safeParse(form);
  return result.success ? { ok: true, value: setLimits(result.data) } : { ok: false, errors: fieldErrors(result.error) };
}

/** A key's stored limits as the form shows them: empty for none. */
export function limitsText(key: { rpmLimit: number | null; maxConcurrent: number | null }): Required<LimitsForm> {
  return { rpmLimit: key.rpmLimit === null ? '' : String(key.rpmLimit), maxConcurrent: key.maxConcurrent === null ? '' : String(key.maxConcurrent) };
}

/** A quota group as typed for pasted keys: trimmed, empty for none. */
export function parseQuotaGroup(text: string): { ok: true; value: string } | { ok: false; error: MessageKey } {
  const result = quotaGroupSchema.safeParse(text);
  return result.success ? { ok: true, value: result.data } : { ok: false, error: result.error.issues[0].message as MessageKey };
}

export function parseWeight(text: string): { ok: true; value: number } | { ok: false; error: MessageKey } {
  const result = weightSchema.safeParse(wholeNumberFromText(text));
  return result.success ? { ok: true, value: result.data } : { ok: false, error: result.error.issues[0].message as MessageKey };
}

/**
 * Room left in a label for the number an import adds after the prefix (` #10000`), so every
 * label made from a prefix stays within `LIMITS.keyLabel`.
 */
const IMPORT_NUMBER_ROOM = ' #100000'.length;
/** The longest label prefix an import takes. */
export const IMPORT_PREFIX_MAX = LIMITS.keyLabel.maxChars - IMPORT_NUMBER_ROOM;

/** The import form as typed: the settings applied to every imported key. */
export const importFormSchema = z.object({
  weight: z
    .string()
    .transform((text) => (text.trim() === '' ? LIMITS.weight.default : wholeNumberFromText(text)))
    .pipe(weightSchema),
  labelPrefix: z.string().trim().max(IMPORT_PREFIX_MAX, refusal('import.prefixTooLong')),
  quotaGroup: quotaGroupSchema,
  validate: z.boolean(),
  keepRejectedDisabled: z.boolean(),
});

export type ImportForm = z.input<typeof importFormSchema>;
/** What `llmConfig:startKeyImport` takes besides the import's id: no empty prefix or group. */
export interface ImportSettings {
  weight: number;
  labelPrefix?: string;
  quotaGroup?: string;
  validate: boolean;
  keepRejectedDisabled: boolean;
}

/** The import form, checked and normalised; errors per field as i18n keys. */
export function parseImportForm(form: ImportForm): Parsed<ImportSettings, keyof ImportForm> {
  const result = importFormSchema.safeParse(form);
  if (!result.success) return { ok: false, errors: fieldErrors(result.error) };
  const { weight, labelPrefix, quotaGroup, validate, keepRejectedDisabled } = result.data;
  return {
    ok: true,
    value: { weight, validate, keepRejectedDisabled, ...(labelPrefix ? { labelPrefix } : {}), ...(quotaGroup ? { quotaGroup } : {}) },
  };
}
