import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { preferences, type LanguagePreference } from '../preferences';
import { detectLocale, INTL_TAGS, translate, type Locale, type MessageKey, type Vars } from '.';

export interface I18n {
  locale: Locale;
  /** The OS's language, for "Same as the system (…)". */
  systemLocale: Locale;
  preference: LanguagePreference;
  setPreference: (preference: LanguagePreference) => void;
  t: (key: MessageKey, vars?: Vars) => string;
  /** The BCP 47 tag for Intl formatters. */
  intlTag: string;
}

const I18nContext = createContext<I18n | null>(null);

function systemLocale(): Locale {
  return detectLocale(typeof navigator === 'undefined' ? [] : (navigator.languages ?? [navigator.language]));
}

/** Holds the UI language: the user's choice from settings, else the OS's. */
export function I18nProvider({ children, initial }: { children: ReactNode; initial?: LanguagePreference }) {
  const [preference, setPreferenceState] = useState<LanguagePreference>(() => initial ?? preferences.language());
  const system = useMemo(systemLocale, []);
  const locale = preference === 'system' ? system : preference;

  const setPreference = useCallback((next: LanguagePreference) => {
    preferences.setLanguage(next);
    setPreferenceState(next);
  }, []);

  useEffect(() => {
    document.documentElement.lang = INTL_TAGS[locale];
  }, [locale]);

  const value = useMemo<I18n>(
    () => ({
      locale,
      systemLocale: system,
      preference,
      setPreference,
      t: (key, vars) => translate(locale, key, vars),
      intlTag: INTL_TAGS[locale],
    }),
    [locale, system, preference, setPreference],
  );
  return <I18nContext.Provider value={value}>{children}</I18nContext.Provider>;
}

export function useI18n(): I18n {
  const i18n = useContext(I18nContext);
  if (!i18n) throw new Error('useI18n needs an <I18nProvider> above it');
  return i18n;
}
