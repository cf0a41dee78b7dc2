import { call } from './client';

export const appApi = {
  getStatus: () => call('app:getStatus'),
};
