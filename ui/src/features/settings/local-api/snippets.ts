import type { ClientApi, Provider, ServedModel } from '../../../ipc/bindings';
/**
 * Copy-ready examples for pointing the official SDKs (and anything that reads their environment
 * variables) at the local API. Pure: the address, models and the token placeholder are passed in.
 * The real token never appears here: it is shown once, in its own dialog.
 */

export type SnippetId = 'openaiPython' | 'openaiJs' | 'anthropicPython' | 'anthropicJs' | 'geminiPython' | 'geminiJs' | 'curl' | 'env';

export interface Snippet {
  id: SnippetId;
  /** For the code block's bar and highlighting. */
  language: 'python' | 'javascript' | 'bash';
  code: string;
}

export interface SnippetInputs {
  /** `http://127.0.0.1:PORT`, without a trailing slash. */
  address: string;
  /** What to write for the token, e.g. `<your token>`. */
  token: string;
  /** A model an OpenAI-compatible provider lists, one an Anthropic provider lists, one a Gemini provider lists. */
  openaiModel: string;
  anthropicModel: string;
  geminiModel: string;
}

export const SNIPPET_IDS: readonly SnippetId[] = ['openaiPython', 'openaiJs', 'anthropicPython', 'anthropicJs', 'geminiPython', 'geminiJs', 'curl', 'env'];

/** A string literal for Python and JavaScript alike (double quotes, escaped as JSON escapes them). */
const quoted = (text: string) => JSON.stringify(text);

/**
 * OpenAI SDKs take the URL before `/chat/completions`; Anthropic SDKs the one before
 * `/v1/messages`; Google's the host root (they add `/v1beta/models/…`, or `/v1/…`).
 */
export function baseUrls(address: string) {
  const root = address.replace(/\/+$/, '');
  return { openai: `${root}/v1`, anthropic: root, gemini: root };
}

export function snippets({ address, token, openaiModel, anthropicModel, geminiModel }: SnippetInputs): Snippet[] {
  const urls = baseUrls(address);
  const code: Record<SnippetId, string> = {
    openaiPython: [
      'from openai import OpenAI',
      '',
      `client = OpenAI(base_url=${quoted(urls.openai)}, api_key=${quoted(token)})`,
      'reply = client.chat.completions.create(',
      `    model=${quoted(openaiModel)},`,
      '    messages=[{"role": "user", "content": "Hello"}],',
      ')',
      'print(reply.choices[0].message.content)',
    ].join('\n'),
    openaiJs: [
      "import OpenAI from 'openai';",
      '',
      `const client = new OpenAI({ baseURL: ${quoted(urls.openai)}, apiKey: ${quoted(token)} });`,
      'const reply = await client.chat.completions.create({',
      `  model: ${quoted(openaiModel)},`,
      "  messages: [{ role: 'user', content: 'Hello' }],",
      '});',
      'console.log(reply.choices[0].message.content);',
    ].join('\n'),
    anthropicPython: [
      'from anthropic import Anthropic',
      '',
      `client = Anthropic(base_url=${quoted(urls.anthropic)}, api_key=${quoted(token)})`,
      'reply = client.messages.create(',
      `    model=${quoted(anthropicModel)},`,
      '    max_tokens=1024,',
      '    messages=[{"role": "user", "content": "Hello"}],',
      ')',
      'print(reply.content[0].text)',
    ].join('\n'),
    anthropicJs: [
      "import Anthropic from '@anthropic-ai/sdk';",
      '',
      `const client = new Anthropic({ baseURL: ${quoted(urls.anthropic)}, apiKey: ${quoted(token)} });`,
      'const reply = await client.messages.create({',
      `  model: ${quoted(anthropicModel)},`,
      '  max_tokens: 1024,',
      "  messages: [{ role: 'user', content: 'Hello' }],",
      '});',
      'console.log(reply.content[0].text);',
    ].join('\n'),
    geminiPython: [
      'from google import genai',
      '',
      `client = genai.Client(api_key=${quoted(token)}, http_options={"base_url": ${quoted(urls.gemini)}})`,
      `reply = client.models.generate_content(model=${quoted(geminiModel)}, contents="Hello")`,
      'print(reply.text)',
    ].join('\n'),
    geminiJs: [
      "import { GoogleGenAI } from '@google/genai';",
      '',
      `const ai = new GoogleGenAI({ apiKey: ${quoted(token)}, httpOptions: { baseUrl: ${quoted(urls.gemini)} } });`,
      `const reply = await ai.models.generateContent({ model: ${quoted(geminiModel)}, contents: 'Hello' });`,
      'console.log(reply.text);',
    ].join('\n'),
    // No SDK at all: the OpenAI chat completions request, each word quoted for a POSIX shell.
    curl: [
      `curl ${shellWord(`${urls.openai}/chat/completions`)} \\`,
      `  -H ${shellWord(`Authorization: Bearer ${token}`)} \\`,
      `  -H ${shellWord('Content-Type: application/json')} \\`,
      `  -d ${shellWord(JSON.stringify({ model: openaiModel, messages: [{ role: 'user', content: 'Hello' }] }))}`,
    ].join('\n'),
    env: [
      `export OPENAI_BASE_URL=${shellWord(urls.openai)}`,
      `export OPENAI_API_KEY=${shellWord(token)}`,
      `export ANTHROPIC_BASE_URL=${shellWord(urls.anthropic)}`,
      `export ANTHROPIC_API_KEY=${shellWord(token)}`,
      `export GOOGLE_GEMINI_BASE_URL=${shellWord(urls.gemini)}`,
      `export GEMINI_API_KEY=${shellWord(token)}`,
    ].join('\n'),
  };
  const language: Record<SnippetId, Snippet['language']> = {
    openaiPython: 'python',
    openaiJs: 'javascript',
    anthropicPython: 'python',
    anthropicJs: 'javascript',
    geminiPython: 'python',
    geminiJs: 'javascript',
    curl: 'bash',
    env: 'bash',
  };
  return SNIPPET_IDS.map((id) => ({ id, language: language[id], code: code[id] }));
}

