import { describe, expect, it, vi } from 'vitest';
import { dictionary, detectLocale, INTL_TAGS, LOCALES, type PluralForms, translate } from '..';
import { LIMITS } from '../../ipc/bindings';
import { BOUNDS } from '../bounds';
import { en, type MessageKey } from '../en';

describe('i18n', () => {
  it('follows the first OS language it has, else English', () => {
    expect(detectLocale(['ru-RU', 'en-US'])).toBe('ru');
    expect(detectLocale(['de-DE', 'ja-JP'])).toBe('ja');
    expect(detectLocale(['zh_CN'])).toBe('zh');
    expect(detectLocale(['C'])).toBe('en');
    expect(detectLocale([])).toBe('en');
  });

  it('speaks English until a language it loads on demand is there, then that language', async () => {
    // A module of its own: the test setup has loaded every language into the shared one.
    vi.resetModules();
    const fresh = await import('..');
    expect(fresh.hasDictionary('en'), 'English comes with the first screen').toBe(true);
    expect(fresh.hasDictionary('ru'), 'Russian is not in the first screen’s script').toBe(false);
    expect(fresh.translate('ru', 'nav.chat'), 'English meanwhile, never a key or a blank').toBe('Chat');
    expect(fresh.translate('ru', 'usage.failures', { count: 3 }), 'with English’s plural forms').toBe(translate('en', 'usage.failures', { count: 3 }));
    await fresh.loadDictionary('ru');
    expect(fresh.hasDictionary('ru')).toBe(true);
    expect(fresh.translate('ru', 'nav.chat'), 'Russian once loaded').toBe('Чат');
  });

  it('fills placeholders', () => {
    expect(translate('en', 'state.disabledAfter', { status: 401, time: '14:02' })).toBe('Disabled after 401 at 14:02');
    expect(translate('ru', 'usage.failures', { count: 3 })).toBe('Ошибок: 3');
  });

  it('has every message in every language, with the same placeholders', () => {
    const placeholders = (text: string) => [...new Set([...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]))].sort();
    const forms = (message: string | PluralForms) => (typeof message === 'string' ? [message] : Object.values(message));
    for (const locale of LOCALES) {
      for (const key of Object.keys(en) as (keyof typeof en)[]) {
        const english = placeholders(forms(en[key])[0]);
        for (const text of forms(dictionary(locale)[key])) {
          expect(text, `${locale} ${key}`).toBeTruthy();
          expect(placeholders(text), `${locale} ${key} keeps the placeholders`).toEqual(english);
        }
        expect(typeof dictionary(locale)[key], `${locale} ${key} counts where English counts`).toBe(typeof en[key]);
      }
    }
  });

  it('gives every counted message each form its language needs, and chooses it by the count', () => {
    for (const locale of LOCALES) {
      const needed = new Intl.PluralRules(INTL_TAGS[locale]).resolvedOptions().pluralCategories;
      for (const [key, message] of Object.entries(dictionary(locale))) {
        if (typeof message === 'string') continue;
        for (const form of needed) expect(message[form as keyof PluralForms], `${locale} ${key}: the ${form} form`).toBeTruthy();
      }
    }
    expect(translate('en', 'usage.todayRequests', { count: 1 })).toBe('Today: 1 request');
    expect(translate('en', 'usage.todayRequests', { count: 8 })).toBe('Today: 8 requests');
    expect(translate('en', 'models.listed', { count: 1, time: '14:02' })).toBe('The provider lists 1 model (as of 14:02).');
    expect(translate('en', 'usage.todayTokens', { count: 12345 }), 'the count as the language writes numbers').toBe('12,345 tokens');
    // Russian: one (1, 21), few (2–4, 22), many (5–20, 25, 11–14).
    const ru = (count: number) => translate('ru', 'usage.todayRequests', { count });
    expect([1, 21, 2, 4, 22, 5, 11, 14, 25].map(ru)).toEqual([
      'Сегодня: 1 запрос',
      'Сегодня: 21 запрос',
      'Сегодня: 2 запроса',
      'Сегодня: 4 запроса',
      'Сегодня: 22 запроса',
      'Сегодня: 5 запросов',
      'Сегодня: 11 запросов',
      'Сегодня: 14 запросов',
      'Сегодня: 25 запросов',
    ]);
    expect(translate('ja', 'pool.addedMany', { count: 1 })).toBe('1 個のキーを追加しました。');
    expect(translate('zh', 'pool.addedMany', { count: 3 })).toBe('已添加 3 个 Key。');
  });

  it('writes one apostrophe and quotation style: typographic, never the typewriter’s', () => {
    for (const locale of LOCALES) {
      for (const [key, message] of Object.entries(dictionary(locale))) {
        for (const text of typeof message === 'string' ? [message] : Object.values(message)) {
          expect(text, `${locale} ${key}`).not.toMatch(/['"]/);
        }
      }
    }
  });

  it('states the backend’s bounds from LIMITS, in every language', () => {
    expect(translate('en', 'error.weightRange')).toBe(`The weight is a whole number from ${LIMITS.weight.min} to ${LIMITS.weight.max}.`);
    expect(translate('en', 'error.rpmRange'), 'counts as the language writes them').toContain('100,000');
    expect(translate('ru', 'localApi.portRange'), 'ports as plain digits').toBe(`Выберите порт от ${LIMITS.port.min} до ${LIMITS.port.max}.`);
    for (const [key, bound] of Object.entries(BOUNDS) as [MessageKey, object][]) {
      for (const locale of LOCALES) {
        for (const name of Object.keys(bound)) {
          expect(dictionary(locale)[key], `${locale} ${key} takes {${name}} from LIMITS`).toContain(`{${name}}`);
        }
      }
    }
  });
});
