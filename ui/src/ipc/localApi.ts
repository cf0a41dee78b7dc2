import { call, defined } from './client';

export const localApiApi = {
  getStatus: () => call('localApi:getStatus'),
  /** Turns the endpoint on or off (on `port` when given); `token` only the first time it is enabled. */
  configure: (enabled: boolean, port?: number) => call('localApi:configure', defined({ enabled, port })),
  /** A new token, shown this once; the old one stops working at once. */
  regenerateToken: () => call('localApi:regenerateToken'),
};