/** A word as a POSIX shell reads it literally: bare when safe, else in single quotes. */
export function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * How a provider answers an example: with its keys; as a server on this machine or network that
 * needs none and answered just now; or as one that needs none but did not answer (Ollama not
 * running), so an example sent to it would fail.
 */
export type ExampleRoute = 'keys' | 'keyless' | 'unreachable';

/** A keyless local server: the pool is empty and no provider key is set. */
export const isKeyless = (p: Provider) => p.local && p.keyCount === 0 && p.apiKeyPreview === null;

/**
 * How `provider` would answer an example; `reachable` holds the ids of the keyless servers that
 * answered just now. A provider the UI does not know yet counts as answering with keys, as the
 * backend's `served` says it can answer.
 */
export function exampleRoute(provider: Provider | undefined, reachable: ReadonlySet<string>): ExampleRoute {
  if (!provider || !isKeyless(provider)) return 'keys';
  return reachable.has(provider.id) ? 'keyless' : 'unreachable';
}

const ROUTE_RANK: Record<ExampleRoute, number> = { keys: 0, keyless: 1, unreachable: 2 };

/**
 * The model an example in `api`'s dialect asks for: of those the local API can answer for now
 * (the backend's `served`: a provider with a usable key, or one needing none, and a model it
 * lists, defaults to or fetched), the first of a provider with keys, else of a keyless server
 * that answered just now (`reachable`), else of one that did not; null when none is served.
 * `providers` names the providers `served` names by name.
 */
export function exampleModel(
  served: readonly ServedModel[],
  api: ClientApi,
  providers: readonly Provider[] = [],
  reachable: ReadonlySet<string> = new Set(),
): ServedModel | null {
  let best: ServedModel | null = null;
  let bestRank = Number.POSITIVE_INFINITY;
  for (const m of served) {
    if (m.api !== api) continue;
    const rank = ROUTE_RANK[exampleRoute(providerNamed(providers, m.provider), reachable)];
    if (rank < bestRank) {
      best = m;
      bestRank = rank;
    }
  }
  return best;
}

/** The provider `served` names (providers' names are unique). */
export const providerNamed = (providers: readonly Provider[], name: string) => providers.find((p) => p.name === name);

/** A bare model name more than one provider offers: who answers it, and who else lists it. */
export interface SharedModel {
  model: string;
  api: ClientApi;
  /** The provider a bare name goes to, as the backend routes it. */
  provider: string;
  /** The other providers that can answer and list it: `name/model` reaches one of them. */
  others: string[];
}

/**
 * The served models another answering provider of the same dialect also lists, as the backend
 * says (their own lists, defaults and what their models endpoints listed): a bare name goes to
 * `provider`, and `provider/model` picks another.
 */
export function sharedModels(served: readonly ServedModel[]): SharedModel[] {
  return served.filter((m) => m.others.length > 0).map(({ model, api, provider, others }) => ({ model, api, provider, others }));
}
