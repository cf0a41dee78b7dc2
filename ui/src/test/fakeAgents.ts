import type { Agent, AgentFile, AgentState, ErrorCode, ErrorDetails, IpcError, Issue, NamedToken, Provider, Resolution, Route, RouteInput, RouteTest, ServedModel, TokenUsage, UsageBySource } from '../ipc/bindings';
import { LIMITS } from '../ipc/bindings';
import type { Handlers } from './fakeBackend';

/*
 * The fake backend's routes and coding agents, behind `localApi:getRoutes`, `setRoutes`,
 * `testRoute`, `getAgents`, `connectAgent` and `disconnectAgent`, with the backend's rules: a
 * route's glob, provider and model are checked (an issue each, at `routes[i].field`); Connect
 * needs the local API on and its token (given, or held by a connected agent); a file a test
 * marks malformed stops Connect, one marked changed stops Disconnect unless forced.
 */

type BackendError = (code: ErrorCode, message: string, issues?: Issue[], details?: ErrorDetails) => IpcError;

interface Deps {
  fail: BackendError;
  /** The providers as the UI is shown them (with `answerable`). */
  providers: () => Provider[];
  localApi: () => { enabled: boolean; port: number };
  /** Every token the local API handed out, the current one last. */
  localTokens: () => string[];
  served: () => ServedModel[];
  now: () => number;
}

const DEFAULTS: Record<Agent, { model: string; api: ServedModel['api']; files: string[] }> = {
  claudeCode: { model: 'claude-opus-5-5', api: 'anthropic', files: ['/home/user/.claude/settings.json'] },
  codex: { model: 'gpt-6.1-sol', api: 'openai', files: ['/home/user/.codex/config.toml'] },
  geminiCli: { model: 'gemini-3.1-pro-preview', api: 'gemini', files: ['/home/user/.gemini/settings.json', '/home/user/.gemini/.env'] },
};

