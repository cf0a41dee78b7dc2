import { describe, expect, it } from 'vitest';
import { bucketIndex, bucketLabel, bucketsOf, HOUR_MS, rangeOf } from '../usageRange';

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

  it('have hours for Today and the user’s days otherwise; an hour of the series counts in the bucket it falls in', () => {
    const today = rangeOf('today', NOW);
    const hours = bucketsOf(today);
    expect(hours.starts, 'a day of hours').toHaveLength((today.to - today.from) / HOUR_MS);
    expect(hours.starts[0]).toBe(today.from);
    expect(hours.end).toBe(today.to);
    expect(bucketIndex(hours, hours.starts[5])).toBe(5);
    const days = bucketsOf(rangeOf('week', NOW));
    expect(days.starts).toEqual([-6, -5, -4, -3, -2, -1, 0].map(midnight));
    expect(bucketIndex(days, days.starts[3]), 'a day of the series').toBe(3);
    const hoursOfDays = { ...days, series: 'hour' as const };
    expect(bucketIndex(hoursOfDays, days.starts[3]), 'the first hour of a day').toBe(3);
    expect(bucketIndex(hoursOfDays, days.starts[4] - HOUR_MS), 'its last hour').toBe(3);
    expect(bucketIndex(hoursOfDays, days.starts[0] - HOUR_MS), 'before the first day').toBe(-1);
    expect(bucketIndex(hoursOfDays, midnight(1)), 'after the last').toBe(-1);
    expect(hours.series, 'Today is read by the hour').toBe('hour');
    expect(days.series, 'days of 24 hours are read by the day').toBe('day');
  });

  it('follow the local days across daylight-saving changes (Europe/Berlin)', () => {
    const zone = process.env.TZ;
    process.env.TZ = 'Europe/Berlin';
    try {
      // Sunday 29 March 2026 has 23 hours in Berlin; Sunday 25 October 2026 has 25.
      const spring = rangeOf('week', new Date(2026, 2, 31, 12).getTime());
      const springDays = bucketsOf(spring).starts;
      expect(springDays.map((at) => new Date(at).getHours()), 'every day starts at local midnight').toEqual([0, 0, 0, 0, 0, 0, 0]);
      expect(springDays[5] - springDays[4], '29 March: 23 hours').toBe(23 * HOUR_MS);
      // 30 March 00:00 in Berlin is 29 March 22:00 UTC: an hour of the series from then counts for the 30th.
      expect(bucketIndex(bucketsOf(spring), Date.UTC(2026, 2, 29, 22)), 'the first hour of 30 March').toBe(5);
      expect(bucketIndex(bucketsOf(spring), Date.UTC(2026, 2, 29, 21)), 'the last hour of 29 March').toBe(4);
      expect(bucketLabel(springDays[5], 'day', 'en')).toBe('Mar 30');
      expect(bucketsOf(spring).series, 'a 23-hour day: the series is read by the hour').toBe('hour');
      expect(bucketsOf(rangeOf('week', new Date(2026, 2, 20, 12).getTime())).series, 'a week before the change: by the day').toBe('day');

      const autumn = bucketsOf(rangeOf('week', new Date(2026, 9, 27, 12).getTime())).starts;
      expect(autumn.map((at) => new Date(at).getHours())).toEqual([0, 0, 0, 0, 0, 0, 0]);
      expect(autumn[5] - autumn[4], '25 October: 25 hours').toBe(25 * HOUR_MS);
      const today = rangeOf('today', new Date(2026, 9, 25, 12).getTime());
      expect(bucketsOf(today).starts, 'Today on 25 October: 25 hours').toHaveLength(25);
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });

  it('count an hour that straddles midnight, in a time zone half an hour off UTC, for the day of its second half', () => {
    const zone = process.env.TZ;
    process.env.TZ = 'Asia/Kolkata';
    try {
      const days = bucketsOf(rangeOf('week', new Date(2026, 0, 15, 12).getTime()));
      // 15 January 00:00 in Kolkata is 14 January 18:30 UTC; the hour from 18:00 UTC is mostly the 15th.
      expect(days.starts[6]).toBe(Date.UTC(2026, 0, 14, 18, 30));
      const hoursOfDays = { ...days, series: 'hour' as const };
      expect(bucketIndex(hoursOfDays, Date.UTC(2026, 0, 14, 18))).toBe(6);
      expect(bucketIndex(hoursOfDays, Date.UTC(2026, 0, 14, 17))).toBe(5);
      // The backend's day buckets start on the hour too: the one from 18:00 UTC is the 15th.
      expect(days.series).toBe('day');
      expect(bucketIndex(days, Date.UTC(2026, 0, 14, 18))).toBe(6);
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });

  it('round a `from` off the hour down to it, as the backend does', () => {
    const from = Date.UTC(2026, 0, 15, 5, 30);
    expect(bucketsOf({ from, to: from + 3 * HOUR_MS, bucket: 'hour' }).starts).toEqual([
      Date.UTC(2026, 0, 15, 5),
      Date.UTC(2026, 0, 15, 6),
      Date.UTC(2026, 0, 15, 7),
      Date.UTC(2026, 0, 15, 8),
    ]);
  });

  it('name a bucket by its hour or its day, in the UI’s language', () => {
    const day = midnight(0);
    expect(bucketLabel(day, 'day', 'en')).toBe('Jan 15');
    expect(bucketLabel(new Date(2026, 0, 15, 9).getTime(), 'hour', 'en')).toBe('09:00');
    expect(bucketLabel(day, 'day', 'ja')).toBe('1月15日');
    expect(bucketLabel(day, 'day', 'zh-CN')).toBe('1月15日');
    expect(bucketLabel(day, 'day', 'ru')).toBe('15 янв.');
  });
});
