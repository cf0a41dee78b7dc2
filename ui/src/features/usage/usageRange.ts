import type { BucketArg } from '../../ipc/bindings';

/*
 * The periods the Usage page offers, as ranges of the user's local days. Pure: `now` is passed
 * in, so tests choose the day, and the local midnights come from the Date constructor, which
 * knows the time zone's daylight-saving changes.
 */

export const RANGE_CHOICES = ['today', 'week', 'month', 'quarter'] as const;
export type RangeChoice = (typeof RANGE_CHOICES)[number];

/** The period shown when the ledger cannot be asked how far back it goes. */
export const DEFAULT_RANGE: RangeChoice = 'month';

const DAYS: Record<RangeChoice, number> = { today: 1, week: 7, month: 30, quarter: 90 };

export const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

export interface UsageRange {
  /** The local midnight that starts the first day. */
  from: number;
  /** The local midnight after today: the range ends with today, whole. */
  to: number;
  /** What the charts show: hours for Today, the user's days otherwise (the series is read by the hour). */
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
 * The period the page opens on: the shortest that holds every request of the longest one
 * (`firstAt`, the earliest request since the longest period began), so a first day's requests
 * are spread over today's hours rather than squeezed against the right edge of a month. No
 * request in that time: today.
 */
export function openingRange(firstAt: number | null, now: number): RangeChoice {
  if (firstAt === null) return 'today';
  return RANGE_CHOICES.find((choice) => rangeOf(choice, now).from <= firstAt) ?? RANGE_CHOICES[RANGE_CHOICES.length - 1];
}

/** The buckets of a range, and how the page reads the ledger's series for them. */
export interface Buckets {
  /** Where each bucket starts. */
  starts: number[];
  /** Where the last one ends. */
  end: number;
  /** The size of the series' points: `day` when the backend's day buckets are the user's days. */
  series: BucketArg;
}

/**
 * The buckets of `[from, to)`. Hours for Today, from `from` rounded down to the hour as the
 * backend's hourly series. Otherwise the user's days, each from its local midnight: the Date
 * constructor places those across daylight-saving changes, so a day may have 23 or 25 hours.
 *
 * The backend's day buckets are 24 hours from `from`, so the page asks for them only when every
 * day of the range is 24 hours long. Across a daylight-saving change it asks for hours and sums
 * them into the user's days. Hours cost more: 90 busy days by the hour are about 20 times the data.
 */
export function bucketsOf({ from, to, bucket }: UsageRange): Buckets {
  const starts: number[] = [];
  if (bucket === 'hour') {
    for (let at = Math.floor(from / HOUR_MS) * HOUR_MS; at < to; at += HOUR_MS) starts.push(at);
    return { starts, end: to, series: 'hour' };
  }
  const first = new Date(from);
  for (let day = 0; ; day += 1) {
    const at = new Date(first.getFullYear(), first.getMonth(), first.getDate() + day).getTime();
    if (at >= to) break;
    starts.push(at);
  }
  const whole = [...starts.slice(1), to].every((next, i) => next - starts[i] === DAY_MS);
  return { starts, end: to, series: whole ? 'day' : 'hour' };
}

/**
 * The bucket that a point of the series (by its start) counts in, or -1 outside them all: the
 * last bucket to start at or before the point's middle. In a time zone half an hour off UTC, an
 * hour that straddles midnight therefore counts for the day its second half is in.
 */
export function bucketIndex({ starts, end, series }: Buckets, point: number): number {
  const middle = point + (series === 'hour' ? HOUR_MS : DAY_MS) / 2;
  if (middle >= end) return -1;
  let low = 0;
  let high = starts.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (starts[mid] <= middle) low = mid + 1;
    else high = mid;
  }
  return low - 1;
}

/** A bucket's name: `14:00` for an hour, `Jan 15` for a day, in the UI's language. */
export function bucketLabel(start: number, bucket: BucketArg, intlTag: string): string {
  const options: Intl.DateTimeFormatOptions =
    bucket === 'hour' ? { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' } : { month: 'short', day: 'numeric' };
  return new Intl.DateTimeFormat(intlTag, options).format(new Date(start));
}
