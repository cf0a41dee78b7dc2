import { describe, expect, it } from 'vitest';
import { limitsText, parseAddKeyForm, parseLimitsForm, parsePastedKeys, parseWeight, stepWeight } from '../schema';

describe('the add form mirrors the backend rules', () => {
  it('accepts a key with the defaults and drops an empty label', () => {
    expect(parseAddKeyForm({ apiKey: '  sk-abc123  ', label: '  ', weight: '' })).toEqual({
      ok: true,
      value: { apiKey: 'sk-abc123', weight: 1 },
    });
  });

  it('accepts a $NAME reference and a trimmed label', () => {
    expect(parseAddKeyForm({ apiKey: '$OPENAI_API_KEY', label: ' prod ', weight: '100' })).toEqual({
      ok: true,
      value: { apiKey: '$OPENAI_API_KEY', label: 'prod', weight: 100 },
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
    ['x'.repeat(4097), 'error.apiKeyTooLong'],
  ])('rejects the key %j at the apiKey field', (apiKey, error) => {
    expect(parseAddKeyForm({ apiKey, label: '', weight: '1' })).toEqual({ ok: false, errors: { apiKey: error } });
  });

  it.each(['0', '101', '1.5', '-1', 'abc', '1e2', '3 4'])('rejects the weight %j like the backend (no coercion)', (weight) => {
    expect(parseAddKeyForm({ apiKey: 'sk-1', label: '', weight })).toEqual({ ok: false, errors: { weight: 'error.weightRange' } });
  });

  it('rejects a label over 100 characters', () => {
    const result = parseAddKeyForm({ apiKey: 'sk-1', label: 'l'.repeat(101), weight: '1' });
    expect(result).toEqual({ ok: false, errors: { label: 'error.labelTooLong' } });
  });

  it('reports every field at once', () => {
    const result = parseAddKeyForm({ apiKey: '', label: 'l'.repeat(101), weight: '0' });
    expect(result.ok ? {} : Object.keys(result.errors).sort()).toEqual(['apiKey', 'label', 'weight']);
  });
});

describe('a key’s own limits mirror the backend rules', () => {
  it('sends only the limits that are set; empty means none', () => {
    expect(parseLimitsForm({ rpmLimit: '', maxConcurrent: '  ' })).toEqual({ ok: true, value: {} });
    expect(parseLimitsForm({ rpmLimit: ' 60 ', maxConcurrent: '' })).toEqual({ ok: true, value: { rpmLimit: 60 } });
    expect(parseLimitsForm({ rpmLimit: '100000', maxConcurrent: '1000' })).toEqual({ ok: true, value: { rpmLimit: 100_000, maxConcurrent: 1000 } });
    expect(parseLimitsForm({ rpmLimit: '1', maxConcurrent: '1' })).toEqual({ ok: true, value: { rpmLimit: 1, maxConcurrent: 1 } });
  });

  it.each(['0', '100001', '1.5', '-3', '1e3', 'sixty', '60 rpm'])('rejects %j requests per minute (1–100 000, no coercion)', (rpmLimit) => {
    expect(parseLimitsForm({ rpmLimit, maxConcurrent: '' })).toEqual({ ok: false, errors: { rpmLimit: 'error.rpmRange' } });
  });

  it.each(['0', '1001', '2.5', 'x'])('rejects %j requests at once (1–1 000)', (maxConcurrent) => {
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
  it('parses whole numbers 1–100 only', () => {
    expect(parseWeight('7')).toEqual({ ok: true, value: 7 });
    expect(parseWeight('0')).toEqual({ ok: false, error: 'error.weightRange' });
    expect(parseWeight('')).toEqual({ ok: false, error: 'error.weightRange' });
  });

  it('steps with the arrow keys within 1–100', () => {
    expect(stepWeight('5', 'ArrowUp')).toBe('6');
    expect(stepWeight('1', 'ArrowDown')).toBe('1');
    expect(stepWeight('100', 'ArrowUp')).toBe('100');
    expect(stepWeight('5', 'a')).toBeNull();
  });
});

describe('pasting several keys', () => {
  it('takes one key per line, skips blank lines and keeps line numbers', () => {
    expect(parsePastedKeys('sk-one\n\n  sk-two  \r\nbad key\n$TEAM_KEY\n')).toEqual([
      { line: 1, apiKey: 'sk-one' },
      { line: 3, apiKey: 'sk-two' },
      { line: 4, apiKey: 'bad key', error: 'error.apiKeySpaces' },
      { line: 5, apiKey: '$TEAM_KEY' },
    ]);
  });
});
