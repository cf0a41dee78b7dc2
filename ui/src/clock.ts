/*
 * The backend's clock as the UI sees it. Times from the backend (cooldowns, windows, waits) are
 * on its clock; the UI counts them down by adding an offset measured when they arrived, so a
 * countdown does not depend on the UI's own clock being right. Pure: the local time is passed in.
 */

/**
 * The difference between the backend's clock and ours, measured when a status arrived. Adding
 * it to `Date.now()` gives the backend's "now", so a countdown does not depend on the UI clock.
 */
export function clockOffset(backendNow: number, localNow: number): number {
  return backendNow - localNow;
}

/** Milliseconds left until `until` (backend clock), never negative. */
export function remaining(until: number, localNow: number, offset: number): number {
  return Math.max(0, until - (localNow + offset));
}

/** `4:05`, `12:00`, `1:02:03`: seconds rounded up, so 0:00 shows only when it has ended. */
export function formatCountdown(ms: number): string {
  const total = Math.ceil(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const pad = (n: number) => String(n).padStart(2, '0');
  return h > 0 ? `${h}:${pad(m)}:${pad(s)}` : `${m}:${pad(s)}`;
}
