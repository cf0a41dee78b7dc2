import type { Locale } from './i18n';
import type { PageChoice, Preferences, SetPreferencesArgs } from './ipc/bindings';
import { initialRoute, type Route, routeFromString, routeToString } from './route';

/** What the user chose in Settings → General; `system` follows the OS. */
export type LanguagePreference = Locale | 'system';
export type ThemePreference = 'system' | 'light' | 'dark';

/*
 * The UI's preferences (language, theme, the page the window was left on, the provider Settings
 * showed last) live in the data directory, beside the database: one set per Keypool profile
 * (`KEYPOOL_DATA_DIR`), where the web view's storage is shared by all of them. They are read once
 * before the app renders (`loadPreferences.ts`) and kept here for the synchronous reads of a
 * render; each change goes here at once and to the backend through `persist`.
 */

/** Nothing chosen yet. */
export const NO_PREFERENCES: Preferences = { theme: null, language: null, page: null, provider: null };

/** Writes changes where the preferences are kept; none until they were read (a test's render). */
type Persist = (changes: SetPreferencesArgs) => void;

let current: Preferences = NO_PREFERENCES;
let persist: Persist = () => {};

/** The preferences the app runs on from now, and where their changes go. */
export function adoptPreferences(preferences: Preferences, write: Persist = () => {}) {
  current = preferences;
  persist = write;
}

/** Keeps `changes` here at once, and where they are kept. */
function keep(changes: SetPreferencesArgs) {
  current = { ...current, ...changes };
  persist(changes);
}

export const preferences = {
  language: (): LanguagePreference => current.language ?? 'system',
  setLanguage: (value: LanguagePreference) => keep({ language: value }),
  theme: (): ThemePreference => current.theme ?? 'system',
  setTheme: (value: ThemePreference) => keep({ theme: value }),
  /** The page the window was on, so the app reopens there (the backend restores the window's geometry). */
  route: (): Route => routeFromString(current.page) ?? initialRoute,
  setRoute: (route: Route) => keep({ page: routeToString(route) as PageChoice }),
  /** The provider Settings → Providers showed last (it may have been deleted since). */
  provider: (): string | null => current.provider,
  setProvider: (id: string) => keep({ provider: id }),
};
