import { useCallback, useEffect, useState } from 'react';
import { preferences, type ThemePreference } from './preferences';

/**
 * The colour theme: the OS's (prefers-color-scheme) unless the user picked one. An override is
 * applied as `data-theme` on <html>, which the stylesheet honours over the media query.
 */
export function useTheme(): [ThemePreference, (theme: ThemePreference) => void] {
  const [theme, setThemeState] = useState<ThemePreference>(preferences.theme);

  useEffect(() => applyTheme(theme), [theme]);

  const setTheme = useCallback((next: ThemePreference) => {
    preferences.setTheme(next);
    setThemeState(next);
  }, []);
  return [theme, setTheme];
}

/** Puts the theme on <html>; `system` removes any override. Called at start-up and on change. */
export function applyTheme(theme: ThemePreference) {
  const root = document.documentElement;
  if (theme === 'system') delete root.dataset.theme;
  else root.dataset.theme = theme;
}
