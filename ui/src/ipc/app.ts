import { call } from './client';

export type DatabaseStatus =
  | { state: 'ready'; path: string }
  | { state: 'failed'; kind: string; message: string; path: string };

export interface AppStatus {
  version: string;
  dataDir: string;
  logDir: string;
  database: DatabaseStatus;
}

export const appApi = {
  getStatus: () => call<AppStatus>('app:getStatus'),
};
