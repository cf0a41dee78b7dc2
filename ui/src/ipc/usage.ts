import type { SetPriceArgs, UsageRangeArgs, UsageSeriesArgs } from './bindings';
import { call, defined } from './client';

export const usageApi = {
  /** Totals, costs and latencies per key over `[from, to)`, for one provider or all. */
  getSummary: (range: UsageRangeArgs) => call('usage:getSummary', defined(range)),
  /** Totals per bucket and key; buckets start at `from` rounded down to the hour. */
  getSeries: (args: UsageSeriesArgs) => call('usage:getSeries', defined(args)),
  /** Asks where to save (a native dialog), then writes the attempts of the range; `path` null: cancelled. */
  exportCsv: (range: UsageRangeArgs) => call('usage:exportCsv', defined(range)),
  getPrices: () => call('usage:getPrices'),
  /** Adds or replaces the model's price; a cached input price left out is the input price. */
  setPrice: (price: SetPriceArgs) => call('usage:setPrice', defined(price)),
  deletePrice: (model: string) => call('usage:deletePrice', { model }),
  /** The range by source (each coding agent, the chat, other clients) and the agents whose cache share dropped. */
  getBySource: (range: { from: number; to: number }) => call('usage:getBySource', range),
  /** The range by named token of the local API, the largest spend first; `name` null: requests without one (the chat, the endpoint's own token). */
  getByToken: (range: { from: number; to: number }) => call('usage:getByToken', range),
  /** Deletes the usage history before `before` (rounded down to the hour), all of it without. */
  purge: (before?: number) => call('usage:purge', before === undefined ? {} : { before }),
};
