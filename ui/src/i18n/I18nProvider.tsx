import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { preferences, type LanguagePreference } from '../preferences';
import { detectLocale, hasDictionary, INTL_TAGS, loadDictionary, translate, type Locale, type MessageKey, type Vars } from '.';

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

/** The language the UI speaks for `preference`. */
export function localeOf(preference: LanguagePreference): Locale {
  return preference === 'system' ? systemLocale() : preference;
}

/** Holds the UI language: the user's choice from settings, else the OS's. */
export function I18nProvider({ children, initial }: { children: ReactNode; initial?: LanguagePreference }) {
  const [preference, setPreferenceState] = useState<LanguagePreference>(() => initial ?? preferences.language());
  const system = useMemo(systemLocale, []);
  const locale = preference === 'system' ? system : preference;

  // A language not loaded yet is switched to once its messages are here (a few ms); of two quick
  // choices, the later one wins whatever order they load in.
  const latest = useRef<LanguagePreference | null>(null);
  const setPreference = useCallback((next: LanguagePreference) => {
    preferences.setLanguage(next);
    latest.current = next;
    const locale = localeOf(next);
    if (hasDictionary(locale)) {
      setPreferenceState(next);
      return;
    }
    const settle = () => {
      if (latest.current === next) setPreferenceState(next);
    };
    loadDictionary(locale).then(settle, settle);
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
