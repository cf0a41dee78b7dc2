import type { SetPreferencesArgs } from './bindings';
import { call, defined } from './client';

export const appApi = {
  getStatus: () => call('app:getStatus'),
  /** The UI's preferences, kept in the data directory (one set per Keypool profile). */
  getPreferences: () => call('app:getPreferences'),
  /** Keeps the preferences given; the others stay. */
  setPreferences: (changes: SetPreferencesArgs) => call('app:setPreferences', defined(changes)),
  /** Shows a desktop notification (worded from a `pool:alert`), unless Settings switched them off. */
  notify: (title: string, body: string) => call('app:notify', { title, body }),
  /** Whether the desktop can show notifications now, and the keys lost this run (the newest first). */
  getAlerts: () => call('app:getAlerts'),
  /** Shows a test notification whatever Settings say; answers whether the desktop can show one. */
  testNotification: (title: string, body: string) => call('app:testNotification', { title, body }),
};
