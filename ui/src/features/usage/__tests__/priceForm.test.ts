import { describe, expect, it } from 'vitest';
import { LIMITS } from '../../../ipc/bindings';
import { parsePriceForm, priceFromText, priceText } from '../priceForm';

const form = (fields: Partial<Record<'model' | 'inputPerMillion' | 'cachedInputPerMillion' | 'outputPerMillion', string>>) => ({
  model: 'gpt-4o',
  inputPerMillion: '2.5',
  cachedInputPerMillion: '',
  outputPerMillion: '10',
  ...fields,
});

describe('the price form', () => {
  it('reads decimals written with a point or a comma, and nothing else', () => {
    expect(priceFromText('2.50')).toBe(2.5);
    expect(priceFromText(' 2,5 ')).toBe(2.5);
    expect(priceFromText('.075')).toBe(0.075);
    expect(priceFromText('10')).toBe(10);
    for (const text of ['1e3', '-1', '$2', '1.2.3', '1,000.5', '', 'Infinity']) expect(priceFromText(text), text).toBeNaN();
  });

  it('sends what setPrice takes: the model trimmed, no empty cached price', () => {
    expect(parsePriceForm(form({ model: '  gpt-4o  ' }))).toEqual({ ok: true, value: { model: 'gpt-4o', inputPerMillion: 2.5, outputPerMillion: 10 } });
    expect(parsePriceForm(form({ cachedInputPerMillion: '1,25' }))).toEqual({
      ok: true,
      value: { model: 'gpt-4o', inputPerMillion: 2.5, cachedInputPerMillion: 1.25, outputPerMillion: 10 },
    });
    expect(parsePriceForm(form({ inputPerMillion: String(LIMITS.price.min), outputPerMillion: String(LIMITS.price.max) })), 'free and the maximum are prices').toMatchObject({ ok: true });
  });

  it('checks the backend’s rules, with the bounds it declares: a model name, not blank, and prices', () => {
    expect(parsePriceForm(form({ model: '   ' }))).toEqual({ ok: false, errors: { model: 'usagePage.modelRequired' } });
    expect(parsePriceForm(form({ model: 'm'.repeat(LIMITS.modelName.maxBytes + 1) }))).toEqual({ ok: false, errors: { model: 'usagePage.modelTooLong' } });
    expect(parsePriceForm(form({ model: 'm'.repeat(LIMITS.modelName.maxBytes) })), 'at the bound').toMatchObject({ ok: true });
    expect(parsePriceForm(form({ model: '模'.repeat(LIMITS.modelName.maxBytes / 3 + 1) })), 'bytes, as the backend counts').toMatchObject({ ok: false });
    expect(parsePriceForm(form({ inputPerMillion: '', outputPerMillion: `${LIMITS.price.max}.01`, cachedInputPerMillion: 'free' }))).toEqual({
      ok: false,
      errors: { inputPerMillion: 'usagePage.priceRequired', outputPerMillion: 'usagePage.priceRange', cachedInputPerMillion: 'usagePage.priceRange' },
    });
  });

  it('shows a stored price as text, an absent cached price as empty', () => {
    expect(priceText({ model: 'gpt-4o', inputPerMillion: 2.5, cachedInputPerMillion: null, outputPerMillion: 10 })).toEqual(form({}));
    expect(priceText()).toEqual({ model: '', inputPerMillion: '', cachedInputPerMillion: '', outputPerMillion: '' });
  });
});
