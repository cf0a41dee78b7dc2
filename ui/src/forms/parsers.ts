import { z } from 'zod';
import type { MessageKey } from '../i18n';
import { LIMITS } from '../ipc/bindings';

/*
 * The parsers several forms share: a number typed in a field, an API key. Pure; a refusal is an
 * i18n key.
 */

/** zod's error option for a refusal worded by the i18n key `key`. */
export const refusal = (key: MessageKey) => ({ error: key });

/** What a number field holds: only plain digits become a number (no `1e2`, no `1.5`). */
export function wholeNumberFromText(text: string): number {
  const trimmed = text.trim();
  return /^\d+$/.test(trimmed) ? Number(trimmed) : Number.NaN;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** One token of at most `LIMITS.apiKey` characters, or `$NAME` naming an environment variable. Trimmed. */
export const apiKeySchema = z
  .string()
  .trim()
  .min(1, refusal('error.apiKeyRequired'))
  .max(LIMITS.apiKey.maxChars, refusal('error.apiKeyTooLong'))
  .refine((key) => !/\s/.test(key), refusal('error.apiKeySpaces'))
  .refine((key) => !key.startsWith('$') || ENV_NAME.test(key.slice(1)), refusal('error.envName'));
