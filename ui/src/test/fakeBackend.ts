import { sameOrigin } from '../features/settings/providers/hostChange';
import type {
  Attachment,
  ApiKey,
  AppStatus,
  Chat,
  ChatEvent,
  Commands,
  ErrorCode,
  ErrorDetails,
  IpcError,
  Issue,
  KeyImportProgress,
  KeyReading,
  KeyStatus,
  KeyTestResult,
  LocalApiStatus,
  Message,
  PoolAlert,
  RecentAlert,
  TeamStatus,
  Preferences,
  Provider,
  ProviderKind,
  ServedModel,
  ProxySetting,
  Settings,
} from '../ipc/bindings';
import { LIMITS, PROVIDER_KINDS } from '../ipc/bindings';
import type { ArgsOf, EventOf, ResultOf, StreamCommand } from '../ipc/client';
import { createFakeLocalApiExtras } from './fakeAgents';
import { createFakeLedger } from './fakeLedger';
import { transcript } from './transcripts';

/**
 * An in-memory stand-in for the Rust backend, behind the mocked `invoke` and `listen`: it keeps
 * keys, answers the llmConfig commands, and emits `llmConfig:changed` after writes, so
 * component tests exercise the same "write, then follow the event" flow as the real app.
 */
export interface Call {
  command: string;
  args: Record<string, unknown>;
}

type Listener = (event: { event: string; payload: unknown }) => void;

/** What a command's handler receives: its arguments, and for a streaming command its channel. */
type HandlerArgs<C extends keyof Commands> = C extends StreamCommand
  ? ArgsOf<C> & { onEvent: { onmessage: (event: EventOf<C>) => void } }
  : ArgsOf<C>;

/**
 * The fake's commands, typed by the generated table: a renamed command, a changed argument or
 * result breaks these tests when they compile, not when the real app runs.
 */
export type Handlers = { [C in keyof Commands]?: (args: HandlerArgs<C>) => ResultOf<C> | Promise<ResultOf<C>> };

export const READY: AppStatus = {
  version: '0.1.0',
  dataDir: '/data',
  logDir: '/data/logs',
  database: { state: 'ready', path: '/data/keypool.sqlite3' },
  keychain: { state: 'available' },
};

export function provider(id: string, name: string, extra: Partial<Provider> = {}): Provider {
  return { id, name, kind: 'openai', baseUrl: `https://${id}.example/v1`, apiKeyPreview: null, builtin: true, sortOrder: 0, models: [], defaultModel: null, systemPrompt: null, keyCount: 0, local: false, answerable: false, keylessRefused: null, createdAt: 0, updatedAt: 0, ...extra };
}

/** What a test's reply script gets: emit events, and learn when chat:stop is called. */
export interface SendControl {
  chatId: string;
  content?: string;
  /** The last user message was rewritten (`edit: true`). */
  edit: boolean;
  emit: (event: ChatEvent) => void;
  stopped: Promise<void>;
}
/** Returns the assistant message's fields to save (the fake adds id, chatId, createdAt). */
export type SendHandler = (control: SendControl) => Promise<Partial<Message>> | Partial<Message>;

/** A reply from key A in two pieces. */
export const defaultReply: SendHandler = ({ emit }) => {
  emit({ type: 'keySelected', keyId: null, keyLabel: 'key A', providerLevel: false, keyless: false, rebound: false, attempt: 1 });
  emit({ type: 'delta', text: 'Hello' });
  emit({ type: 'delta', text: ' there' });
  return { content: 'Hello there', keyLabel: 'key A' };
};

/** A promise with its resolve, for a test to release a step of a reply. */
export function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/** A rejection as the backend sends it: `{ code, message, issues?, details? }`. */
function backendError(code: ErrorCode, message: string, issues?: Issue[], details?: ErrorDetails): IpcError {
  return { code, message, ...(issues ? { issues } : {}), ...(details ? { details } : {}) };
}

/**
 * The backend's verdicts on base URLs, as it gave them (the `base-urls` transcript): the fake has
 * no URL rule of its own. A URL it has no verdict for is accepted when it is `https` with a host
 * (https goes anywhere); any other is a mistake of the test, which must add it to the scenario.
 */
const verdictKey = (baseUrl: string, onMyNetwork: unknown) => `${baseUrl.trim()}${onMyNetwork === true ? ' (on my network)' : ''}`;
const URL_VERDICTS = new Map(
  transcript('base-urls').steps.map((step) => [verdictKey(String(step.args.baseUrl), step.args.onMyNetwork), step.error ?? null] as const),
);

/**
 * Whether the backend takes a base URL for a local server (which needs no key), as it answered
 * for the `base-urls` transcript's URLs; any other (`https` to a test's made-up host) is not.
 */
const LOCAL_URLS = new Set(
  transcript('base-urls').steps.flatMap((step) => ((step.answer as Provider | undefined)?.local ? [String(step.args.baseUrl)] : [])),
);
const isLocalUrl = (baseUrl: string) => LOCAL_URLS.has(baseUrl.trim());

function checkBaseUrl(baseUrl: string | undefined, onMyNetwork?: unknown) {
  if (baseUrl === undefined) return;
  const verdict = URL_VERDICTS.get(verdictKey(baseUrl, onMyNetwork));
  if (verdict) throw verdict;
  if (verdict === null) return;
  let url: URL | null = null;
  try {
    url = new URL(baseUrl.trim());
  } catch {}
  if (url?.protocol !== 'https:' || url.hostname === '') {
    throw new Error(`the fake backend has no verdict on the base URL ${JSON.stringify(baseUrl)}: add it to base_urls in src-tauri/crates/api/tests/api/transcripts.rs`);
  }
}

/**
 * The backend's verdicts on proxies, as it gave them (the `settings` transcript): an address it
 * has no verdict for is accepted when it is http(s) with a host.
 */
const PROXY_VERDICTS = new Map(
  transcript('settings')
    .steps.filter((step) => step.args.proxy !== undefined)
    .map((step) => [JSON.stringify(step.args.proxy), step.error ?? null] as const),
);

function checkProxy(proxy: ProxySetting | undefined) {
  if (proxy === undefined) return;
  const verdict = PROXY_VERDICTS.get(JSON.stringify(proxy));
  if (verdict) throw verdict;
  if (verdict === null || proxy.mode !== 'url') return;
  if (!/^https?:\/\/[^/\s]+/.test(proxy.url ?? '')) {
    throw new Error(`the fake backend has no verdict on the proxy ${JSON.stringify(proxy)}: add it to settings in src-tauri/crates/api/tests/api/transcripts.rs`);
  }
}

/** A field of the arguments is text of at most `max` characters (the backend counts characters). */
function checkLength(path: string, value: string | undefined, max: number) {
  if (value !== undefined && [...value].length > max) {
    throw backendError('validation', `${path}: must be at most ${max} characters long`, [{ path, code: 'too_long', params: { max }, message: `must be at most ${max} characters long` }]);
  }
}

