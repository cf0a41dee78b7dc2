import { useId } from 'react';
import { LOCALE_NAMES, LOCALES } from '../../i18n';
import { useI18n } from '../../i18n/I18nProvider';
import type { LanguagePreference, ThemePreference } from '../../preferences';
import { useTheme } from '../../useTheme';
import { BackendSettingFields } from './BackendSettingFields';
import { KeysLostAlerts } from './KeysLostAlerts';
import { NotifyKeysLostField } from './NotifyKeysLostField';
import { ProxyField } from './ProxyField';
import { UsageHistoryPurge } from './UsageHistoryPurge';
import { useAppSettings } from './useAppSettings';

/**
 * Settings → General: the UI language and the colour theme, both "same as the system" by
 * default (kept by the web view); how long a reply waits for a free key, how long an idle chat
 * keeps its key, how long usage history is kept, the proxy for provider requests and whether keys
 * lost are told as desktop notifications (kept by the backend); deleting that history, shown once the backend's settings are in (they push what
 * follows them down); the keys lost this run, with a test notification.
 */
export function GeneralSection() {
  const { t, preference, setPreference, systemLocale } = useI18n();
  const [theme, setTheme] = useTheme();
  const settings = useAppSettings();
  const languageId = useId();
  const themeId = useId();

  return (
    <div className="general" data-testid="general-section">
      <h2>{t('settings.general')}</h2>
      <div className="general__fields">
        <label htmlFor={languageId}>{t('general.language')}</label>
        <select
          id={languageId}
          className="input select"
          value={preference}
          onChange={(e) => setPreference(e.target.value as LanguagePreference)}
          data-testid="language-select"
        >
          <option value="system">{t('general.languageSystem', { language: LOCALE_NAMES[systemLocale] })}</option>
          {LOCALES.map((locale) => (
            <option key={locale} value={locale} lang={locale}>
              {LOCALE_NAMES[locale]}
            </option>
          ))}
        </select>
        <label htmlFor={themeId}>{t('general.theme')}</label>
        <select
          id={themeId}
          className="input select"
          value={theme}
          onChange={(e) => setTheme(e.target.value as ThemePreference)}
          data-testid="theme-select"
        >
          <option value="system">{t('general.themeSystem')}</option>
          <option value="light">{t('general.themeLight')}</option>
          <option value="dark">{t('general.themeDark')}</option>
        </select>
        <BackendSettingFields load={settings.state} onSave={settings.update} onRetry={settings.reload} />
        {settings.state.kind === 'loaded' && <ProxyField stored={settings.state.settings.proxy} onSave={settings.update} />}
        {settings.state.kind === 'loaded' && <NotifyKeysLostField stored={settings.state.settings.notifyKeysLost} onSave={settings.update} />}
        {/* Once the settings above it are in: appearing late, it never moves under the pointer. */}
        {settings.state.kind !== 'loading' && <UsageHistoryPurge />}
      </div>
      <KeysLostAlerts />
    </div>
  );
}
