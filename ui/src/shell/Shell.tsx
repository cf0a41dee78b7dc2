import { lazy, Suspense, useEffect } from 'react';
import { Icon, type IconName } from '../components/Icon';
import { useI18n } from '../i18n/I18nProvider';
import type { MessageKey } from '../i18n';
import type { AppStatus } from '../ipc/bindings';
import { ChatPage } from '../features/chat/ChatPage';
import { markStartup } from '../startupMarks';
import { usePoolAlerts } from './poolAlerts';
import type { Route } from '../route';

// Usage (with its chart library) and Settings (its forms and their schemas) are not on the first
// screen: each loads when the pointer or the keyboard's focus comes to its link, a moment before
// the click that opens it, or when opened. Loaded as soon as the first screen was up, the two
// (with the Markdown renderer) had kept the web process 9 MiB larger from the start.
const usageModule = () => import('../features/usage/UsagePage');
const UsagePage = lazy(() => usageModule().then((module) => ({ default: module.UsagePage })));
const settingsModule = () => import('../features/settings/SettingsPage');
const SettingsPage = lazy(() => settingsModule().then((module) => ({ default: module.SettingsPage })));

/** What each page's link loads ahead of a click. */
const PRELOAD: Partial<Record<Route['page'], () => Promise<unknown>>> = { usage: usageModule, settings: settingsModule };

interface Props {
  route: Route;
  onNavigate: (route: Route) => void;
  status: AppStatus;
}

const NAV = [
  { page: 'chat', label: 'nav.chat', icon: 'chat', to: { page: 'chat' } },
  { page: 'usage', label: 'usagePage.nav', icon: 'usage', to: { page: 'usage' } },
  { page: 'settings', label: 'nav.settings', icon: 'settings', to: { page: 'settings', section: 'providers' } },
] as const satisfies readonly { page: Route['page']; label: MessageKey; icon: IconName; to: Route }[];

/** The application frame: a navigation rail and the current page. */
export function Shell({ route, onNavigate, status }: Props) {
  const { t } = useI18n();
  usePoolAlerts(t);
  useEffect(() => {
    markStartup('shell');
  }, []);
  return (
    <div className="shell" data-testid="app-shell">
      <nav className="rail" aria-label={t('nav.main')}>
        <div className="rail__brand" aria-hidden="true">
          K
        </div>
        <ul>
          {NAV.map((item) => (
            <li key={item.page}>
              <button
                type="button"
                className="rail__item"
                aria-current={route.page === item.page ? 'page' : undefined}
                data-testid={`nav-${item.page}`}
                onClick={() => onNavigate(item.to)}
                onPointerEnter={() => void PRELOAD[item.page]?.()}
                onFocus={() => void PRELOAD[item.page]?.()}
              >
                <span className="rail__icon">
                  <Icon name={item.icon} />
                </span>
                <span className="rail__label">{t(item.label)}</span>
              </button>
            </li>
          ))}
        </ul>
      </nav>
      <div className="page">
        {route.page === 'chat' && <ChatPage onOpenSettings={() => onNavigate({ page: 'settings', section: 'providers' })} />}
        {route.page === 'usage' && (
          <Suspense
            fallback={
              <div className="empty-state" role="status" aria-busy="true" data-testid="usage-loading-page">
                {t('usagePage.loadingPage')}
              </div>
            }
          >
            <UsagePage />
          </Suspense>
        )}
        {route.page === 'settings' && (
          <Suspense
            fallback={
              <div className="empty-state" role="status" aria-busy="true" data-testid="settings-loading-page">
                {t('settings.loadingPage')}
              </div>
            }
          >
            <SettingsPage section={route.section} onSection={(section) => onNavigate({ page: 'settings', section })} status={status} />
          </Suspense>
        )}
      </div>
    </div>
  );
}
