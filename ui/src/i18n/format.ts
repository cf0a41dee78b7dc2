/** Numbers and times in the UI's language. Pure: `now` and the Intl tag are passed in. */

const DAY = 24 * 60 * 60 * 1000;

/** `14:02` when `at` is today (by `now`), else `Mar 3, 14:02`. A 24-hour clock in every language. */
export function formatClockTime(at: number, now: number, intlTag: string): string {
  const date = new Date(at);
  const sameDay = new Date(now).toDateString() === date.toDateString();
  return new Intl.DateTimeFormat(intlTag, {
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
    ...(sameDay ? {} : { month: 'short', day: 'numeric' }),
  }).format(date);
}

/** `2 minutes ago`, `just now` (a relative phrase in the UI's language). */
export function formatRelative(at: number, now: number, intlTag: string): string {
  const rtf = new Intl.RelativeTimeFormat(intlTag, { numeric: 'auto' });
  const diff = at - now;
  const abs = Math.abs(diff);
  if (abs < 45_000) return rtf.format(0, 'second');
  if (abs < 45 * 60_000) return rtf.format(Math.round(diff / 60_000), 'minute');
  if (abs < DAY) return rtf.format(Math.round(diff / 3_600_000), 'hour');
  return rtf.format(Math.round(diff / DAY), 'day');
}

/** A count as the UI's language writes it (`100,000`, `100 000`). */
export function formatCount(n: number, intlTag: string): string {
  return new Intl.NumberFormat(intlTag).format(n);
}
