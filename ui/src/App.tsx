import { useCallback, useEffect, useState } from 'react';
import { hasDictionary, loadDictionary } from './i18n';
import { I18nProvider, localeOf, useI18n } from './i18n/I18nProvider';
import { Shell } from './shell/Shell';
import { StartupProblem } from './shell/StartupProblem';
import { type AppStatusState, useAppStatus } from './shell/useAppStatus';
import { errorText } from './i18n/problems';
import { adoptHandedPreferences, loadPreferences } from './loadPreferences';
import { preferences } from './preferences';
import type { Route } from './route';
import { markStartup } from './startupMarks';
import { applyTheme } from './useTheme';

/**
 * The app, once its preferences are read from the data directory (language, theme, the page it
 * was left on): until then a blank splash, so nothing is drawn in a language or theme the user
 * did not choose.
 */
export function App() {
  // Handed over by the window at its first load, the preferences need no answer: the first render
  // is this one.
  const [handed] = useState(() => {
    if (!adoptHandedPreferences()) return false;
    markStartup('preferences');
    applyTheme(preferences.theme());
    return true;
  });
  // The first screen speaks one language: its messages are there, or loaded first.
  const [loaded, setLoaded] = useState(() => handed && hasDictionary(localeOf(preferences.language())));
  // Asked at once, beside the preferences: the first paint waits for both, not one after the other.
  const status = useAppStatus();
  useEffect(() => {
    if (handed && hasDictionary(localeOf(preferences.language()))) return;
    let live = true;
    const read = handed ? Promise.resolve() : loadPreferences().then(() => markStartup('preferences'));
    void read
      // A language whose chunk cannot load leaves the UI in English, not blank.
      .then(() => loadDictionary(localeOf(preferences.language())).catch(() => {}))
      .then(() => {
        if (!live) return;
        applyTheme(preferences.theme());
        setLoaded(true);
      });
    return () => {
      live = false;
    };
  }, [handed]);
  if (!loaded) return <div className="splash" role="status" aria-busy="true" data-testid="app-loading" />;
  return (
    <I18nProvider>
      <AppContent status={status} />
    </I18nProvider>
  );
}

function AppContent({ status }: { status: AppStatusState }) {
  const { t } = useI18n();
  // The app reopens on the page it was left on (kept in the data directory, like the language).
  const [route, setRoute] = useState<Route>(preferences.route);
  const navigate = useCallback((next: Route) => {
    setRoute(next);
    preferences.setRoute(next);
  }, []);

  switch (status.kind) {
    case 'loading':
      return <div className="splash" role="status" aria-busy="true" aria-label={t('app.starting')} />;
    case 'unreachable':
      return <StartupProblem title={t('app.backendUnreachable')} message={errorText(t, status.error)} />;
    case 'loaded':
      if (status.status.database.state === 'failed') {
        const db = status.status.database;
        return (
          <StartupProblem
            title={t('app.dataUnavailable')}
            message={db.message}
            kind={db.kind}
            path={db.path}
            logDir={status.status.logDir}
          />
        );
      }
      return <Shell route={route} onNavigate={navigate} status={status.status} />;
  }
}