/** A field of the arguments is text of at most `max` bytes in UTF-8 (an id, a model's name). */
function checkBytes(path: string, value: string | undefined, max: number) {
  if (value !== undefined && new TextEncoder().encode(value).length > max) {
    // The backend words a byte bound as it words a character bound.
    throw backendError('validation', `${path}: must be at most ${max} characters long`, [{ path, code: 'too_long', params: { max }, message: `must be at most ${max} characters long` }]);
  }
}

/** An update that changes nothing: the backend wants at least one of `fields`. */
function checkSomething(args: Record<string, unknown>, fields: string[]) {
  if (!fields.some((field) => args[field] !== undefined)) {
    throw backendError('validation', 'nothing to change', [{ path: '', code: 'nothing_to_change', params: { fields }, message: 'nothing to change' }]);
  }
}

/** The provider named by an id does not exist. */
const providerNotFound = (id: string) => backendError('not_found', `provider "${id}" does not exist`, undefined, { kind: 'notFound', what: 'provider' });

/** A default model must be one of the provider's models, when it lists any. */
function checkDefaultModel(defaultModel: string | undefined, models: string[]) {
  if (defaultModel && models.length > 0 && !models.includes(defaultModel)) {
    throw backendError('validation', "defaultModel: must be one of the provider's models", [{ path: 'defaultModel', code: 'not_a_model', message: "must be one of the provider's models" }]);
  }
}

/** Another provider (than `except`) has this name, in any case: a field error at the name. */
function checkNameFree(providers: readonly Provider[], name: string, except?: string) {
  const wanted = name.trim().toLowerCase();
  if (providers.some((p) => p.id !== except && p.name.trim().toLowerCase() === wanted)) {
    throw backendError('validation', 'name: another provider already has this name: choose another', [
      { path: 'name', code: 'name_taken', message: 'another provider already has this name: choose another' },
    ]);
  }
}

/** A label (or a quota group) as the backend keeps it: trimmed, none when empty. */
const labelOf = (label: string | undefined) => (label?.trim() ? label.trim() : null);

/** The backend's range rule for an integer argument, with its issue at the field. */
function checkRange(path: string, value: number | undefined, { min, max }: { min: number; max: number }) {
  if (value === undefined) return;
  const issue: Issue | null = !Number.isInteger(value)
    ? { path, code: 'wrong_type', params: { expected: 'integer' }, message: 'must be an integer' }
    : value < min
      ? { path, code: 'too_small', params: { min }, message: `must be at least ${min}` }
      : value > max
        ? { path, code: 'too_large', params: { max }, message: `must be at most ${max}` }
        : null;
  if (issue) throw backendError('validation', `${path}: ${issue.message}`, [issue]);
}

/** A key's user limits, within their bounds or absent. */
function checkLimits({ rpmLimit, maxConcurrent }: { rpmLimit?: number; maxConcurrent?: number }) {
  checkRange('rpmLimit', rpmLimit, LIMITS.rpmLimit);
  checkRange('maxConcurrent', maxConcurrent, LIMITS.maxConcurrent);
}

/** What the fake starts from, besides its defaults. */
export interface FakeStart {
  /** The providers it holds at first (their times become the fake's clock), instead of its two. */
  providers?: readonly Provider[];
}

