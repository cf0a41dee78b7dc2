import { describe, expect, it } from 'vitest';
import { provider } from '../../../../test/fakeBackend';
import { emptyForm, fieldOfIssue, formOf, modelIndexOf, parseModels, toChanges, toNewProvider } from '../providerForm';

describe('provider form', () => {
  it('reads models one per line or comma-separated, trimmed, once each', () => {
    expect(parseModels(' gpt-4o \n\ngpt-4o-mini, o3 ,gpt-4o')).toEqual(['gpt-4o', 'gpt-4o-mini', 'o3']);
  });

  it('builds a new provider with only the fields given', () => {
    const result = toNewProvider({ ...emptyForm(), name: ' Fake ', baseUrl: 'http://127.0.0.1:9/v1 ' });
    expect(result).toEqual({ ok: true, value: { name: 'Fake', kind: 'openai', baseUrl: 'http://127.0.0.1:9/v1' } });
  });

  it('checks the name, the key and that the default model is listed', () => {
    const result = toNewProvider({ ...emptyForm(), name: ' ', baseUrl: 'ftp://x', apiKey: 'a b', models: 'a', defaultModel: 'b' });
    expect(result).toEqual({
      ok: false,
      errors: { name: 'error.nameRequired', apiKey: 'error.apiKeySpaces', defaultModel: 'error.defaultModelNotListed' },
    });
  });

  it('leaves the base URL to the backend’s rule: sent as typed, trimmed, in both forms', () => {
    const plain = { ...emptyForm(), name: 'Gateway', baseUrl: ' http://api.example.com/v1 ' };
    expect(toNewProvider(plain)).toEqual({ ok: true, value: { name: 'Gateway', kind: 'openai', baseUrl: 'http://api.example.com/v1' } });
    const stored = provider('p', 'P');
    expect(toChanges({ ...formOf(stored), baseUrl: 'http://api.example.com/v1' }, stored)).toEqual({
      ok: true,
      value: { baseUrl: 'http://api.example.com/v1' },
    });
  });

  it('sends only what changed; an empty key keeps the stored one, remove sends ""', () => {
    const stored = provider('p', 'P', { apiKeyPreview: 'sk-…1234', models: ['a', 'b'], defaultModel: 'a' });
    expect(toChanges(formOf(stored), stored), 'nothing changed').toEqual({ ok: true, value: {} });
    expect(toChanges({ ...formOf(stored), removeKey: true }, stored)).toEqual({ ok: true, value: { apiKey: '' } });
    expect(toChanges({ ...formOf(stored), apiKey: 'sk-new-key-1' }, stored)).toEqual({ ok: true, value: { apiKey: 'sk-new-key-1' } });
    expect(toChanges({ ...formOf(stored), models: 'a, b, c', defaultModel: '' }, stored)).toEqual({
      ok: true,
      value: { models: ['a', 'b', 'c'], defaultModel: '' },
    });
  });

  it('places backend issue paths at their fields', () => {
    expect(fieldOfIssue('models[1]')).toBe('models');
    expect(modelIndexOf('models[1]')).toBe(2);
    expect(fieldOfIssue('baseUrl')).toBe('baseUrl');
    expect(fieldOfIssue('id')).toBeNull();
  });
});
