import { describe, expect, it } from 'vitest';
import { parseMaxWait, stepMaxWait } from '../maxWait';

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