const globMatches = (pattern: string, model: string) =>
  new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`).test(model);

/** One agent as the fake keeps it. */
interface FakeAgent {
  connectedAt: number | null;
  /** What Connect set (a connected agent's files set nothing else). */
  model: string | null;
  /** The token its files hold. */
  token: string | null;
  /** Files changed since Connect (a test's doing). */
  changed: string[];
  /** A file Connect cannot merge (a test's doing). */
  malformed: AgentFile | null;
  lastCall: number | null;
}

export function createFakeLocalApiExtras({ fail, providers, localApi, localTokens, served, now }: Deps) {
  let routes: RouteInput[] = [];
  const agents = new Map<Agent, FakeAgent>(
    (Object.keys(DEFAULTS) as Agent[]).map((agent) => [agent, { connectedAt: null, model: null, token: null, changed: [], malformed: null, lastCall: null }]),
  );
  /** What `usage:getBySource` answers (every source at zero until a test sets it). */
  let bySource: UsageBySource | null = null;
  /** The named tokens, by name as made. */
  const named: NamedToken[] = [];
  /** What `usage:getByToken` answers (nothing until a test sets it). */
  let byToken: TokenUsage[] = [];
  /** What trying a route answers, per provider id (else the provider's word "OK", or no keys). */
  const tests = new Map<string, RouteTest['outcome']>();

  const issue = (path: string, code: Issue['code']): Issue => ({ path, code, message: code });
  const currentToken = () => localTokens().at(-1) ?? null;

  function views(): Route[] {
    return routes.map((route) => {
      const provider = providers().find((p) => p.id === route.provider);
      return { ...route, providerName: provider?.name ?? null, state: !provider ? 'unknownProvider' : provider.answerable ? 'ready' : 'noUsableKey' };
    });
  }

  function resolve(agent: Agent, model: string): Resolution {
    for (const route of routes) {
      const provider = providers().find((p) => p.id === route.provider);
      if (provider && globMatches(route.model, model)) {
        return { kind: 'routed', provider: provider.name, model: route.toModel, via: { kind: 'route', glob: route.model }, usable: provider.answerable };
      }
    }
    const listed = served().find((m) => m.api === DEFAULTS[agent].api && m.model === model);
    if (listed) return { kind: 'routed', provider: listed.provider, model, via: { kind: 'listed' }, usable: true };
    const other = served().find((m) => m.model === model);
    return other ? { kind: 'otherApi', provider: other.provider } : { kind: 'unknown' };
  }

  function state(agent: Agent): AgentState {
    const a = agents.get(agent) as FakeAgent;
    const connected = a.connectedAt !== null;
    return {
      agent,
      files: DEFAULTS[agent].files,
      connection: connected ? { connectedAt: a.connectedAt as number, model: a.model, changed: a.changed } : null,
      pointsHere: connected,
      token: a.token === null ? 'none' : a.token === currentToken() ? 'current' : 'other',
      model: a.model,
      defaultModel: DEFAULTS[agent].model,
      resolution: resolve(agent, a.model ?? DEFAULTS[agent].model),
      lastCall: a.lastCall,
      problem: a.malformed,
    };
  }

  function overview() {
    const list = (Object.keys(DEFAULTS) as Agent[]).map(state);
    const tokenKnown = list.some((a) => a.connection !== null && a.token === 'current');
    return { agents: list, tokenKnown, address: `http://127.0.0.1:${localApi().port}` };
  }

  function checkRoutes(list: RouteInput[], path: (i: number, field: string) => string) {
    const issues: Issue[] = [];
    list.forEach((route, i) => {
      if (route.model.trim() === '') issues.push(issue(path(i, 'model'), 'blank'));
      else if (/[[\]{}\s]/.test(route.model.trim())) issues.push(issue(path(i, 'model'), 'bad_glob'));
      if (!providers().some((p) => p.id === route.provider)) issues.push(issue(path(i, 'provider'), 'unknown_provider'));
      if (route.toModel.trim() === '') issues.push(issue(path(i, 'toModel'), 'blank'));
    });
    if (issues.length > 0) throw fail('validation', `${issues.length} arguments are invalid`, issues);
  }

  const handlers: Handlers = {
    'localApi:getRoutes': () => views(),
    'localApi:setRoutes': ({ routes: list }) => {
      if (list.length > LIMITS.routes.maxItems) throw fail('validation', 'too many', [{ path: 'routes', code: 'too_long', params: { max: LIMITS.routes.maxItems }, message: 'too long' }]);
      checkRoutes(list, (i, field) => `routes[${i}].${field}`);
      routes = list.map((r) => ({ model: r.model.trim(), provider: r.provider, toModel: r.toModel.trim() }));
      return views();
    },
    'localApi:testRoute': ({ route }) => {
      checkRoutes([route], (_, field) => `route.${field}`);
      const provider = providers().find((p) => p.id === route.provider) as Provider;
      const outcome: RouteTest['outcome'] =
        tests.get(provider.id) ?? (provider.answerable ? { kind: 'answered', reply: 'OK', keyLabel: 'Key 1', latencyMs: 120 } : { kind: 'failed', error: { kind: 'noKeys', provider: provider.name } });
      return { provider: provider.name, model: route.toModel, outcome };
    },
    'usage:getBySource': ({ from, to }) => {
      if (from >= to) throw fail('validation', 'from: must be before `to`', [issue('from', 'range_order')]);
      const zero = { requests: 0, inputTokens: 0, cachedTokens: 0, outputTokens: 0, cachedShare: null };
      const every = [...(Object.keys(DEFAULTS) as Agent[]).map((agent) => ({ kind: 'agent' as const, agent })), { kind: 'chat' as const }, { kind: 'other' as const }];
      return bySource ?? { sources: every.map((source) => ({ source, ...zero })), drops: [] };
    },
    // Like the backend: a name is 1 to 64 of `A-Z a-z 0-9 . _ - @`, unique in any case; the
    // list never holds a token; a revoke of an unknown name is `not_found`.
    'localApi:listTokens': () => [...named].sort((a, b) => a.name.localeCompare(b.name)),
    'localApi:createToken': ({ name }) => {
      if (name === undefined) throw fail('validation', 'name: is required', [issue('name', 'required')]);
      if ([...name].length > LIMITS.tokenName.maxChars) {
        throw fail('validation', 'name: too long', [{ path: 'name', code: 'too_long', params: { max: LIMITS.tokenName.maxChars }, message: 'too long' }]);
      }
      const wanted = name.trim();
      if (wanted === '') throw fail('validation', 'name: blank', [issue('name', 'blank')]);
      if (!/^[A-Za-z0-9._@-]{1,64}$/.test(wanted)) throw fail('validation', 'name: bad', [issue('name', 'bad_token_name')]);
      if (named.some((t) => t.name.toLowerCase() === wanted.toLowerCase())) throw fail('validation', 'name: taken', [issue('name', 'token_name_taken')]);
      const token: NamedToken = { name: wanted, createdAt: now(), lastUsedAt: null, usable: true };
      named.push(token);
      return { ...token, token: `kp-local-named-${named.length}` };
    },
    'localApi:revokeToken': ({ name }) => {
      const index = named.findIndex((t) => t.name.toLowerCase() === name.trim().toLowerCase());
      if (index < 0) throw fail('not_found', `token "${name}" does not exist`, undefined, { kind: 'notFound', what: 'token' });
      named.splice(index, 1);
      return [...named].sort((a, b) => a.name.localeCompare(b.name));
    },
    'usage:getByToken': ({ from, to }) => {
      if (from >= to) throw fail('validation', 'from: must be before `to`', [issue('from', 'range_order')]);
      return byToken;
    },
    'localApi:getAgents': () => overview(),
    'localApi:connectAgent': ({ agent, token, model }) => {
      if (!localApi().enabled) throw fail('validation', 'the local API is off', [issue('', 'local_api_off')]);
      const known = overview().tokenKnown ? currentToken() : null;
      if (token !== undefined && token.trim() !== currentToken()) throw fail('validation', 'token: not the token', [issue('token', 'token_mismatch')]);
      if (token === undefined && known === null) throw fail('validation', 'token: required', [issue('token', 'token_required')]);
      const a = agents.get(agent) as FakeAgent;
      if (a.malformed) throw fail('conflict', `${a.malformed.path}: cannot be merged`, undefined, { kind: 'agentFile', file: a.malformed });
      agents.set(agent, { ...a, connectedAt: a.connectedAt ?? now(), model: model?.trim() ?? null, token: currentToken() });
      return overview();
    },
    'localApi:disconnectAgent': ({ agent, force }) => {
      const a = agents.get(agent) as FakeAgent;
      if (a.connectedAt === null) return overview();
      if (a.changed.length > 0 && force !== true) {
        throw fail('conflict', `${a.changed[0]}: changed since`, undefined, { kind: 'agentFile', file: { path: a.changed[0], problem: { kind: 'changed' } } });
      }
      agents.set(agent, { ...a, connectedAt: null, model: null, token: null, changed: [] });
      return overview();
    },
  };

  return {
    handlers,
    /** The routes as saved. */
    routes: () => routes,
    /** What `usage:getBySource` answers from now on. */
    setUsageBySource: (report: UsageBySource) => (bySource = report),
    /** What `usage:getByToken` answers from now on. */
    setUsageByToken: (lines: TokenUsage[]) => (byToken = lines),
    /** The named tokens as kept. */
    namedTokens: () => named,
    /** What trying a route to `providerId` answers from now on. */
    setRouteTest: (providerId: string, outcome: RouteTest['outcome']) => tests.set(providerId, outcome),
    /** Changes what the fake keeps of `agent`: a file changed or malformed, its last call. */
    setAgent: (agent: Agent, changes: Partial<FakeAgent>) => agents.set(agent, { ...(agents.get(agent) as FakeAgent), ...changes }),
    agent: (agent: Agent) => state(agent),
  };
}
