import { describe, expect, it } from 'vitest';
import { clockOffset, formatCountdown, remaining } from '../clock';

describe('countdowns use the backend clock', () => {
  it('counts from the backend time, however wrong the UI clock is', () => {
    const offset = clockOffset(100_000, 40_000); // the UI clock is a minute behind
    expect(remaining(160_000, 40_000, offset)).toBe(60_000);
    expect(remaining(160_000, 110_000, offset), 'never negative').toBe(0);
  });

  it('formats as m:ss and h:mm:ss, rounding up', () => {
    expect(formatCountdown(60_000)).toBe('1:00');
    expect(formatCountdown(4_001)).toBe('0:05');
    expect(formatCountdown(900_000)).toBe('15:00');
    expect(formatCountdown(3_723_000)).toBe('1:02:03');
  });
});
