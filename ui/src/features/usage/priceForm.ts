import { z } from 'zod';
import type { MessageKey } from '../../i18n';
import { LIMITS, type SetPriceArgs } from '../../ipc/bindings';
import type { FieldErrors, Parsed } from '../../forms/fieldErrors';
import { refusal } from '../../forms/parsers';

/*
 * The price form's rules, those of `SetPriceArgs` in the backend: a model name, not blank, of at
 * most `LIMITS.modelName` bytes (UTF-8); prices in US dollars per million tokens within
 * `LIMITS.price`; the cached input price optional (absent: the input price). Messages are i18n
 * keys; the backend stays the authority and its issues are shown at the same fields.
 */

export const PRICE_FIELDS = ['model', 'inputPerMillion', 'cachedInputPerMillion', 'outputPerMillion'] as const;
export type PriceField = (typeof PRICE_FIELDS)[number];
export type PriceForm = Record<PriceField, string>;

/**
 * A price as typed: digits with at most one decimal separator, a point or a comma (`2.5`, `2,5`,
 * `.5`), since many languages write the decimal comma. Anything else (`1e3`, `-1`, `$2`) is not a number.
 */
export function priceFromText(text: string): number {
  const trimmed = text.trim();
  return /^(\d+([.,]\d*)?|[.,]\d+)$/.test(trimmed) ? Number(trimmed.replace(',', '.')) : Number.NaN;
}

const dollars = z.number(refusal('usagePage.priceRange')).min(LIMITS.price.min, refusal('usagePage.priceRange')).max(LIMITS.price.max, refusal('usagePage.priceRange'));
const price = z.string().trim().min(1, refusal('usagePage.priceRequired')).transform(priceFromText).pipe(dollars);
/** Empty: none (the input price applies). */
const optionalPrice = z
  .string()
  .transform((text) => (text.trim() === '' ? undefined : priceFromText(text)))
  .pipe(dollars.optional());

export const priceFormSchema = z.object({
  model: z
    .string()
    .trim()
    .min(1, refusal('usagePage.modelRequired'))
    .refine((model) => new TextEncoder().encode(model).length <= LIMITS.modelName.maxBytes, refusal('usagePage.modelTooLong')),
  inputPerMillion: price,
  cachedInputPerMillion: optionalPrice,
  outputPerMillion: price,
});

/** The form, checked and normalised into what `usage:setPrice` takes (no empty cached price). */
export function parsePriceForm(form: PriceForm): Parsed<SetPriceArgs, PriceField> {
  const result = priceFormSchema.safeParse(form);
  if (!result.success) {
    const errors: FieldErrors<PriceField> = {};
    for (const issue of result.error.issues) errors[String(issue.path[0]) as PriceField] ??= issue.message as MessageKey;
    return { ok: false, errors };
  }
  const { cachedInputPerMillion, ...rest } = result.data;
  return { ok: true, value: { ...rest, ...(cachedInputPerMillion !== undefined ? { cachedInputPerMillion } : {}) } };
}

/** A stored price as the form shows it (a point for decimals, as stored); an empty form to add one. */
export function priceText(price?: { model: string; inputPerMillion: number; cachedInputPerMillion: number | null; outputPerMillion: number }): PriceForm {
  if (!price) return { model: '', inputPerMillion: '', cachedInputPerMillion: '', outputPerMillion: '' };
  return {
    model: price.model,
    inputPerMillion: String(price.inputPerMillion),
    cachedInputPerMillion: price.cachedInputPerMillion === null ? '' : String(price.cachedInputPerMillion),
    outputPerMillion: String(price.outputPerMillion),
  };
}
