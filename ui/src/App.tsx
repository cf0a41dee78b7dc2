import { useState } from 'react';
import { Shell } from './shell/Shell';
import { StartupProblem } from './shell/StartupProblem';
import { useAppStatus } from './shell/useAppStatus';
import { initialRoute, type Route } from './shell/route';

export function App() {
  const status = useAppStatus();
  const [route, setRoute] = useState<Route>(initialRoute);

  switch (status.kind) {
    case 'loading':
      return <div className="splash" aria-busy="true" aria-label="Starting Keypool" />;
    case 'unreachable':
      return <StartupProblem title="Keypool's backend did not answer" message={status.error.message} />;
    case 'loaded':
      if (status.status.database.state === 'failed') {
        const db = status.status.database;
        return (
          <StartupProblem
            title="Keypool could not open your data"
            message={db.message}
            path={db.path}
            logDir={status.status.logDir}
          />
        );
      }
      return <Shell route={route} onNavigate={setRoute} status={status.status} />;
  }
}
