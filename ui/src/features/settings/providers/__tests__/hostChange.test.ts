import { describe, expect, it } from 'vitest';
import { IpcError } from '../../../../ipc/client';
import { provider } from '../../../../test/fakeBackend';
import { hostMoveOf, hostMoveOfError, hostOf, movesKeys, sameOrigin } from '../hostChange';

/** A pool key as the move names it: by label, else by masked preview. */
const key = (label: string | null, apiKeyPreview: string) => ({ label, apiKeyPreview });

describe('moving a provider to another host', () => {
  const withPool = provider('gw', 'GW', { baseUrl: 'https://gw.example/v1', keyCount: 2 });
  const withProviderKey = provider('gw', 'GW', { baseUrl: 'https://gw.example/v1', apiKeyPreview: 'sk-…prov' });
  const keyless = provider('gw', 'GW', { baseUrl: 'https://gw.example/v1' });
  const elsewhere = { baseUrl: 'https://evil.example/v1' };

  it('moves keys when the origin changes and the provider holds any', () => {
    expect(movesKeys(withPool, elsewhere), 'pool keys').toBe(true);
    expect(movesKeys(withProviderKey, elsewhere), 'a provider-level key').toBe(true);
    expect(movesKeys(withProviderKey, { baseUrl: 'https://gw.example:8443/v1' }), 'another port').toBe(true);
    expect(movesKeys(keyless, { ...elsewhere, apiKey: 'sk-new-1234' }), 'a provider-level key set in the same edit').toBe(true);
  });

  it('moves none otherwise', () => {
    expect(movesKeys(keyless, elsewhere), 'no keys to send').toBe(false);
    expect(movesKeys(withPool, { baseUrl: 'https://gw.example/openai/v1' }), 'the same origin').toBe(false);
    expect(movesKeys(withPool, { name: 'Renamed' }), 'the URL is not changed').toBe(false);
    expect(movesKeys(withProviderKey, { ...elsewhere, apiKey: '' }), 'the only key is removed in the same edit').toBe(false);
    expect(movesKeys(withPool, { baseUrl: 'http://10.0.0.2/v1' }), 'plain http: the backend judges it first, and asks through its refusal').toBe(false);
  });

  it('names the pool’s keys by label, else preview, and the provider-level key', () => {
    const both = { ...withPool, apiKeyPreview: 'sk-…prov' };
    expect(hostMoveOf(both, elsewhere, [key('prod', 'sk-…1111'), key(null, 'sk-…2222'), key(null, '$TEAM_KEY')])).toEqual({
      from: 'https://gw.example/v1',
      to: 'https://evil.example/v1',
      keys: [
        { kind: 'named', name: 'prod' },
        { kind: 'named', name: 'sk-…2222' },
        { kind: 'named', name: '$TEAM_KEY' },
        { kind: 'providerKey', preview: 'sk-…prov' },
      ],
    });
    expect(hostMoveOf(keyless, { ...elsewhere, apiKey: 'sk-new-1234' }, []).keys, 'a typed key is never shown').toEqual([{ kind: 'newProviderKey' }]);
  });

  it('reads the move from the backend’s refusal, and nothing from other errors', () => {
    const refusal = new IpcError('validation', 'baseUrl: …', [{ path: 'baseUrl', code: 'host_change', message: '…' }], {
      kind: 'hostChange',
      from: 'https://gw.example/v1',
      to: 'https://evil.example/v1',
      keys: ['prod', 'the provider key sk-…prov'],
    });
    expect(hostMoveOfError(refusal)).toEqual({
      from: 'https://gw.example/v1',
      to: 'https://evil.example/v1',
      keys: [
        { kind: 'named', name: 'prod' },
        { kind: 'named', name: 'the provider key sk-…prov' },
      ],
    });
    expect(hostMoveOfError(new IpcError('validation', 'baseUrl: bad', [{ path: 'baseUrl', code: 'bad_url', message: 'bad' }]))).toBeNull();
    expect(hostMoveOfError(new Error('boom'))).toBeNull();
  });
});

describe('origins', () => {
  it('are scheme, host and port; the path and a default port do not count', () => {
    expect(sameOrigin('https://gw.example/v1', 'https://gw.example/openai/v1'), 'another path').toBe(true);
    expect(sameOrigin('https://gw.example/v1', 'https://GW.example:443/v1'), 'the default port, another case').toBe(true);
    expect(sameOrigin('https://gw.example/v1', 'https://gw.example:8443/v1'), 'another port').toBe(false);
    expect(sameOrigin('https://gw.example/v1', 'http://gw.example/v1'), 'another scheme').toBe(false);
    expect(sameOrigin('https://gw.example/v1', 'https://evil.example/v1'), 'another host').toBe(false);
    expect(sameOrigin('https://gw.example/v1', 'not a url'), 'an unparsable URL shares nothing').toBe(false);
  });

  it('name the host a key would go to, with its port', () => {
    expect(hostOf('https://evil.example/v1')).toBe('evil.example');
    expect(hostOf('http://127.0.0.1:9/v1')).toBe('127.0.0.1:9');
  });
});
