import { boundVars } from './bounds';
import { en, type Dictionary, type MessageKey } from './en';
import { ja } from './ja';
import { ru } from './ru';
import { zh } from './zh';

export type { MessageKey } from './en';

/** The languages of the original design documents. */
export const LOCALES = ['en', 'zh', 'ja', 'ru'] as const;
export type Locale = (typeof LOCALES)[number];

export const DICTIONARIES: Record<Locale, Dictionary> = { en, zh, ja, ru };

/** Each language's name in itself, as a language menu shows it. */
export const LOCALE_NAMES: Record<Locale, string> = { en: 'English', zh: '简体中文', ja: '日本語', ru: 'Русский' };

/** BCP 47 tags for Intl formatting. */
export const INTL_TAGS: Record<Locale, string> = { en: 'en', zh: 'zh-CN', ja: 'ja', ru: 'ru' };

/** The first of the OS's preferred languages we have; English otherwise (also for `C`). */
export function detectLocale(preferred: readonly string[]): Locale {
  for (const tag of preferred) {
    const primary = tag.toLowerCase().split(/[-_]/)[0];
    const found = LOCALES.find((locale) => locale === primary);
    if (found) return found;
  }
  return 'en';
}

export type Vars = Record<string, string | number>;

/**
 * Looks a message up and fills `{name}` placeholders; an unknown placeholder stays visible. A
 * message about a bound of the backend's gets the bound's numbers (`bounds.ts`).
 */
export function translate(locale: Locale, key: MessageKey, vars?: Vars): string {
  const template = DICTIONARIES[locale][key];
  const filled = { ...boundVars(key, INTL_TAGS[locale]), ...vars };
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => (name in filled ? String(filled[name]) : whole));
}
