import { call, defined } from './client';

export const teamApi = {
  getStatus: () => call('team:getStatus'),
  /** Joins the team (leaving the current one); without `secret` the kept one is used. */
  connect: (redisUrl: string, team: string, secret?: string) => call('team:connect', defined({ redisUrl, team, secret })),
  disconnect: () => call('team:disconnect'),
  /** A new team secret, shown this once; nothing is kept until `connect` sends it. */
  generateSecret: () => call('team:generateSecret'),
};
