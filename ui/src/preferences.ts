import { LOCALES, type Locale } from './i18n';
import { initialRoute, type Route, routeFromString, routeToString } from './route';

/** What the user chose in Settings → General; `system` follows the OS. */
export type LanguagePreference = Locale | 'system';
export type ThemePreference = 'system' | 'light' | 'dark';

const LANGUAGE_KEY = 'keypool.language';
const THEME_KEY = 'keypool.theme';
/** The page the window was on, so the app reopens there (the backend restores the window's geometry). */
const ROUTE_KEY = 'keypool.route';
const THEMES: readonly ThemePreference[] = ['system', 'light', 'dark'];

function read<T extends string>(key: string, allowed: readonly T[], fallback: T): T {
  try {
    const value = localStorage.getItem(key);
    return allowed.includes(value as T) ? (value as T) : fallback;
  } catch {
    return fallback;
  }
}

function write(key: string, value: string) {
  try {
    if (value === 'system') localStorage.removeItem(key);
    else localStorage.setItem(key, value);
  } catch {
    // storage unavailable: the choice lasts for this session only
  }
}

export const preferences = {
  language: (): LanguagePreference => read<LanguagePreference>(LANGUAGE_KEY, [...LOCALES, 'system'], 'system'),
  setLanguage: (value: LanguagePreference) => write(LANGUAGE_KEY, value),
  theme: (): ThemePreference => read(THEME_KEY, THEMES, 'system'),
  setTheme: (value: ThemePreference) => write(THEME_KEY, value),
  route: (): Route => {
    try {
      return routeFromString(localStorage.getItem(ROUTE_KEY)) ?? initialRoute;
    } catch {
      return initialRoute;
    }
  },
  setRoute: (route: Route) => write(ROUTE_KEY, routeToString(route)),
};
