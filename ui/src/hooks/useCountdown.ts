import { useEffect, useState } from 'react';
import { remaining } from '../clock';

/**
 * Milliseconds left until `until` (backend clock; `offset` is backend minus UI clock), rendering
 * again as they pass: on each whole second, or with `fine` each tenth in the last ten seconds.
 * Stops at zero. Give the component a `key` per target, so a new target starts from a fresh now.
 */
export function useCountdown(until: number, offset: number, { fine = false }: { fine?: boolean } = {}): number {
  const [now, setNow] = useState(Date.now);
  const left = remaining(until, now, offset);

  // Re-armed on every tick (each tick changes `left`), so it ends on the boundary it shows.
  useEffect(() => {
    if (left === 0) return;
    const step = fine && left <= 10_000 ? left % 100 || 100 : left % 1000 || 1000;
    const timer = setTimeout(() => setNow(Date.now()), step);
    return () => clearTimeout(timer);
  }, [left, fine]);

  return left;
}
