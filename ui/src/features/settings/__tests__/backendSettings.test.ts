import { describe, expect, it } from 'vitest';
import { LIMITS } from '../../../ipc/bindings';
import { parseSetting, SETTING_SPECS, stepSetting } from '../backendSettings';

const maxWait = SETTING_SPECS.maxWaitSeconds;
const parseMaxWait = (text: string) => parseSetting(maxWait, text);
const stepMaxWait = (text: string, key: string) => stepSetting(maxWait, text, key);

const { min, max } = LIMITS.maxWaitSeconds;

describe('the longest wait for a free key follows the backend’s bounds', () => {
  it.each([
    [String(min), min],
    ['20', 20],
    [` ${max} `, max],
  ])('accepts %j', (text, value) => {
    expect(parseMaxWait(text)).toEqual({ ok: true, value });
  });

  it.each(['', String(max + 1), '-1', '1.5', '1e2', 'ten', '20s'])('rejects %j (no coercion)', (text) => {
    expect(parseMaxWait(text)).toEqual({ ok: false, error: 'error.maxWaitRange' });
  });

  it('steps with the arrow keys within the bounds', () => {
    expect(stepMaxWait('20', 'ArrowUp')).toBe('21');
    expect(stepMaxWait(String(min), 'ArrowDown')).toBe(String(min));
    expect(stepMaxWait(String(max), 'ArrowUp')).toBe(String(max));
    expect(stepMaxWait('', 'ArrowUp')).toBe(String(min + 1));
    expect(stepMaxWait('20', 'Tab')).toBeNull();
  });
});

/** A setting's lowest and highest values, and the ones just beyond, as typed. */
const edges = ({ min, max }: { min: number; max: number }) => [String(min), String(max), String(min - 1), String(max + 1)] as const;

describe('the other backend settings follow their backend bounds', () => {
  it.each([
    ['bindingIdleMinutes', ...edges(LIMITS.bindingIdleMinutes), 'error.bindingIdleRange'],
    ['usageRetentionDays', ...edges(LIMITS.usageRetentionDays), 'error.usageRetentionRange'],
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
