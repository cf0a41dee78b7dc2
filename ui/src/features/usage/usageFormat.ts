/*
 * Numbers of the Usage page in the UI's language: counts (the app's own `formatCount`), shares, US
 * dollars and latencies. Pure: the Intl tag is passed in.
 */

export { formatCount } from '../../i18n/format';

/** `45.5%` (at most one decimal). */
export function formatShare(ratio: number, intlTag: string): string {
  return new Intl.NumberFormat(intlTag, { style: 'percent', maximumFractionDigits: 1 }).format(ratio);
}

/**
 * A cost in US dollars: cents from a cent up (`$12.34`), two significant digits below (`$0.0042`),
 * since a few chat replies cost fractions of a cent and `$0.00` would say they cost nothing.
 */
export function formatCost(usd: number, intlTag: string): string {
  const small = usd !== 0 && Math.abs(usd) < 0.01;
  return new Intl.NumberFormat(intlTag, {
    style: 'currency',
    currency: 'USD',
    ...(small ? { maximumSignificantDigits: 2 } : { minimumFractionDigits: 2, maximumFractionDigits: 2 }),
  }).format(usd);
}

/** A price per million tokens: at least cents, and as many decimals as it was given (`$0.075`). */
export function formatPrice(usd: number, intlTag: string): string {
  return new Intl.NumberFormat(intlTag, { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 6 }).format(usd);
}

/** `850 ms`, or `1.2 s` from a second up. */
export function formatLatency(ms: number, intlTag: string): string {
  return ms < 1000
    ? new Intl.NumberFormat(intlTag, { style: 'unit', unit: 'millisecond', maximumFractionDigits: 0 }).format(ms)
    : new Intl.NumberFormat(intlTag, { style: 'unit', unit: 'second', maximumFractionDigits: 1 }).format(ms / 1000);
}
