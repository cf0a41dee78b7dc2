import type { MessageKey } from '../i18n';

/** A form's first problem per field, as the i18n keys the UI's own checks give. */
export type FieldErrors<F extends string> = Partial<Record<F, MessageKey>>;

/** A form's text checked: the value to send, or the problems at its fields. */
export type Parsed<T, F extends string> = { ok: true; value: T } | { ok: false; errors: FieldErrors<F> };

/** The field errors in words, for showing at their fields. */
export function worded<F extends string>(errors: FieldErrors<F>, t: (key: MessageKey) => string): Partial<Record<F, string>> {
  const words: Partial<Record<F, string>> = {};
  for (const [field, key] of Object.entries(errors) as [F, MessageKey | undefined][]) {
    if (key) words[field] = t(key);
  }
  return words;
}
