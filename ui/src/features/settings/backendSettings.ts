import type { MessageKey } from '../../i18n';
import { LIMITS, type Settings } from '../../ipc/bindings';
import { wholeNumberFromText } from '../../forms/parsers';

/** A setting the backend keeps (`settings:get` / `settings:update`) that is a whole number. */
export type BackendSetting = { [K in keyof Settings]: Settings[K] extends number ? K : never }[keyof Settings];

export interface SettingSpec {
  label: MessageKey;
  unit: MessageKey;
  hint: MessageKey;
  /** The backend's range (`LIMITS`). */
  min: number;
  max: number;
  /** The range in words, shown when a typed value falls outside it. */
  rangeError: MessageKey;
  testId: string;
}

/** How each backend setting is shown in Settings → General, in the order it is shown. */
export const SETTING_SPECS: Record<BackendSetting, SettingSpec> = {
  maxWaitSeconds: {
    label: 'general.maxWait',
    unit: 'general.seconds',
    hint: 'general.maxWaitHint',
    ...LIMITS.maxWaitSeconds,
    rangeError: 'error.maxWaitRange',
    testId: 'max-wait',
  },
  bindingIdleMinutes: {
    label: 'general.bindingIdle',
    unit: 'general.minutes',
    hint: 'general.bindingIdleHint',
    ...LIMITS.bindingIdleMinutes,
    rangeError: 'error.bindingIdleRange',
    testId: 'binding-idle',
  },
  usageRetentionDays: {
    label: 'general.usageRetention',
    unit: 'general.days',
    hint: 'general.usageRetentionHint',
    ...LIMITS.usageRetentionDays,
    rangeError: 'error.usageRetentionRange',
    testId: 'usage-retention',
  },
};

/** A whole number within the setting's range, as typed (plain digits only: no `1e2`, no `1.5`, not empty). */
export function parseSetting(spec: SettingSpec, text: string): { ok: true; value: number } | { ok: false; error: MessageKey } {
  const value = wholeNumberFromText(text);
  return Number.isInteger(value) && value >= spec.min && value <= spec.max ? { ok: true, value } : { ok: false, error: spec.rangeError };
}

/** ArrowUp/ArrowDown: the next value within the range (from the minimum when the text is not a number); null for other keys. */
export function stepSetting(spec: SettingSpec, text: string, key: string): string | null {
  if (key !== 'ArrowUp' && key !== 'ArrowDown') return null;
  const current = wholeNumberFromText(text);
  const base = Number.isNaN(current) ? spec.min : current;
  return String(Math.min(spec.max, Math.max(spec.min, base + (key === 'ArrowUp' ? 1 : -1))));
}
