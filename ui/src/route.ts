/** Where the user is in the app. A discriminated union so each page gets exactly its state. */
export type Route =
  | { page: 'chat' }
  | { page: 'usage' }
  | { page: 'settings'; section: SettingsSection };

export type SettingsSection = 'providers' | 'general' | 'localApi' | 'team' | 'about';

export const initialRoute: Route = { page: 'chat' };

const SECTIONS: readonly SettingsSection[] = ['providers', 'general', 'localApi', 'team', 'about'];

/** A route as one stable string (`chat`, `usage`, `settings/general`, …), the form it is stored in. */
export function routeToString(route: Route): string {
  return route.page === 'settings' ? `settings/${route.section}` : route.page;
}

/** The route a stored string names, or null for anything else (an old or damaged value). */
export function routeFromString(value: string | null): Route | null {
  if (value === 'chat') return { page: 'chat' };
  if (value === 'usage') return { page: 'usage' };
  const section = value?.startsWith('settings/') ? value.slice('settings/'.length) : null;
  return SECTIONS.includes(section as SettingsSection) ? { page: 'settings', section: section as SettingsSection } : null;
}
