import { useState } from 'react';
import { I18nProvider, useI18n } from './i18n/I18nProvider';
import { Shell } from './shell/Shell';
import { StartupProblem } from './shell/StartupProblem';
import { useAppStatus } from './shell/useAppStatus';
import { initialRoute, type Route } from './shell/route';

export function App() {
  return (
    <I18nProvider>
      <AppContent />
    </I18nProvider>
  );
}

function AppContent() {
  const { t } = useI18n();
  const status = useAppStatus();
  const [route, setRoute] = useState<Route>(initialRoute);

  switch (status.kind) {
    case 'loading':
      return <div className="splash" role="status" aria-busy="true" aria-label={t('app.starting')} />;
    case 'unreachable':
      return <StartupProblem title={t('app.backendUnreachable')} message={status.error.message} />;
    case 'loaded':
      if (status.status.database.state === 'failed') {
        const db = status.status.database;
        return (
          <StartupProblem
            title={t('app.dataUnavailable')}
            message={db.message}
            path={db.path}
            logDir={status.status.logDir}
          />
        );
      }
      return <Shell route={route} onNavigate={setRoute} status={status.status} />;
  }
}
