import { describe, expect, it } from 'vitest';
import { DICTIONARIES, detectLocale, LOCALES, translate } from '..';
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

  it('fills placeholders', () => {
    expect(translate('en', 'state.disabledAfter', { status: 401, time: '14:02' })).toBe('Disabled after 401 at 14:02');
    expect(translate('ru', 'usage.failures', { count: 3 })).toBe('Ошибок: 3');
  });

  it('has every message in every language, with the same placeholders', () => {
    const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
    for (const locale of LOCALES) {
      for (const key of Object.keys(en) as (keyof typeof en)[]) {
        const text = DICTIONARIES[locale][key];
        expect(text, `${locale} ${key}`).toBeTruthy();
        expect(placeholders(text), `${locale} ${key} keeps the placeholders`).toEqual(placeholders(en[key]));
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
          expect(DICTIONARIES[locale][key], `${locale} ${key} takes {${name}} from LIMITS`).toContain(`{${name}}`);
        }
      }
    }
  });
});
