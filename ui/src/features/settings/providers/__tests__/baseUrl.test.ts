import { describe, expect, it } from 'vitest';
import { hostOf, isLocalHost, sameOrigin } from '../baseUrl';
import { baseUrlSchema } from '../providerForm';

/** What the schema says about a URL: its i18n key, or 'ok'. */
const verdict = (url: string) => {
  const result = baseUrlSchema.safeParse(url);
  return result.success ? 'ok' : result.error.issues.map((issue) => issue.message).join(' + ');
};

describe('the base URL rule (the backend’s base_url_rule and is_local)', () => {
  it('lets plain http go to this machine and the local network', () => {
    for (const local of [
      'http://127.0.0.1:11434/v1',
      'http://127.8.9.10',
      'http://localhost:8080',
      'http://LOCALHOST:8080',
      'http://api.localhost/v1',
      'http://[::1]:4000',
      'http://10.1.2.3/v1',
      'http://172.16.0.1',
      'http://172.20.0.5',
      'http://172.31.255.255',
      'http://192.168.1.20:1234/v1',
      'http://169.254.1.1',
      'http://[fd00::1]/v1',
      'http://[fc00::1]',
      'http://[fe80::1]',
      'http://[febf::1]',
      'http://[::ffff:127.0.0.1]',
      'http://[::ffff:192.168.0.7]:8000',
      'http://ollama:11434',
      'http://gpu-box.local/v1',
      'http://gpu-box.local./v1',
      'http://printer.lan',
      'http://svc.internal:9000',
      'http://llm.home.arpa',
      '  http://127.0.0.1:9/v1  ',
    ]) {
      expect(verdict(local), `${local} stays on this machine or the local network`).toBe('ok');
    }
  });

  it('refuses plain http beyond it, saying why', () => {
    for (const remote of [
      'http://api.openai.com/v1',
      'http://api.example.com',
      'http://8.8.8.8',
      'http://172.32.0.1',
      'http://172.15.0.1',
      'http://192.169.0.1',
      'http://[2001:db8::1]',
      'http://[fec0::1]',
      'http://[::ffff:8.8.8.8]',
      'http://[::2]',
      'http://localhost.example.com',
      'http://local.example',
    ]) {
      expect(verdict(remote), `${remote} would cross the internet unencrypted`).toBe('error.baseUrlPlainHttp');
    }
  });

  it('lets https go anywhere and refuses what is not an http(s) URL, with one message', () => {
    expect(verdict('https://api.openai.com/v1')).toBe('ok');
    expect(verdict('https://8.8.8.8/v1')).toBe('ok');
    expect(verdict('ftp://example.com'), 'other schemes').toBe('error.baseUrl');
    expect(verdict('not a url'), 'not a URL').toBe('error.baseUrl');
    expect(verdict(''), 'empty').toBe('error.baseUrl');
  });

  it('reads hosts as URL writes them', () => {
    expect(isLocalHost('[::1]')).toBe(true);
    expect(isLocalHost('[::ffff:7f00:1]'), '::ffff:127.0.0.1 compressed').toBe(true);
    expect(isLocalHost('[::ffff:808:808]'), '::ffff:8.8.8.8 compressed').toBe(false);
    expect(isLocalHost('api.example.com')).toBe(false);
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
