import { describe, expect, it } from 'vitest';
import { bucketIndex, bucketLabel, bucketStarts, HOUR_MS, rangeOf } from '../usageRange';

const NOW = new Date(2026, 0, 15, 14, 10).getTime();
const midnight = (days: number) => new Date(2026, 0, 15 + days).getTime();

describe('the periods of the Usage page', () => {
  it('are whole local days ending with today', () => {
    expect(rangeOf('today', NOW)).toEqual({ from: midnight(0), to: midnight(1), bucket: 'hour' });
    expect(rangeOf('week', NOW)).toEqual({ from: midnight(-6), to: midnight(1), bucket: 'day' });
    expect(rangeOf('month', NOW)).toEqual({ from: midnight(-29), to: midnight(1), bucket: 'day' });
    expect(rangeOf('quarter', NOW)).toEqual({ from: midnight(-89), to: midnight(1), bucket: 'day' });
  });

  it('start on the same day just after midnight and just before the next', () => {
    expect(rangeOf('today', midnight(0)).from).toBe(midnight(0));
    expect(rangeOf('today', midnight(1) - 1).from, 'the last millisecond of the day is still today').toBe(midnight(0));
  });

  it('have the buckets the backend makes: from the hour of `from`, a bucket size apart', () => {
    const today = rangeOf('today', NOW);
    const hours = bucketStarts(today);
    expect(hours, 'a day of hours (23 or 25 across a daylight-saving change)').toHaveLength((today.to - today.from) / HOUR_MS);
    expect(hours[0]).toBe(today.from);
    const days = bucketStarts(rangeOf('week', NOW));
    expect(days).toHaveLength(7);
    expect(days[1] - days[0]).toBe(24 * HOUR_MS);
    expect(bucketIndex(days, days[3])).toBe(3);
    expect(bucketIndex(days, days[3] + HOUR_MS), 'not a bucket start').toBe(-1);
    expect(bucketIndex(days, days[6] + 24 * HOUR_MS), 'past the last bucket').toBe(-1);
  });

  it('round a `from` off the hour down to it, as the backend does', () => {
    const from = Date.UTC(2026, 0, 15, 5, 30);
    expect(bucketStarts({ from, to: from + 3 * HOUR_MS, bucket: 'hour' })).toEqual([
      Date.UTC(2026, 0, 15, 5),
      Date.UTC(2026, 0, 15, 6),
      Date.UTC(2026, 0, 15, 7),
      Date.UTC(2026, 0, 15, 8),
    ]);
  });

  it('name a day bucket by its day even when it starts an hour off the midnight', () => {
    const day = midnight(0);
    expect(bucketLabel(day, 'day', 'en')).toBe('Jan 15');
    expect(bucketLabel(day - HOUR_MS, 'day', 'en'), 'a day bucket starting at 23:00 the day before').toBe('Jan 15');
    expect(bucketLabel(day + HOUR_MS, 'day', 'en'), 'one starting at 01:00').toBe('Jan 15');
    expect(bucketLabel(new Date(2026, 0, 15, 9).getTime(), 'hour', 'en')).toBe('09:00');
    expect(bucketLabel(day, 'day', 'ja')).toBe('1月15日');
    expect(bucketLabel(day, 'day', 'zh-CN')).toBe('1月15日');
    expect(bucketLabel(day, 'day', 'ru')).toBe('15 янв.');
  });
});
