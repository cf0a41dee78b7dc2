import { describe, expect, it } from 'vitest';
import { formatCost, formatLatency, formatPrice, formatShare } from '../usageFormat';

describe('usage numbers in words', () => {
  it('write costs in cents, and fractions of a cent with two significant digits', () => {
    expect(formatCost(1.8234, 'en')).toBe('$1.82');
    expect(formatCost(0, 'en')).toBe('$0.00');
    expect(formatCost(0.00042, 'en'), 'not $0.00: it cost something').toBe('$0.00042');
    expect(formatCost(1234.5, 'ru')).toMatch(/^1\s234,50\s\$$/);
  });

  it('write prices with as many decimals as they have', () => {
    expect(formatPrice(0.075, 'en')).toBe('$0.075');
    expect(formatPrice(2.5, 'en')).toBe('$2.50');
  });

  it('write latencies in milliseconds below a second, in seconds above', () => {
    expect(formatLatency(850, 'en')).toBe('850 ms');
    expect(formatLatency(1540, 'en')).toBe('1.5 sec');
    expect(formatLatency(850, 'ja')).toBe('850 ms');
  });

  it('write shares as percentages with at most one decimal', () => {
    expect(formatShare(0.2470588, 'en')).toBe('24.7%');
    expect(formatShare(0.75, 'ru')).toMatch(/^75\s%$/);
  });
});
