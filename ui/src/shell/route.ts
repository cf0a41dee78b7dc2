/** Where the user is in the app. A discriminated union so each page gets exactly its state. */
export type Route =
  | { page: 'chat' }
  | { page: 'settings'; section: SettingsSection };

export type SettingsSection = 'providers' | 'general' | 'about';

export const initialRoute: Route = { page: 'chat' };
