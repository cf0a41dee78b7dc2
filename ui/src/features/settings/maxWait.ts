import { z } from 'zod';
import type { MessageKey } from '../../i18n';
import { wholeNumberFromText } from './api-keys/schema';

/** The backend's range for how long a reply may wait for a free key (`settings:update`). */
export const MAX_WAIT_SECONDS = 120;

const RANGE: { error: MessageKey } = { error: 'error.maxWaitRange' };
const maxWaitSchema = z.number(RANGE).int(RANGE).min(0, RANGE).max(MAX_WAIT_SECONDS, RANGE);

/** Whole seconds from 0 to 120, as typed (plain digits only: no `1e2`, no `1.5`, not empty). */
export function parseMaxWait(text: string): { ok: true; value: number } | { ok: false; error: MessageKey } {
  const result = maxWaitSchema.safeParse(wholeNumberFromText(text));
  return result.success ? { ok: true, value: result.data } : { ok: false, error: RANGE.error };
}

/** ArrowUp/ArrowDown: the next second within 0–120 (from 0 when the text is not a number); null for other keys. */
export function stepMaxWait(text: string, key: string): string | null {
  if (key !== 'ArrowUp' && key !== 'ArrowDown') return null;
  const current = wholeNumberFromText(text);
  const base = Number.isNaN(current) ? 0 : current;
  return String(Math.min(MAX_WAIT_SECONDS, Math.max(0, base + (key === 'ArrowUp' ? 1 : -1))));
}
