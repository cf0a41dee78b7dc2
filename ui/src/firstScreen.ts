import type { FirstScreen } from './ipc/bindings';

declare global {
  interface Window {
    /** Set by the window's initialization script (`FirstScreen` in src-tauri/crates/api/src/ipc/app.rs). */
    __KEYPOOL_FIRST_SCREEN__?: FirstScreen;
  }
}

/**
 * What the first screen waits for (the preferences and the app's status), handed to the page by
 * the window before any of its scripts ran, so the first render waits for no IPC answer. Only on
 * the page's first load: a reload runs the same initialization script with what was true when the
 * window opened, so then (and outside the app, where nothing hands it over) the UI asks the
 * commands as before.
 */
export function handedFirstScreen(): FirstScreen | undefined {
  const [navigation] = performance.getEntriesByType('navigation') as PerformanceNavigationTiming[];
  if (navigation && navigation.type !== 'navigate') return undefined;
  return window.__KEYPOOL_FIRST_SCREEN__;
}

/**
 * The Latin font families the window chose for the page (`FirstScreen.fonts`), on every load,
 * a reload's included: the machine's fonts are the same then. Undefined outside the app.
 */
export function handedFonts(): string[] | null | undefined {
  return window.__KEYPOOL_FIRST_SCREEN__?.fonts;
}
