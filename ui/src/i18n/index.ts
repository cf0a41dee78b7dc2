import { boundVars } from './bounds';
import { formatCount } from './format';
import { en, type Dictionary, type MessageKey, type PluralForms } from './en';

export type { MessageKey, PluralForms } from './en';

/** The languages of the original design documents. */
export const LOCALES = ['en', 'zh', 'ja', 'ru'] as const;
export type Locale = (typeof LOCALES)[number];

/**
 * English comes with the first screen's script (it is also every message's fallback); each other
 * language (about 15 kB gzip) loads when it is the one the UI speaks, so the first screen carries
 * one dictionary, not four.
 */
const LOADERS: Record<Exclude<Locale, 'en'>, () => Promise<Dictionary>> = {
  zh: () => import('./zh').then((module) => module.zh),
  ja: () => import('./ja').then((module) => module.ja),
  ru: () => import('./ru').then((module) => module.ru),
};
const loaded: Partial<Record<Locale, Dictionary>> = { en };

/** Whether `locale`'s messages are here, so the UI can speak it at once. */
export function hasDictionary(locale: Locale): boolean {
  return loaded[locale] !== undefined;
}

/** Brings `locale`'s messages in (once); rejects if its chunk cannot be loaded. */
export async function loadDictionary(locale: Locale): Promise<Dictionary> {
  const have = loaded[locale];
  if (have) return have;
  const dictionary = await LOADERS[locale as Exclude<Locale, 'en'>]();
  loaded[locale] = dictionary;
  return dictionary;
}

/** `locale`'s messages, or English's until they are loaded. */
export function dictionary(locale: Locale): Dictionary {
  return loaded[locale] ?? en;
}

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

const pluralRules = new Map<Locale, Intl.PluralRules>();

/** The form of a counted message for `count`, as the language chooses it (Russian: one, few, many). */
export function pluralForm(locale: Locale, forms: PluralForms, count: number): string {
  let rules = pluralRules.get(locale);
  if (!rules) {
    rules = new Intl.PluralRules(INTL_TAGS[locale]);
    pluralRules.set(locale, rules);
  }
  return forms[rules.select(count)] ?? forms.other;
}

/**
 * Looks a message up and fills `{name}` placeholders; an unknown placeholder stays visible. A
 * message about a bound of the backend's gets the bound's numbers (`bounds.ts`). A counted
 * message takes the form `vars.count` asks for, and writes the count as the language writes
 * numbers (`1,234`, `1 234`).
 */
export function translate(wanted: Locale, key: MessageKey, vars?: Vars): string {
  // English's messages take English's plural forms and number format, until `wanted`'s are here.
  const locale = hasDictionary(wanted) ? wanted : 'en';
  const message: string | PluralForms = dictionary(locale)[key];
  const filled: Record<string, string | number> = { ...boundVars(key, INTL_TAGS[locale]), ...vars };
  let template: string;
  if (typeof message === 'string') {
    template = message;
  } else {
    const count = Number(vars?.count);
    template = Number.isFinite(count) ? pluralForm(locale, message, count) : message.other;
    if (Number.isFinite(count)) filled.count = formatCount(count, INTL_TAGS[locale]);
  }
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => (name in filled ? String(filled[name]) : whole));
}
