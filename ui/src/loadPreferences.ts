import { LOCALES } from './i18n';
import type { PageChoice, Preferences, SetPreferencesArgs } from './ipc/bindings';
import { handedFirstScreen } from './firstScreen';
import { appApi } from './ipc/app';
import { type LanguagePreference, NO_PREFERENCES, type ThemePreference, adoptPreferences } from './preferences';
import { routeFromString, routeToString } from './route';

/** Where Keypool kept the preferences before: read once, brought over, then removed. */
const OLD_KEYS = { language: 'keypool.language', theme: 'keypool.theme', page: 'keypool.route' } as const;
const THEMES: readonly ThemePreference[] = ['system', 'light', 'dark'];
const LANGUAGES: readonly LanguagePreference[] = [...LOCALES, 'system'];

/** What the web view's storage holds under `key`, when it is one of `allowed` (any, without). */
function oldValue(key: string, allowed?: readonly string[]): string | undefined {
  try {
    const value = localStorage.getItem(key) ?? undefined;
    return allowed === undefined || allowed.includes(value ?? '') ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What an earlier Keypool kept in the web view's storage, for the fields this profile has none
 * of yet: a choice already made here is never overwritten.
 */
function carriedOver(kept: Preferences): SetPreferencesArgs {
  const carried: SetPreferencesArgs = {};
  const theme = oldValue(OLD_KEYS.theme, THEMES) as ThemePreference | undefined;
  const language = oldValue(OLD_KEYS.language, LANGUAGES) as LanguagePreference | undefined;
  const page = routeFromString(oldValue(OLD_KEYS.page) ?? null);
  if (kept.theme === null && theme) carried.theme = theme;
  if (kept.language === null && language) carried.language = language;
  if (kept.page === null && page) carried.page = routeToString(page) as PageChoice;
  return carried;
}

/** The old entries go once read, so another profile does not take them too. */
function forgetOld() {
  try {
    for (const key of Object.values(OLD_KEYS)) localStorage.removeItem(key);
  } catch {
    // no storage: nothing to forget
  }
}

/** Writes changes to the data directory; a failed write lasts this session only. */
function persist(changes: SetPreferencesArgs) {
  appApi.setPreferences(changes).catch(() => {});
}

/**
 * Adopts the preferences the window handed over (`handedFirstScreen`) when nothing from an
 * earlier Keypool is left to bring over, so the first render can come at once. False: nothing
 * was handed over, or something is to be brought over first; `loadPreferences` does it.
 */
export function adoptHandedPreferences(): boolean {
  const kept = handedFirstScreen()?.preferences;
  if (!kept || Object.keys(carriedOver(kept)).length > 0) return false;
  forgetOld();
  adoptPreferences(kept, persist);
  return true;
}

/**
 * Reads the preferences from the data directory, bringing over (once) what an earlier Keypool
 * kept in the web view's storage, before the app's first render. Without an answer the app runs
 * on the defaults, and changes last this session only.
 */
export async function loadPreferences(): Promise<Preferences> {
  try {
    let kept = await appApi.getPreferences();
    const carried = carriedOver(kept);
    if (Object.keys(carried).length > 0) kept = await appApi.setPreferences(carried);
    forgetOld();
    adoptPreferences(kept, persist);
    return kept;
  } catch {
    adoptPreferences(NO_PREFERENCES);
    return NO_PREFERENCES;
  }
}
