import { describe, expect, it } from 'vitest';
import { parseSetting, SETTING_SPECS, stepSetting } from '../backendSettings';

const maxWait = SETTING_SPECS.maxWaitSeconds;
const parseMaxWait = (text: string) => parseSetting(maxWait, text);
const stepMaxWait = (text: string, key: string) => stepSetting(maxWait, text, key);

describe('the longest wait for a free key mirrors the backend rule (0–120 s)', () => {
  it.each([
    ['0', 0],
    ['20', 20],
    [' 120 ', 120],
  ])('accepts %j', (text, value) => {
    expect(parseMaxWait(text)).toEqual({ ok: true, value });
  });

  it.each(['', '121', '-1', '1.5', '1e2', 'ten', '20s'])('rejects %j (no coercion)', (text) => {
    expect(parseMaxWait(text)).toEqual({ ok: false, error: 'error.maxWaitRange' });
  });

  it('steps with the arrow keys within 0–120', () => {
    expect(stepMaxWait('20', 'ArrowUp')).toBe('21');
    expect(stepMaxWait('0', 'ArrowDown')).toBe('0');
    expect(stepMaxWait('120', 'ArrowUp')).toBe('120');
    expect(stepMaxWait('', 'ArrowUp')).toBe('1');
    expect(stepMaxWait('20', 'Tab')).toBeNull();
  });
});

describe('the other backend settings mirror their backend ranges', () => {
  it.each([
    ['bindingIdleMinutes', '1', '1440', '0', '1441', 'error.bindingIdleRange'],
    ['usageRetentionDays', '1', '3650', '0', '3651', 'error.usageRetentionRange'],
  ] as const)('%s: %s and %s are accepted, %s and %s are not', (setting, low, high, below, above, error) => {
    const spec = SETTING_SPECS[setting];
    expect(parseSetting(spec, low)).toEqual({ ok: true, value: Number(low) });
    expect(parseSetting(spec, high)).toEqual({ ok: true, value: Number(high) });
    expect(parseSetting(spec, below)).toEqual({ ok: false, error });
    expect(parseSetting(spec, above)).toEqual({ ok: false, error });
    expect(stepSetting(spec, high, 'ArrowUp')).toBe(high);
    expect(stepSetting(spec, low, 'ArrowDown')).toBe(low);
  });
});