export function createFakeBackend(now = Date.UTC(2026, 0, 15, 14, 10), start: FakeStart = {}) {
  const providers: Provider[] = start.providers?.map((p) => ({ ...p, createdAt: now, updatedAt: now })) ?? [
    provider('openai', 'OpenAI', { apiKeyPreview: 'sk-…prov', sortOrder: 0, models: ['gpt-4o-mini', 'gpt-4o'], defaultModel: 'gpt-4o-mini' }),
    provider('anthropic', 'Anthropic', { kind: 'anthropic', sortOrder: 1, models: ['claude-sonnet-4-5', 'claude-haiku-4-5'], defaultModel: 'claude-sonnet-4-5' }),
  ];
  const keys: (ApiKey & { secret: string })[] = [];
  const live = new Map<string, Partial<KeyStatus>>();
  const listeners = new Map<string, Set<Listener>>();
  const calls: Call[] = [];
  const rejections = new Map<string, IpcError>();
  let nextId = 1;
  let clock = now;
  let appStatus: AppStatus = READY;
  const chats: Chat[] = [];
  const messages: Message[] = [];
  const stops = new Map<string, () => void>();
  const keyTests = new Map<string, KeyTestResult>();
  let sendHandler: SendHandler = defaultReply;
  const attachments: Attachment[] = [];
  /** What `chat:attach` answers: by default the file as an image (by its name) or text; a test may refuse. */
  let attachScript: ((name: string, data: string) => Attachment | { error: IpcError }) | null = null;
  function attachmentById(id: string): Attachment {
    const found = attachments.find((a) => a.id === id);
    if (!found) throw backendError('not_found', `attachment "${id}" does not exist`, undefined, { kind: 'notFound', what: 'attachment' });
    return structuredClone(found);
  }
  function attachHandler(name: string, data: string): Attachment {
    const scripted = attachScript?.(name, data);
    if (scripted && 'error' in scripted) throw scripted.error;
    const image = /\.(png|jpe?g|webp|gif)$/i.test(name);
    const attachment: Attachment = scripted ?? {
      id: `att-${nextId++}`,
      name,
      kind: image ? 'image' : 'text',
      mediaType: image ? 'image/png' : 'text/plain',
      size: Math.floor((data.length * 3) / 4),
      width: image ? 64 : null,
      height: image ? 48 : null,
    };
    attachments.push(attachment);
    return structuredClone(attachment);
  }
  /** What `llmConfig:listModels` answers per provider: models (after `gate`), or a rejection. */
  const modelLists = new Map<string, { models: string[]; gate?: Promise<void> } | { error: IpcError }>();
  const modelCache = new Map<string, { models: string[]; fetchedAt: number; cached: boolean }>();
  /** The chats exported, in order; and what the save answers (a path, null: cancelled, or an error). */
  const exports: string[] = [];
  let exportAnswer: { path: string | null } | { error: IpcError } | null = null;
  /** URLs handed to the opener plugin (the system browser). */
  const opened: string[] = [];
  let settings: Settings = { maxWaitSeconds: 20, bindingIdleMinutes: 60, usageRetentionDays: 180, proxy: { mode: 'none' }, notifyKeysLost: true };
  /** The desktop notifications shown (`app:notify`, while `notifyKeysLost` is on). */
  const notifications: { title: string; body: string }[] = [];
  /** The keys lost, the newest first, as `app:getAlerts` lists them (whatever `notifyKeysLost` says). */
  const recentAlerts: RecentAlert[] = [];
  /** Why the desktop shows no notifications (null: it does). */
  let notificationsDown: string | null = null;
  /** The local API: its status, the ports other programs hold, and every token handed out. */
  let localApi: Omit<LocalApiStatus, 'served'> = { enabled: false, running: false, address: null, port: LIMITS.port.default, requests: 0, inFlight: 0, failed: 0, error: null };
  /** The UI's preferences in the data directory (`app:getPreferences`). */
  let preferences: Preferences = { theme: null, language: null, page: null, provider: null };
  /** What `llmConfig:listModelsFor` answers per base URL: models, or a rejection. */
  const unsavedModelLists = new Map<string, { models: string[] } | { error: IpcError }>();
  /** The team: its status as `team:getStatus` says it, the secret kept (never answered), the secrets generated. */
  let team: TeamStatus = { state: 'off', reason: null, redisUrl: null, hasPassword: false, team: null, members: 0, lastChangeAt: null, since: null, secret: 'none' };
  let teamSecret: string | null = null;
  const teamSecrets: string[] = [];
  const busyPorts = new Set<number>();
  const localTokens: string[] = [];
  const newLocalToken = () => {
    localTokens.push(`kp-local-fake-${localTokens.length + 1}`);
    return localTokens[localTokens.length - 1];
  };
  /** When false, writes do not emit (to test the fallback reload). */
  let emitting = true;
  /** The writes committed so far, as the backend counts them (`llmConfig:changed`'s generation). */
  let generation = 0;
  /** The usage ledger: attempts a test sets, summed by the `usage:*` commands. */
  const ledger = createFakeLedger({
    fail: backendError,
    keyLabel: (id) => {
      const key = keys.find((k) => k.id === id);
      return key ? (key.label ?? key.apiKeyPreview) : null;
    },
    now: () => clock,
  });
  /** The local API's routes and the coding agents. */
  const localApiExtras = createFakeLocalApiExtras({
    fail: backendError,
    providers: () => providers.map(shown),
    localApi: () => localApi,
    localTokens: () => localTokens,
    served: () => served(),
    now: () => clock,
  });

  const preview = (secret: string) => (secret.startsWith('$') ? secret : `${secret.slice(0, 3)}…${secret.slice(-4)}`);
  const publicKey = ({ secret: _, ...key }: ApiKey & { secret: string }): ApiKey => ({ ...key });
  const byProvider = (providerId: string) => keys.filter((k) => k.providerId === providerId).sort((a, b) => a.sortOrder - b.sortOrder);
  const find = (id: string) => {
    const key = keys.find((k) => k.id === id);
    if (!key) throw backendError('not_found', `API key "${id}" does not exist`, undefined, { kind: 'notFound', what: 'API key' });
    return key;
  };

  /** A provider as the backend answers it: with its pool's size, whether it is a local server, and whether it can answer. */
  function shown(p: Provider): Provider {
    const pool = byProvider(p.id);
    const local = isLocalUrl(p.baseUrl);
    const answerable = pool.some((k) => k.enabled) || (pool.length === 0 && (p.apiKeyPreview !== null || local));
    return { ...p, keyCount: pool.length, local, answerable };
  }

  /** The models the local API can answer for now: those of the providers that can answer, as the backend routes them. */
  function served(): ServedModel[] {
    const out: ServedModel[] = [];
    for (const api of ['openai', 'anthropic', 'gemini'] as const) {
      for (const p of providers.map(shown).filter((x) => x.answerable && x.kind === api)) {
        const offered = [...p.models, ...(p.defaultModel ? [p.defaultModel] : []), ...(modelCache.get(p.id)?.models ?? [])];
        // Like the backend: each model once, under the first provider; the others that list it named.
        for (const model of offered) {
          const listed = out.find((m) => m.api === api && m.model === model);
          if (!listed) out.push({ model, provider: p.name, others: [], api });
          else if (listed.provider !== p.name && !listed.others.includes(p.name)) listed.others.push(p.name);
        }
      }
    }
    return out;
  }

  /**
   * Imports previewed (their new keys' secrets) and running: a running one moves only when a test
   * calls `advanceImport`, so a test sees every step; each key's validation verdict comes from
   * `importVerdict` (valid unless set).
   */
  const imports = new Map<string, { providerId: string; secrets: { secret: string; index: number }[] }>();
  interface RunningImport {
    progress: KeyImportProgress;
    secrets: string[];
    settings: { weight: number; labelPrefix?: string; quotaGroup?: string; validate: boolean; keepRejectedDisabled: boolean };
    next: number;
  }
  const running = new Map<string, RunningImport>();
  let importVerdict: (secret: string) => 'valid' | 'invalid' | 'rateLimited' | 'unreachable' = () => 'valid';
  /** The answers of `llmConfig:exportApiKeys`: the path chosen (null: cancelled). */
  let keyExportPath: string | null = '/home/user/keys.csv';

  function emitEvent(event: string, payload: unknown) {
    queueMicrotask(() => {
      for (const listener of listeners.get(event) ?? []) listener({ event, payload });
    });
  }

  /** Keys by the shapes the backend knows, or one per non-empty line when none has one. */
  /**
   * The keys of `text` as the backend reads them, loosely: by `kind`'s key prefixes (a token
   * starting with a longer prefix of another kind is not one), or one per line (each non-empty,
   * non-comment line's longest token).
   */
  function extractKeys(text: string, kind: ProviderKind, reading: KeyReading): { keys: string[]; unrecognised: number[] } {
    const lines = text.split(/\r?\n/);
    if (reading === 'one_per_line') {
      const tokens = lines.map((line) => (/^\s*(#|\/\/)/.test(line) ? [] : (line.match(/[A-Za-z0-9_.~+/-]{8,}/g) ?? [])));
      const longest = tokens.map((found) => found.reduce<string | null>((a, b) => (a && a.length >= b.length ? a : b), null));
      return { keys: longest.filter((k): k is string => k !== null), unrecognised: [] };
    }
    const own = PROVIDER_KINDS.find((k) => k.id === kind)?.keyPrefixes ?? [];
    const others = PROVIDER_KINDS.flatMap((k) => k.keyPrefixes).filter((p) => !own.includes(p as never));
    const isKey = (token: string) => own.some((p) => token.startsWith(p)) && !others.some((p) => p.length > 3 && token.startsWith(p) && !own.some((o) => o.length >= p.length && token.startsWith(o)));
    const shaped = lines.map((line) => (line.match(/(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{8,}/g) ?? []).filter(isKey));
    const unrecognised = lines.flatMap((line, i) => (shaped[i].length === 0 && /[A-Za-z0-9]{12,}/.test(line) ? [i + 1] : []));
    return { keys: shaped.flat(), unrecognised };
  }

  /**
   * A write committed to `providerId`'s keys or to the provider: like the backend, it gets the
   * next generation, which `llmConfig:changed` carries (and a key command answers).
   */
  function emit(providerId: string): number {
    generation += 1;
    const payload = { providerId, generation };
    if (!emitting) return generation;
    // like Tauri: delivered asynchronously, after the command answered or around it
    queueMicrotask(() => {
      for (const listener of listeners.get('llmConfig:changed') ?? []) listener({ event: 'llmConfig:changed', payload });
    });
    return generation;
  }

  function add(providerId: string, secret: string, extra: Partial<ApiKey> = {}): ApiKey {
    const key = {
      id: `key-${nextId++}`,
      providerId,
      label: null,
      apiKeyPreview: preview(secret),
      isEnvRef: secret.startsWith('$'),
      enabled: true,
      weight: 1,
      sortOrder: byProvider(providerId).length,
      disabledReason: null,
      disabledAt: null,
      createdAt: clock,
      updatedAt: clock,
      rpmLimit: null,
      maxConcurrent: null,
      quotaGroup: null,
      secret,
      ...extra,
    };
    keys.push(key);
    return publicKey(key);
  }

  const findChat = (id: string) => {
    const chat = chats.find((c) => c.id === id);
    if (!chat) throw backendError('not_found', `chat "${id}" does not exist`, undefined, { kind: 'notFound', what: 'chat' });
    return chat;
  };

  function saveMessage(chatId: string, fields: Partial<Message>): Message {
    const message: Message = {
      id: `msg-${nextId++}`,
      chatId,
      role: 'assistant',
      content: '',
      status: 'complete',
      error: null,
      errorCode: null,
      errorDetails: null,
      keyLabel: null,
      providerKey: false,
      createdAt: clock,
      usage: null,
      attachments: [],
      ...fields,
    };
    messages.push(message);
    const chat = findChat(chatId);
    chat.updatedAt = ++clock;
    return message;
  }

  function addChat(fields: Partial<Chat> = {}): Chat {
    const chat: Chat = { id: `chat-${nextId++}`, title: 'New chat', providerId: 'openai', model: 'gpt-4o-mini', systemPrompt: null, createdAt: clock, updatedAt: ++clock, ...fields };
    chats.push(chat);
    return structuredClone(chat);
  }

  async function send({ request, onEvent: channel }: HandlerArgs<'chat:send'>): Promise<Message> {
    const { chatId, content, edit = false } = request;
    const attached = (request.attachments ?? []).map(({ id, name }) => ({ ...attachmentById(id), name }));
    const chat = findChat(chatId);
    if (chat.providerId === null) throw backendError('validation', "chatId: this chat's provider was deleted", [{ path: 'chatId', code: 'provider_deleted', message: "this chat's provider was deleted: choose another provider for it" }]);
    if (stops.has(chatId)) throw backendError('conflict', 'a reply is already being written in this chat', undefined, { kind: 'conflict', conflict: 'reply_in_progress' });
    const mine = () => messages.filter((m) => m.chatId === chatId);
    const lastQuestion = () => mine().filter((m) => m.role === 'user').at(-1);
    /** Drops the chat's messages after its last user message (the backend replaces them). */
    const dropAfterLastQuestion = () => {
      const question = lastQuestion();
      const from = question ? messages.indexOf(question) + 1 : 0;
      for (let i = messages.length - 1; i >= from; i -= 1) if (messages[i].chatId === chatId) messages.splice(i, 1);
    };
    const asking = content !== undefined || attached.length > 0;
    if ((!asking || edit) && !lastQuestion()) {
      throw backendError('validation', 'content: there is no message to answer: write one', [{ path: 'content', code: 'nothing_to_answer', message: 'there is no message to answer: write one' }]);
    }
    let stop!: () => void;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    stops.set(chatId, stop);
    const emit = (event: ChatEvent) => channel.onmessage(structuredClone(event));
    try {
      if (!asking) {
        dropAfterLastQuestion();
      } else if (edit) {
        const question = lastQuestion() as Message;
        question.content = content ?? question.content;
        dropAfterLastQuestion();
        emit({ type: 'userMessage', message: question });
      } else {
        const user = saveMessage(chatId, { role: 'user', content: content ?? '', attachments: attached });
        if (chat.title === 'New chat' && content) chat.title = content.split('\n')[0].slice(0, 48);
        emit({ type: 'userMessage', message: user });
      }
      const reply = await sendHandler({ chatId, content, edit, emit, stopped });
      const message = saveMessage(chatId, reply);
      emit({ type: 'finished', message });
      return message;
    } finally {
      stops.delete(chatId);
    }
  }

  const handlers: Handlers = {
    'llmConfig:addProvider': ({ apiKey, defaultModel, systemPrompt, name, baseUrl, models, onMyNetwork, ...fields }) => {
      checkLength('name', name.trim(), LIMITS.providerName.maxChars);
      checkBaseUrl(baseUrl, onMyNetwork);
      checkNameFree(providers, name);
      const listed = (models ?? []).map((m) => m.trim());
      checkDefaultModel(defaultModel?.trim(), listed);
      const created = provider(`prov-${nextId++}`, name.trim(), {
        ...fields,
        baseUrl: baseUrl.trim(),
        models: listed,
        builtin: false,
        sortOrder: providers.length,
        apiKeyPreview: apiKey ? preview(apiKey.trim()) : null,
        defaultModel: defaultModel?.trim() ?? null,
        systemPrompt: systemPrompt?.trim() ? systemPrompt : null,
        createdAt: clock,
        updatedAt: clock,
      });
      providers.push(created);
      emit(created.id);
      return shown(created);
    },
    'llmConfig:updateProvider': ({ id, apiKey, defaultModel, systemPrompt, confirmHostChange, onMyNetwork, ...changes }) => {
      checkSomething({ apiKey, defaultModel, systemPrompt, ...changes }, ['name', 'kind', 'baseUrl', 'apiKey', 'models', 'defaultModel', 'systemPrompt']);
      const found = providers.find((p) => p.id === id);
      if (!found) throw providerNotFound(id);
      checkBaseUrl(changes.baseUrl !== undefined && changes.baseUrl.trim() !== found.baseUrl ? changes.baseUrl : undefined, onMyNetwork);
      if (changes.name !== undefined) checkNameFree(providers, changes.name, id);
      // Keys go to a new origin only when the update says the user agreed (the backend's rule).
      if (changes.baseUrl !== undefined && !sameOrigin(changes.baseUrl, found.baseUrl) && !confirmHostChange) {
        const providerKey = apiKey === undefined ? found.apiKeyPreview : apiKey === '' ? null : preview(apiKey.trim());
        const named = byProvider(id).map((k) => k.label ?? k.apiKeyPreview);
        if (providerKey) named.push(`the provider key ${providerKey}`);
        if (named.length > 0) {
          const message = `changing the address from ${found.baseUrl} to ${changes.baseUrl} would send ${named.length} key(s) there (${named.join(', ')}); confirm the change`;
          throw backendError('validation', `baseUrl: ${message}`, [{ path: 'baseUrl', code: 'host_change', message }], {
            kind: 'hostChange',
            from: found.baseUrl,
            to: changes.baseUrl,
            keys: named,
          });
        }
      }
      Object.assign(found, changes);
      if (apiKey !== undefined) found.apiKeyPreview = apiKey === '' ? null : preview(apiKey);
      if (defaultModel !== undefined) found.defaultModel = defaultModel === '' ? null : defaultModel;
      if (systemPrompt !== undefined) found.systemPrompt = systemPrompt.trim() === '' ? null : systemPrompt;
      emit(found.id);
      return shown(found);
    },
    'app:getAlerts': () => ({
      notifications: notificationsDown === null ? { state: 'available' as const } : { state: 'unavailable' as const, detail: notificationsDown },
      recent: [...recentAlerts],
    }),
    'app:testNotification': ({ title, body }) => {
      if (title.trim() === '') throw backendError('validation', 'title: blank', [{ path: 'title', code: 'blank', message: 'blank' }]);
      if (notificationsDown !== null) return { state: 'unavailable' as const, detail: notificationsDown };
      notifications.push({ title, body });
      return { state: 'available' as const };
    },
    'app:notify': ({ title, body }) => {
      if (title.trim() === '') throw backendError('validation', 'title: blank', [{ path: 'title', code: 'blank', message: 'blank' }]);
      if (settings.notifyKeysLost) notifications.push({ title, body });
      return null;
    },
    'llmConfig:deleteProvider': ({ id }) => {
      const index = providers.findIndex((p) => p.id === id);
      if (index < 0) throw providerNotFound(id);
      providers.splice(index, 1);
      const doomed = byProvider(id);
      for (const key of doomed) keys.splice(keys.indexOf(key), 1);
      for (const chat of chats) if (chat.providerId === id) chat.providerId = null;
      emit(id);
      return { id, deletedKeys: doomed.length };
    },
    'llmConfig:testApiKey': ({ id }) => {
      const key = find(id);
      const result = keyTests.get(id) ?? { ok: true, status: 200, problem: null, message: 'ok', latencyMs: 42 };
      // Refused as the key's, the key is disabled, as after a chat's confirmed refusal.
      if (result.problem?.kind === 'refused' && (result.status === 401 || result.status === 403) && key.enabled) {
        Object.assign(key, { enabled: false, disabledReason: `HTTP ${result.status}`, disabledAt: clock });
        emit(key.providerId);
      }
      return result;
    },
    'llmConfig:listModelsFor': ({ baseUrl, onMyNetwork }) => {
      checkBaseUrl(baseUrl, onMyNetwork);
      const script = unsavedModelLists.get(baseUrl.trim());
      if (script && 'error' in script) throw script.error;
      return { models: script?.models ?? [], fetchedAt: clock, cached: false };
    },
    'app:getPreferences': () => preferences,
    'app:setPreferences': (changes) => {
      checkSomething(changes, ['theme', 'language', 'page', 'provider']);
      const choices: Record<string, readonly string[]> = {
        theme: ['system', 'light', 'dark'],
        language: ['system', 'en', 'zh', 'ja', 'ru'],
        page: ['chat', 'usage', 'settings/providers', 'settings/general', 'settings/localApi', 'settings/team', 'settings/about'],
      };
      for (const [field, allowed] of Object.entries(choices)) {
        const value = (changes as Record<string, unknown>)[field];
        if (value !== undefined && !allowed.includes(String(value))) {
          const expected = `one of ${allowed.map((a) => `\`${a}\``).join(', ')}`;
          const message = `must be ${expected}, got \`${String(value)}\``;
          throw backendError('validation', `${field}: ${message}`, [{ path: field, code: 'wrong_type', params: { expected, got: `\`${String(value)}\`` }, message }]);
        }
      }
      checkBytes('provider', changes.provider, LIMITS.id.maxBytes);
      preferences = { ...preferences, ...changes, ...(changes.provider !== undefined ? { provider: changes.provider.trim() } : {}) };
      return preferences;
    },
    'llmConfig:listModels': async ({ providerId, refresh }) => {
      if (!providers.some((p) => p.id === providerId)) throw providerNotFound(providerId);
      const script = modelLists.get(providerId);
      if (script && 'error' in script) throw script.error;
      const cached = modelCache.get(providerId);
      if (cached && !refresh) return { ...cached, cached: true };
      if (script?.gate) await script.gate;
      const list = { models: script?.models ?? [], fetchedAt: clock, cached: false };
      modelCache.set(providerId, list);
      return list;
    },
    'chat:list': () => [...chats].sort((a, b) => b.updatedAt - a.updatedAt),
    'chat:create': ({ providerId, model, title, systemPrompt }) => {
      checkLength('title', title?.trim(), LIMITS.chatTitle.maxChars);
      const p = providers.find((x) => x.id === providerId);
      if (!p) throw providerNotFound(providerId);
      const prompt = systemPrompt === undefined ? p.systemPrompt : systemPrompt.trim() === '' ? null : systemPrompt;
      return addChat({ providerId: p.id, model: model?.trim() ?? p.defaultModel ?? p.models[0], title: title?.trim() ?? 'New chat', systemPrompt: prompt });
    },
    'chat:update': ({ id, systemPrompt, title, model, ...changes }) => {
      checkSomething({ systemPrompt, title, model, ...changes }, ['title', 'providerId', 'model', 'systemPrompt']);
      checkLength('title', title?.trim(), LIMITS.chatTitle.maxChars);
      const chat = findChat(id);
      Object.assign(chat, changes, { updatedAt: ++clock });
      if (title !== undefined) chat.title = title.trim();
      if (model !== undefined) chat.model = model.trim();
      if (systemPrompt !== undefined) chat.systemPrompt = systemPrompt.trim() === '' ? null : systemPrompt;
      return chat;
    },
    'chat:search': ({ query }) => {
      const needle = query.trim().toLowerCase();
      if (!needle) return [];
      return [...chats]
        .sort((a, b) => b.updatedAt - a.updatedAt)
        .flatMap((chat) => {
          const matching = messages.filter((m) => m.chatId === chat.id && m.content.toLowerCase().includes(needle));
          const inTitle = chat.title.toLowerCase().includes(needle);
          if (!inTitle && matching.length === 0) return [];
          const first = matching[0];
          const at = first ? first.content.toLowerCase().indexOf(needle) : -1;
          const snippet = first
            ? { messageId: first.id, before: first.content.slice(0, at), matched: first.content.slice(at, at + needle.length), after: first.content.slice(at + needle.length) }
            : null;
          return [{ chat: structuredClone(chat), inTitle, snippet, messageCount: matching.length }];
        });
    },
    'chat:exportMarkdown': async ({ chatId }) => {
      findChat(chatId);
      const rows = messages.filter((m) => m.chatId === chatId).length;
      exports.push(chatId);
      if (exportAnswer && 'error' in exportAnswer) throw exportAnswer.error;
      return { path: exportAnswer ? exportAnswer.path : `/home/me/${chatId}.md`, rows };
    },
    'chat:delete': ({ id }) => {
      const chat = findChat(id);
      chats.splice(chats.indexOf(chat), 1);
      stops.get(id)?.();
      return { id };
    },
    'chat:close': ({ id }) => {
      findChat(id);
      return { id };
    },
    'chat:getMessages': ({ chatId }) => {
      findChat(chatId);
      return messages.filter((m) => m.chatId === chatId);
    },
    'chat:stop': ({ chatId }) => {
      findChat(chatId);
      const stop = stops.get(chatId);
      stop?.();
      return { chatId, stopped: Boolean(stop) };
    },
    'chat:send': send,
    'chat:attach': ({ name, data }) => attachHandler(name, data),
    'chat:attachmentData': ({ id, thumbnail }) => {
      const found = attachmentById(id);
      return { mediaType: found.mediaType, data: thumbnail ? `thumb-${id}` : `full-${id}` };
    },
    'app:getStatus': () => appStatus,
    'llmConfig:getProviders': () => providers.map(shown),
    'llmConfig:getApiKeys': ({ providerId }) => byProvider(providerId).map(publicKey),
    'llmConfig:getPoolStatus': ({ providerId }) => ({
      providerId,
      now: clock,
      keys: byProvider(providerId).map((k) => ({
        id: k.id,
        label: k.label,
        quotaGroup: k.quotaGroup,
        state: k.enabled ? 'active' : 'disabled',
        coolingUntil: null,
        consecutiveErrors: 0,
        lastError: null,
        lastUsedAt: ledger.lastAttemptOf(k.id),
        requestCount: 0,
        failureCount: 0,
        budgets: [],
        inFlight: 0,
        nextProbeAt: null,
        unsetVar: null,
        balance: null,
        windows: null,
        expiresAt: null,
        ...live.get(k.id),
      })),
    }),
    'llmConfig:addApiKey': ({ providerId, apiKey, label, weight, enabled, rpmLimit, maxConcurrent, quotaGroup }) => {
      checkLength('quotaGroup', quotaGroup, LIMITS.quotaGroup.maxChars);
      checkRange('weight', weight, LIMITS.weight);
      checkLimits({ rpmLimit, maxConcurrent });
      if (keys.some((k) => k.providerId === providerId && k.secret === apiKey.trim())) {
        throw backendError('conflict', 'this key is already in the pool', undefined, { kind: 'conflict', conflict: 'duplicate_key' });
      }
      const key = add(providerId, apiKey.trim(), {
        label: labelOf(label),
        weight: weight ?? LIMITS.weight.default,
        enabled: enabled ?? true,
        rpmLimit: rpmLimit ?? null,
        maxConcurrent: maxConcurrent ?? null,
        quotaGroup: labelOf(quotaGroup),
      });
      return { ...key, generation: emit(providerId) };
    },
    'llmConfig:updateApiKey': ({ id, apiKey, label, limits, quotaGroup, ...changes }) => {
      checkSomething({ apiKey, label, limits, quotaGroup, ...changes }, ['label', 'apiKey', 'enabled', 'weight', 'limits', 'quotaGroup']);
      checkRange('weight', changes.weight, LIMITS.weight);
      if (limits) {
        checkRange('limits.rpmLimit', limits.rpmLimit, LIMITS.rpmLimit);
        checkRange('limits.maxConcurrent', limits.maxConcurrent, LIMITS.maxConcurrent);
      }
      checkLength('quotaGroup', quotaGroup, LIMITS.quotaGroup.maxChars);
      const key = find(id);
      if (apiKey !== undefined && keys.some((k) => k.id !== id && k.providerId === key.providerId && k.secret === apiKey.trim())) {
        throw backendError('conflict', 'this key is already in the pool', undefined, { kind: 'conflict', conflict: 'duplicate_key' });
      }
      Object.assign(key, changes, { updatedAt: clock });
      if (limits) Object.assign(key, { rpmLimit: limits.rpmLimit ?? null, maxConcurrent: limits.maxConcurrent ?? null });
      if (label !== undefined) key.label = labelOf(label);
      if (quotaGroup !== undefined) key.quotaGroup = labelOf(quotaGroup);
      if (apiKey !== undefined) Object.assign(key, { secret: apiKey.trim(), apiKeyPreview: preview(apiKey.trim()), isEnvRef: apiKey.startsWith('$') });
      return { ...publicKey(key), generation: emit(key.providerId) };
    },
    'llmConfig:setKeyLimits': ({ id, rpmLimit, maxConcurrent }) => {
      checkLimits({ rpmLimit, maxConcurrent });
      const key = find(id);
      Object.assign(key, { rpmLimit: rpmLimit ?? null, maxConcurrent: maxConcurrent ?? null, updatedAt: clock });
      return { ...publicKey(key), generation: emit(key.providerId) };
    },
    'llmConfig:toggleApiKey': ({ id, enabled }) => {
      const key = find(id);
      key.enabled = enabled;
      if (key.enabled) key.disabledReason = null;
      return { ...publicKey(key), generation: emit(key.providerId) };
    },
    'llmConfig:deleteApiKey': ({ id }) => {
      const key = find(id);
      keys.splice(keys.indexOf(key), 1);
      return { id, generation: emit(key.providerId) };
    },
    'llmConfig:reorderApiKeys': ({ providerId, ids }) => {
      for (const [index, id] of ids.entries()) find(id).sortOrder = index;
      const written = emit(providerId);
      return { keys: byProvider(providerId).map(publicKey), generation: written };
    },
    'llmConfig:previewKeyImport': ({ providerId, text, reading }) => {
      const provider = providers.find((p) => p.id === providerId);
      if (!provider) throw providerNotFound(providerId);
      const { keys: found, unrecognised } = extractKeys(text, provider.kind, reading ?? 'shapes');
      if (found.length === 0) throw backendError('validation', 'text: no keys found', [{ path: 'text', code: 'no_keys_found', message: 'no API key found in the text' }]);
      const pool = new Set(byProvider(providerId).map((k) => k.secret));
      const seen = new Set<string>();
      let duplicatesInPaste = 0;
      let duplicatesInPool = 0;
      // Each distinct key's position among those the text gives: the same in every preview of it.
      const fresh: { secret: string; index: number }[] = [];
      for (const secret of found) {
        if (seen.has(secret)) {
          duplicatesInPaste++;
          continue;
        }
        if (pool.has(secret)) duplicatesInPool++;
        else fresh.push({ secret, index: seen.size });
        seen.add(secret);
      }
      const importId = `import-${nextId++}`;
      imports.set(importId, { providerId, secrets: fresh });
      return {
        importId,
        found: found.length,
        new: fresh.map(({ secret, index }) => ({ index, preview: preview(secret) })),
        duplicatesInPaste,
        duplicatesInPool,
        unrecognisedLines: unrecognised,
      };
    },
    'llmConfig:startKeyImport': ({ importId, weight, labelPrefix, quotaGroup, validate, keepRejectedDisabled, leftOut }) => {
      checkRange('weight', weight, LIMITS.weight);
      checkLength('quotaGroup', quotaGroup, LIMITS.quotaGroup.maxChars);
      const pending = imports.get(importId);
      if (!pending) throw backendError('not_found', `import "${importId}" does not exist`, undefined, { kind: 'notFound', what: 'import' });
      imports.delete(importId);
      const previewed = { ...pending, secrets: pending.secrets.filter(({ index }) => !leftOut?.includes(index)).map(({ secret }) => secret) };
      const progress: KeyImportProgress = {
        importId,
        providerId: previewed.providerId,
        total: previewed.secrets.length,
        checked: 0,
        valid: 0,
        invalid: 0,
        rateLimited: 0,
        unreachable: 0,
        added: 0,
        duplicates: 0,
        state: 'running',
      };
      running.set(importId, { progress, secrets: previewed.secrets, settings: { weight: weight ?? 1, labelPrefix, quotaGroup, validate, keepRejectedDisabled }, next: 0 });
      return { ...progress };
    },
    'llmConfig:cancelKeyImport': ({ importId }) => {
      const run = running.get(importId);
      if (!run) throw backendError('not_found', `import "${importId}" does not exist`, undefined, { kind: 'notFound', what: 'import' });
      if (run.progress.state === 'running') run.progress.state = 'cancelled';
      emitEvent('llmConfig:keyImportProgress', { ...run.progress });
      return { ...run.progress };
    },
    'llmConfig:updateApiKeys': ({ ids, enabled, weight, quotaGroup }) => {
      checkRange('weight', weight, LIMITS.weight);
      checkLength('quotaGroup', quotaGroup, LIMITS.quotaGroup.maxChars);
      const changed = ids.map(find);
      for (const key of changed) {
        if (enabled !== undefined) {
          key.enabled = enabled;
          if (enabled) key.disabledReason = null;
        }
        if (weight !== undefined) key.weight = weight;
        if (quotaGroup !== undefined) key.quotaGroup = labelOf(quotaGroup);
        key.updatedAt = clock;
      }
      const written = changed.length > 0 ? emit(changed[0].providerId) : generation;
      return { keys: changed.map(publicKey), generation: written };
    },
    'llmConfig:deleteApiKeys': ({ ids }) => {
      const gone = ids.map(find);
      for (const key of gone) keys.splice(keys.indexOf(key), 1);
      const written = gone.length > 0 ? emit(gone[0].providerId) : generation;
      return { deleted: gone.length, generation: written };
    },
    'llmConfig:testApiKeys': ({ ids }) =>
      ids.map((id) => {
        find(id);
        return keyTests.get(id) ?? { ok: true, status: 200, problem: null, message: 'ok', latencyMs: 12 };
      }),
    'llmConfig:exportApiKeys': ({ ids }) => {
      ids.forEach(find);
      return { path: keyExportPath, count: keyExportPath === null ? 0 : ids.length };
    },
    'llmConfig:resetCooldown': ({ id }) => {
      const key = find(id);
      live.delete(id);
      // the pool's memory only, but told (and counted) as the backend does
      return { id, generation: emit(key.providerId) };
    },
    'settings:get': () => settings,
    'settings:update': (changes) => {
      if (Object.keys(changes).length === 0) throw backendError('validation', 'nothing to change', [{ path: '', code: 'nothing_to_change', params: { fields: ['maxWaitSeconds', 'bindingIdleMinutes', 'usageRetentionDays', 'proxy', 'notifyKeysLost'] }, message: 'nothing to change' }]);
      checkProxy(changes.proxy);
      checkRange('maxWaitSeconds', changes.maxWaitSeconds, LIMITS.maxWaitSeconds);
      checkRange('bindingIdleMinutes', changes.bindingIdleMinutes, LIMITS.bindingIdleMinutes);
      checkRange('usageRetentionDays', changes.usageRetentionDays, LIMITS.usageRetentionDays);
      settings = { ...settings, ...changes };
      return settings;
    },
    'localApi:getStatus': () => ({ ...localApi, served: served() }),
    // Like the backend: the port and the choice are kept; a token only on the first enable; a
    // (re)start on a port another program holds is reported, not fatal; counts start at zero.
    'localApi:configure': ({ enabled, port }) => {
      checkRange('port', port, LIMITS.port);
      const at = port ?? localApi.port;
      const token = enabled && localTokens.length === 0 ? newLocalToken() : undefined;
      const busy = enabled && busyPorts.has(at);
      // Like the backend: a running endpoint asked to move to a port that is taken stays where it
      // is, and says why it did not move.
      if (busy && localApi.running && token === undefined) {
        localApi = { ...localApi, enabled, error: { kind: 'portInUse', port: at } };
        return { ...localApi, served: served() };
      }
      localApi = {
        enabled,
        running: enabled && !busy,
        address: enabled && !busy ? `http://127.0.0.1:${at}` : null,
        port: at,
        requests: 0,
        inFlight: 0,
        failed: 0,
        error: busy ? { kind: 'portInUse', port: at } : null,
      };
      return token === undefined ? { ...localApi, served: served() } : { ...localApi, served: served(), token };
    },
    'localApi:regenerateToken': () => ({ token: newLocalToken() }),
    'team:getStatus': () => team,
    // Like the backend: the URL, the name and the secret are checked (by the team crate's rules)
    // before anything changes; without a secret the kept one is used; the URL is kept without
    // its password.
    'team:connect': ({ redisUrl, team: name, secret }) => {
      const issue = (path: string, code: Issue['code'], params?: Issue['params']) => backendError('validation', `${path}: ${code}`, [{ path, code, ...(params ? { params } : {}), message: code }]);
      const url = /^(rediss?:\/\/)(?:([^:@/]*)(?::([^@/]*))?@)?([^/?#]+.*)$/.exec(redisUrl.trim());
      if (!url) throw issue('redisUrl', 'bad_redis_url');
      if (!/^[A-Za-z0-9._-]{1,64}$/.test(name)) throw issue('team', 'bad_team_name');
      if (secret !== undefined && !/^[0-9a-fA-F]{64}$/.test(secret.trim())) throw issue('secret', 'bad_team_secret', { count: secret.trim().length });
      if (secret === undefined && teamSecret === null) throw issue('secret', 'required');
      teamSecret = secret?.trim() ?? teamSecret;
      const bare = `${url[1]}${url[2] ? `${url[2]}@` : ''}${url[4]}`;
      team = { state: 'connecting', reason: null, redisUrl: bare, hasPassword: Boolean(url[3]), team: name, members: 0, lastChangeAt: null, since: Date.now(), secret: 'keychain' };
      return team;
    },
    'team:disconnect': () => {
      team = { ...team, state: 'off', reason: null, members: 0, since: Date.now() };
      return team;
    },
    'team:generateSecret': () => {
      const secret = (teamSecrets.length + 1).toString(16).padStart(2, '0').repeat(32);
      teamSecrets.push(secret);
      return { secret };
    },
    ...ledger.handlers,
    ...localApiExtras.handlers,
  };

  return {
    calls,
    keys: (providerId = 'openai') => byProvider(providerId).map(publicKey),
    add,
    /** The pool's live view of a key: cooling, statistics. */
    setLive: (id: string, status: Partial<KeyStatus>) => live.set(id, status),
    setClock: (ms: number) => (clock = ms),
    /** The backend's clock now (`PoolStatus.now`, the ledger's default end). */
    now: () => clock,
    setAppStatus: (status: AppStatus) => (appStatus = status),
    /** The desktop notifications shown so far. */
    notifications: () => notifications,
    /** The next call of `command` rejects with `error` (a backend `{ code, message, issues }`). */
    rejectNext: (command: keyof Commands, error: IpcError) => rejections.set(command, error),
    stopEmitting: () => (emitting = false),
    providers: () => providers,
    addChat,
    /** Saves a message directly (history for a chat). */
    saveMessage,
    chats: () => chats,
    messages: (chatId: string) => messages.filter((m) => m.chatId === chatId),
    /** How the next replies are written: events and the saved assistant message. */
    onSend: (handler: SendHandler) => (sendHandler = handler),
    /** Scripts `chat:attach`: an attachment to answer, or an error to refuse with. */
    onAttach: (handler: (name: string, data: string) => Attachment | { error: IpcError }) => (attachScript = handler),
    /** Every file attached so far. */
    attachments: () => structuredClone(attachments),
    setKeyTest: (id: string, result: KeyTestResult) => keyTests.set(id, result),
    /** How an import's validation judges each key (valid unless set). */
    setImportVerdict: (verdict: (secret: string) => 'valid' | 'invalid' | 'rateLimited' | 'unreachable') => (importVerdict = verdict),
    /**
     * Moves the running import `importId` on by `count` keys (checked, and saved when valid or
     * kept), emitting its progress and `llmConfig:changed`; done after the last key.
     */
    advanceImport: (importId: string, count: number) => {
      const run = running.get(importId);
      if (run?.progress.state !== 'running') throw new Error(`no running import ${importId}`);
      const { progress, settings } = run;
      for (const secret of run.secrets.slice(run.next, run.next + count)) {
        run.next++;
        const verdict = settings.validate ? importVerdict(secret) : 'valid';
        if (settings.validate) {
          progress.checked++;
          progress[verdict]++;
        }
        if (verdict === 'valid' || settings.keepRejectedDisabled) {
          const label = settings.labelPrefix ? `${settings.labelPrefix} #${run.next}` : null;
          add(progress.providerId, secret, { label, weight: settings.weight, quotaGroup: labelOf(settings.quotaGroup), enabled: verdict === 'valid', disabledReason: verdict === 'valid' ? null : verdict });
          progress.added++;
        }
      }
      if (run.next >= run.secrets.length) progress.state = 'done';
      emit(progress.providerId);
      emitEvent('llmConfig:keyImportProgress', { ...progress });
      return { ...progress };
    },
    /** Where the next key exports are saved (null: the user cancels the save dialog). */
    onKeyExport: (path: string | null) => (keyExportPath = path),
    /** What the provider's models endpoint answers next (a list, after `gate` if given, or a rejection). */
    setModels: (providerId: string, answer: { models: string[]; gate?: Promise<void> } | { error: IpcError }) => {
      modelLists.set(providerId, answer);
      modelCache.delete(providerId);
    },
    /** The chats exported, in order. */
    exports: () => exports,
    /** What the next exports answer: the path saved to (null: the dialog was cancelled), or an error. */
    onExport: (answer: { path: string | null } | { error: IpcError }) => (exportAnswer = answer),
    /** URLs opened in the system browser through the opener plugin. */
    opened: () => opened,
    /** The local API as the backend has it; `setLocalApi` changes it (e.g. counts going up). */
    localApi: () => localApi,
    setLocalApi: (changes: Partial<Omit<LocalApiStatus, 'served'>>) => (localApi = { ...localApi, ...changes }),
    /** What the models endpoint at `baseUrl` of a provider not saved yet answers (a list, or a rejection). */
    setUnsavedModels: (baseUrl: string, answer: { models: string[] } | { error: IpcError }) => unsavedModelLists.set(baseUrl, answer),
    /** The preferences as kept in the data directory; `setPreferences` stands in for an earlier run's. */
    preferences: () => preferences,
    setPreferences: (kept: Partial<Preferences>) => (preferences = { ...preferences, ...kept }),
    /** The team as the backend has it; `setTeam` changes it (connected, members, a change received) and emits `team:changed`. */
    team: () => team,
    teamSecret: () => teamSecret,
    setTeam: (changes: Partial<TeamStatus>) => {
      team = { ...team, ...changes };
      queueMicrotask(() => {
        for (const listener of listeners.get('team:changed') ?? []) listener({ event: 'team:changed', payload: null });
      });
    },
    /** The pool lost keys: emits `pool:alert` as the backend does (only while `notifyKeysLost` is on). */
    alert: (alert: PoolAlert) => {
      recentAlerts.unshift({ at: clock, alert });
      // A key disabled is a write to the provider's keys, told as the backend's write path tells it.
      if (alert.kind === 'keyDisabled') emit(alert.providerId);
      if (settings.notifyKeysLost) emitEvent('pool:alert', alert);
    },
    /** No notification service answers from now on (`detail`: what the system said); null: one does again. */
    notificationsDown: (detail: string | null) => {
      notificationsDown = detail;
    },
    /** Another program listens on `port`: starting the local API there fails. */
    occupyPort: (port: number) => busyPorts.add(port),
    /** Every local API token handed out, oldest first. */
    localTokens: () => localTokens,
    /** The stored preferences (`settings:get`). */
    settings: () => settings,
    /** The usage ledger: `setAttempts`, the prices, the CSV exports and what they answer. */
    usage: ledger,
    /** The local API's routes and coding agents: what they hold, and a test's changes to them. */
    localApiExtras,
    emit,
    /** The arguments `command` was called with, in order. */
    callsOf: <C extends keyof Commands>(command: C) => calls.filter((c) => c.command === command).map((c) => c.args as HandlerArgs<C>),
    async invoke(command: string, args: Record<string, unknown> = {}) {
      calls.push({ command, args });
      if (command === 'plugin:opener|open_url') {
        // The opener plugin, scoped to http(s) like the real capability (no chosen program).
        const url = String(args.url);
        if (!/^https?:\/\//.test(url) || (args.with !== undefined && args.with !== null)) throw `Not allowed to open url ${url}`;
        opened.push(url);
        return null;
      }
      for (const [field, value] of Object.entries(args)) {
        if (value === null || value === undefined) throw backendError('validation', `${field}: null`, [{ path: field, code: 'not_null', message: 'must not be null' }]);
      }
      const rejection = rejections.get(command);
      if (rejection) {
        rejections.delete(command);
        throw rejection;
      }
      // The mocked invoke is untyped; past this point each handler sees its command's types.
      const handler = handlers[command as keyof Commands] as ((args: Record<string, unknown>) => unknown) | undefined;
      if (!handler) throw backendError('internal', `unknown command ${command}`);
      const result = handler(args);
      // Only chat:send answers later; the others answer as before, without an extra tick.
      return structuredClone(result instanceof Promise ? await result : result);
    },
    async listen(event: string, handler: Listener) {
      const set = listeners.get(event) ?? new Set();
      set.add(handler);
      listeners.set(event, set);
      return () => set.delete(handler);
    },
  };
}

export type FakeBackend = ReturnType<typeof createFakeBackend>;
