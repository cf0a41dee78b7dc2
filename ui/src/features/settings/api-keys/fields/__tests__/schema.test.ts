import { describe, expect, it } from 'vitest';
import { LIMITS } from '../../../../../ipc/bindings';
import { limitsText, parseAddKeyForm, parseLimitsForm, parseWeight, stepWeight } from '../schema';

/** A whole number as a form field holds it. */
const text = (n: number) => String(n);
const { weight: WEIGHT, rpmLimit: RPM, maxConcurrent: CONCURRENT } = LIMITS;

describe('the add form checks the backend’s rules, with the bounds it declares', () => {
  it('accepts a key with the defaults and drops an empty label', () => {
    expect(parseAddKeyForm({ apiKey: '  sk-abc123  ', label: '  ', weight: '' })).toEqual({
      ok: true,
      value: { apiKey: 'sk-abc123', weight: 1 },
    });
  });

  it('accepts a $NAME reference and a trimmed label', () => {
    expect(parseAddKeyForm({ apiKey: '$OPENAI_API_KEY', label: ' prod ', weight: text(WEIGHT.max) })).toEqual({
      ok: true,
      value: { apiKey: '$OPENAI_API_KEY', label: 'prod', weight: WEIGHT.max },
    });
  });

  it.each([
    ['', 'error.apiKeyRequired'],
    ['   ', 'error.apiKeyRequired'],
    ['sk-a b', 'error.apiKeySpaces'],
    ['sk-a\nsk-b', 'error.apiKeySpaces'],
    ['$', 'error.envName'],
    ['$1ABC', 'error.envName'],
    ['$OPENAI-KEY', 'error.envName'],
    ['x'.repeat(LIMITS.apiKey.maxChars + 1), 'error.apiKeyTooLong'],
  ])('rejects the key %j at the apiKey field', (apiKey, error) => {
    expect(parseAddKeyForm({ apiKey, label: '', weight: '1' })).toEqual({ ok: false, errors: { apiKey: error } });
  });

  it.each([text(WEIGHT.min - 1), text(WEIGHT.max + 1), '1.5', '-1', 'abc', '1e2', '3 4'])('rejects the weight %j like the backend (no coercion)', (weight) => {
    expect(parseAddKeyForm({ apiKey: 'sk-1', label: '', weight })).toEqual({ ok: false, errors: { weight: 'error.weightRange' } });
  });

  it('rejects a label over its most characters', () => {
    const result = parseAddKeyForm({ apiKey: 'sk-1', label: 'l'.repeat(LIMITS.keyLabel.maxChars + 1), weight: '1' });
    expect(result).toEqual({ ok: false, errors: { label: 'error.labelTooLong' } });
  });

  it('reports every field at once', () => {
    const result = parseAddKeyForm({ apiKey: '', label: 'l'.repeat(LIMITS.keyLabel.maxChars + 1), weight: text(WEIGHT.min - 1) });
    expect(result.ok ? {} : Object.keys(result.errors).sort()).toEqual(['apiKey', 'label', 'weight']);
  });
});

describe('a key’s own limits follow the backend’s rules and bounds', () => {
  it('sends only the limits that are set; empty means none', () => {
    expect(parseLimitsForm({ rpmLimit: '', maxConcurrent: '  ' })).toEqual({ ok: true, value: {} });
    expect(parseLimitsForm({ rpmLimit: ' 60 ', maxConcurrent: '' })).toEqual({ ok: true, value: { rpmLimit: 60 } });
    expect(parseLimitsForm({ rpmLimit: text(RPM.max), maxConcurrent: text(CONCURRENT.max) })).toEqual({ ok: true, value: { rpmLimit: RPM.max, maxConcurrent: CONCURRENT.max } });
    expect(parseLimitsForm({ rpmLimit: text(RPM.min), maxConcurrent: text(CONCURRENT.min) })).toEqual({ ok: true, value: { rpmLimit: RPM.min, maxConcurrent: CONCURRENT.min } });
  });

  it.each([text(RPM.min - 1), text(RPM.max + 1), '1.5', '-3', '1e3', 'sixty', '60 rpm'])('rejects %j requests per minute (no coercion)', (rpmLimit) => {
    expect(parseLimitsForm({ rpmLimit, maxConcurrent: '' })).toEqual({ ok: false, errors: { rpmLimit: 'error.rpmRange' } });
  });

  it.each([text(CONCURRENT.min - 1), text(CONCURRENT.max + 1), '2.5', 'x'])('rejects %j requests at once', (maxConcurrent) => {
    expect(parseLimitsForm({ rpmLimit: '', maxConcurrent })).toEqual({ ok: false, errors: { maxConcurrent: 'error.concurrentRange' } });
  });

  it('takes the limits in the add form too, optional there', () => {
    expect(parseAddKeyForm({ apiKey: 'sk-1', label: '', weight: '1', rpmLimit: '30', maxConcurrent: '2' })).toEqual({
      ok: true,
      value: { apiKey: 'sk-1', weight: 1, rpmLimit: 30, maxConcurrent: 2 },
    });
    expect(parseAddKeyForm({ apiKey: 'sk-1', label: '', weight: '1', rpmLimit: '0', maxConcurrent: '' })).toEqual({
      ok: false,
      errors: { rpmLimit: 'error.rpmRange' },
    });
  });

  it('shows stored limits as text, none as empty', () => {
    expect(limitsText({ rpmLimit: 60, maxConcurrent: null })).toEqual({ rpmLimit: '60', maxConcurrent: '' });
  });
});

describe('weights edited in place', () => {
  it('parses whole numbers within the weight’s bounds only', () => {
    expect(parseWeight('7')).toEqual({ ok: true, value: 7 });
    expect(parseWeight(text(WEIGHT.min - 1))).toEqual({ ok: false, error: 'error.weightRange' });
    expect(parseWeight('')).toEqual({ ok: false, error: 'error.weightRange' });
  });

  it('steps with the arrow keys within the weight’s bounds', () => {
    expect(stepWeight('5', 'ArrowUp')).toBe('6');
    expect(stepWeight(text(WEIGHT.min), 'ArrowDown')).toBe(text(WEIGHT.min));
    expect(stepWeight(text(WEIGHT.max), 'ArrowUp')).toBe(text(WEIGHT.max));
    expect(stepWeight('5', 'a')).toBeNull();
  });
});
