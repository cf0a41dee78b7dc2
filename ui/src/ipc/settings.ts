import type { UpdateSettingsArgs } from './bindings';
import { call, defined } from './client';

export const settingsApi = {
  get: () => call('settings:get'),
  /** Changes the preferences given; answers all of them as stored. */
  update: (changes: UpdateSettingsArgs) => call('settings:update', defined(changes)),
};
