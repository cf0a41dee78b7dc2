import { lazy, Suspense, useEffect } from 'react';
import { Icon, type IconName } from '../components/Icon';
import { useI18n } from '../i18n/I18nProvider';
import type { MessageKey } from '../i18n';
import type { AppStatus } from '../ipc/bindings';
import { ChatPage } from '../features/chat/ChatPage';
import { preloadMarkdown } from '../features/chat/markdown/LazyMarkdown';
import { markStartup } from '../startupMarks';
import type { Route } from '../route';

// Loaded when first opened: the Usage page brings the chart library, which the chat (the page
// the app opens on) does not need in its first load.
const UsagePage = lazy(() => import('../features/usage/UsagePage').then((module) => ({ default: module.UsagePage })));

// Settings (its forms and their schemas) is not on the first screen either; it loads once the
// first screen is up (`preloadAfterFirstPaint`), so opening it rarely waits.
const settingsModule = () => import('../features/settings/SettingsPage');
const SettingsPage = lazy(() => settingsModule().then((module) => ({ default: module.SettingsPage })));

/**
 * Loads what the first screen does not show (Settings, the Markdown renderer) in the background,
 * once the frame that paints the first screen is drawn: parsing it earlier would delay that paint.
 */
function preloadAfterFirstPaint(): () => void {
  let timer: number | undefined;
  const frame = requestAnimationFrame(() => {
    timer = window.setTimeout(() => {
      void settingsModule();
      void preloadMarkdown();
    }, 0);
  });
  return () => {
    cancelAnimationFrame(frame);
    window.clearTimeout(timer);
  };
}

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
  useEffect(() => {
    markStartup('shell');
    return preloadAfterFirstPaint();
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
