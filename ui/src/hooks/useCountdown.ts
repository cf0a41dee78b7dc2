import { useEffect, useState } from 'react';

/**
 * The backend's time now (`offset`: backend clock minus UI clock), rendering again as it moves
 * toward the next of `boundaries` (backend times: a cooldown's end, a window's reset): on each
 * whole second before it, or each tenth of a second within `fineWithin` ms of it. Stops once
 * every boundary has passed. New boundaries start from the current time, not from the last
 * tick, which may be long ago when the previous ones had all passed.
 */
export function useBackendNow(offset: number, boundaries: readonly number[], fineWithin = 0): number {
  const target = boundaries.join(',');
  const [tick, setTick] = useState(() => ({ local: Date.now(), target }));
  let local = tick.local;
  if (tick.target !== target) {
    // Adjusting state to new props during render, as React documents it: no stale frame shows.
    local = Date.now();
    setTick({ local, target });
  }
  const now = local + offset;
  const next = Math.min(...boundaries.filter((b) => b > now));
  const left = Number.isFinite(next) ? next - now : 0;

  // Re-armed on every tick (each tick changes `left`), so it lands on the boundary it shows.
  useEffect(() => {
    if (left === 0) return;
    const step = left <= fineWithin ? 100 : 1000;
    const timer = setTimeout(() => setTick({ local: Date.now(), target }), left % step || step);
    return () => clearTimeout(timer);
  }, [left, fineWithin, target]);

  return now;
}

/** Milliseconds left until `until` (backend clock), never negative; see {@link useBackendNow}. */
export function useCountdown(until: number, offset: number): number {
  return Math.max(0, until - useBackendNow(offset, [until]));
}
