import { describe, expect, it } from 'vitest';
import { LIMITS, type ServedModel } from '../../../../ipc/bindings';
import { parsePort } from '../port';
import { provider } from '../../../../test/fakeBackend';
import { baseUrls, exampleModel, exampleRoute, sharedModels, shellWord, snippets } from '../snippets';

describe('local API examples', () => {
  it('give OpenAI SDKs the address plus /v1, Anthropic and Google SDKs the address itself', () => {
    const expected = { openai: 'http://127.0.0.1:4141/v1', anthropic: 'http://127.0.0.1:4141', gemini: 'http://127.0.0.1:4141' };
    expect(baseUrls('http://127.0.0.1:4141')).toEqual(expected);
    expect(baseUrls('http://127.0.0.1:4141/'), 'no double slash').toEqual(expected);
  });

  it('point Google’s Gen AI SDKs at the host root with the token as their key', () => {
    const byId = Object.fromEntries(
      snippets({ address: 'http://127.0.0.1:4141', token: '<t>', openaiModel: 'o', anthropicModel: 'a', geminiModel: 'gemini-2.5-flash' }).map((s) => [s.id, s]),
    );
    expect(byId.geminiPython.code).toContain('genai.Client(api_key="<t>", http_options={"base_url": "http://127.0.0.1:4141"})');
    expect(byId.geminiPython.code).toContain('model="gemini-2.5-flash"');
    expect(byId.geminiJs.code).toContain('new GoogleGenAI({ apiKey: "<t>", httpOptions: { baseUrl: "http://127.0.0.1:4141" } })');
    expect(byId.geminiJs.language).toBe('javascript');
    expect(byId.env.code, 'the variables @google/genai reads').toContain("export GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:4141\nexport GEMINI_API_KEY='<t>'");
  });

  it('include a curl request to the chat completions endpoint, every word quoted for the shell', () => {
    const byId = Object.fromEntries(
      snippets({ address: 'http://127.0.0.1:4141', token: '<your token>', openaiModel: "it's-a-model", anthropicModel: 'a', geminiModel: 'g' }).map((s) => [s.id, s]),
    );
    expect(byId.curl.language).toBe('bash');
    expect(byId.curl.code.split('\n')).toEqual([
      'curl http://127.0.0.1:4141/v1/chat/completions \\',
      "  -H 'Authorization: Bearer <your token>' \\",
      "  -H 'Content-Type: application/json' \\",
      `  -d '{"model":"it'\\''s-a-model","messages":[{"role":"user","content":"Hello"}]}'`,
    ]);
  });

  it('quote what they are given, so a model with quotes cannot break the code', () => {
    const [python] = snippets({ address: 'http://127.0.0.1:1', token: '<t>', openaiModel: 'a"b', anthropicModel: 'c', geminiModel: 'g' });
    expect(python.code).toContain('model="a\\"b",');
  });

  it('write shell words literally', () => {
    expect(shellWord('http://127.0.0.1:4141/v1')).toBe('http://127.0.0.1:4141/v1');
    expect(shellWord('<your token>')).toBe("'<your token>'");
    expect(shellWord("it's")).toBe("'it'\\''s'");
  });

  it('name a model the local API can answer now in the example’s dialect, else none', () => {
    const served: ServedModel[] = [
      { api: 'anthropic', model: 'claude-x', provider: 'Anthropic', others: [] },
      { api: 'openai', model: 'gpt-y', provider: 'Gateway', others: [] },
      { api: 'openai', model: 'gpt-z', provider: 'Gateway', others: [] },
    ];
    expect(exampleModel(served, 'openai')?.model, 'the first it serves for OpenAI’s clients').toBe('gpt-y');
    expect(exampleModel(served, 'anthropic'), 'with its provider').toEqual({ api: 'anthropic', model: 'claude-x', provider: 'Anthropic', others: [] });
    expect(exampleModel(served, 'gemini'), 'none served: none named (the page says why)').toBeNull();
  });
});

describe('the provider an example asks', () => {
  // Local (Ollama, keyless) comes first in the backend's order; Gateway has working keys.
  const local = provider('local', 'Local', { baseUrl: 'http://127.0.0.1:11434/v1', local: true, answerable: true });
  const gateway = provider('gw', 'Gateway', { builtin: false, keyCount: 2, answerable: true });
  const served: ServedModel[] = [
    { api: 'openai', model: 'llama3.2', provider: 'Local', others: [] },
    { api: 'openai', model: 'gpt-y', provider: 'Gateway', others: [] },
  ];

  it('prefers a provider with keys to a keyless server that did not answer', () => {
    expect(exampleModel(served, 'openai', [local, gateway])?.model, 'Ollama is not running: Gateway answers now').toBe('gpt-y');
    expect(exampleRoute(local, new Set()), 'said as not answering').toBe('unreachable');
    expect(exampleRoute(gateway, new Set())).toBe('keys');
  });

  it('still prefers keys when the keyless server answers, and takes it when it is all there is', () => {
    expect(exampleModel(served, 'openai', [local, gateway], new Set(['local']))?.model).toBe('gpt-y');
    expect(exampleModel(served.slice(0, 1), 'openai', [local], new Set(['local']))?.model).toBe('llama3.2');
    expect(exampleRoute(local, new Set(['local']))).toBe('keyless');
    expect(exampleModel(served.slice(0, 1), 'openai', [local])?.model, 'not answering, but the only one: named, with why').toBe('llama3.2');
  });

  it('counts a provider key, or a pool, as keys even on a local address', () => {
    expect(exampleRoute({ ...local, apiKeyPreview: 'sk-…abcd' }, new Set())).toBe('keys');
    expect(exampleRoute({ ...local, keyCount: 1 }, new Set())).toBe('keys');
  });
});

describe('model names two providers list', () => {
  it('name the provider a bare name goes to and the others that list it, as the backend says', () => {
    const served: ServedModel[] = [
      { api: 'openai', model: 'llama3.2', provider: 'Local', others: ['Gateway'] },
      { api: 'openai', model: 'gpt-y', provider: 'Gateway', others: [] },
    ];
    expect(sharedModels(served)).toEqual([{ model: 'llama3.2', api: 'openai', provider: 'Local', others: ['Gateway'] }]);
    expect(sharedModels([served[1]]), 'one provider: nothing to say').toEqual([]);
  });
});

describe('the local API port', () => {
  it('is plain digits within the backend’s bounds, a wrong one described by the issue the backend would give', () => {
    const { min, max } = LIMITS.port;
    expect(parsePort(' 4141 ')).toEqual({ ok: true, port: 4141 });
    expect(parsePort(String(min))).toEqual({ ok: true, port: min });
    expect(parsePort(String(max))).toEqual({ ok: true, port: max });
    expect(parsePort(String(min - 1))).toMatchObject({ ok: false, issue: { path: 'port', code: 'too_small', params: { min } } });
    expect(parsePort(String(max + 1))).toMatchObject({ ok: false, issue: { code: 'too_large', params: { max } } });
    for (const text of ['', '4e3', '41.5', '-1', 'port']) {
      expect(parsePort(text), text).toMatchObject({ ok: false, issue: { code: 'wrong_type' } });
    }
  });
});
