import type { BucketArg } from '../../ipc/bindings';

/*
 * The periods the Usage page offers, as ranges of the user's local days. Pure: `now` is passed
 * in, so tests choose the day, and the local midnights come from the Date constructor, which
 * knows the time zone's daylight-saving changes.
 */

export const RANGE_CHOICES = ['today', 'week', 'month', 'quarter'] as const;
export type RangeChoice = (typeof RANGE_CHOICES)[number];

export const DEFAULT_RANGE: RangeChoice = 'month';

const DAYS: Record<RangeChoice, number> = { today: 1, week: 7, month: 30, quarter: 90 };

export const HOUR_MS = 3_600_000;
const BUCKET_MS: Record<BucketArg, number> = { hour: HOUR_MS, day: 24 * HOUR_MS };

export interface UsageRange {
  /** The local midnight that starts the first day. */
  from: number;
  /** The local midnight after today: the range ends with today, whole. */
  to: number;
  /** Hours for Today, days otherwise. */
  bucket: BucketArg;
}

/** The last `n` local days up to and including today (by `now`), as `[from, to)`. */
export function rangeOf(choice: RangeChoice, now: number): UsageRange {
  const today = new Date(now);
  const y = today.getFullYear();
  const m = today.getMonth();
  const d = today.getDate();
  return {
    from: new Date(y, m, d - (DAYS[choice] - 1)).getTime(),
    to: new Date(y, m, d + 1).getTime(),
    bucket: choice === 'today' ? 'hour' : 'day',
  };
}

/**
 * The start of every bucket of `[from, to)`, as the backend makes them: from `from` rounded down
 * to the hour, one bucket size apart. (Day buckets are 24 hours, so across a daylight-saving
 * change they start an hour off the local midnight; {@link bucketDay} names them by their day.)
 */
export function bucketStarts({ from, to, bucket }: UsageRange): number[] {
  const size = BUCKET_MS[bucket];
  const starts: number[] = [];
  for (let at = Math.floor(from / HOUR_MS) * HOUR_MS; at < to; at += size) starts.push(at);
  return starts;
}

/** The position of the bucket that starts at `at` among `starts`, or -1. */
export function bucketIndex(starts: readonly number[], at: number): number {
  if (starts.length === 0) return -1;
  const size = starts.length > 1 ? starts[1] - starts[0] : HOUR_MS;
  const index = Math.round((at - starts[0]) / size);
  return starts[index] === at ? index : -1;
}

/** The moment a day bucket is named by: its middle, which lies in its local day even when it starts an hour off. */
export function bucketDay(start: number, bucket: BucketArg): number {
  return bucket === 'day' ? start + BUCKET_MS.day / 2 : start;
}

/** A bucket's name: `14:00` for an hour, `Jan 15` for a day, in the UI's language. */
export function bucketLabel(start: number, bucket: BucketArg, intlTag: string): string {
  const options: Intl.DateTimeFormatOptions =
    bucket === 'hour' ? { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' } : { month: 'short', day: 'numeric' };
  return new Intl.DateTimeFormat(intlTag, options).format(new Date(bucketDay(start, bucket)));
}
