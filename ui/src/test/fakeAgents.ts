import type { Agent, AgentFile, AgentState, ErrorCode, ErrorDetails, IpcError, Issue, NamedToken, Provider, Resolution, Route, RouteInput, RouteTest, ServedModel, TokenUsage, UsageBySource } from '../ipc/bindings';
import { LIMITS } from '../ipc/bindings';
import type { Handlers } from './fakeBackend';

/*
 * The fake backend's routes and coding agents, behind `localApi:getRoutes`, `setRoutes`,
 * `testRoute`, `getAgents`, `connectAgent` and `disconnectAgent`, and the named tokens, with the
 * backend's rules: a route's glob, provider and model are checked (an issue each, at
 * `routes[i].field`); Connect needs the local API on and gives the agent a named token of its own
 * (kept when connected again, a new value with `newToken`; the key helper for Claude Code only),
 * Disconnect revokes it; a file a test marks malformed stops Connect, one marked changed stops
 * Disconnect unless forced, one marked readable by others is reported tightened.
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
  /** Its own token's name, while connected. */
  tokenName: string | null;
  keyHelper: boolean;
  /** Connect turned its folder trust off (Gemini CLI). */
  trustAllFolders: boolean;
  /** A file others can read (a test's doing), with its mode: Connect tightens it once. */
  readable: { path: string; mode: number } | null;
  /** Files changed since Connect (a test's doing). */
  changed: string[];
  /** A file Connect cannot merge (a test's doing). */
  malformed: AgentFile | null;
  lastCall: number | null;
}

export function createFakeLocalApiExtras({ fail, providers, localApi, localTokens, served, now }: Deps) {
  let routes: RouteInput[] = [];
  const agents = new Map<Agent, FakeAgent>(
    (Object.keys(DEFAULTS) as Agent[]).map((agent) => [
      agent,
      { connectedAt: null, model: null, token: null, tokenName: null, keyHelper: false, trustAllFolders: false, readable: null, changed: [], malformed: null, lastCall: null },
    ]),
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
  /** Every value each named token was given, by name (the last one serves). */
  const values = new Map<string, string[]>();
  let issued = 0;
  const servedValue = (name: string | null) => (name === null ? undefined : values.get(name)?.at(-1));
  const noRules = (): NamedToken['rules'] => ({ budget: null, budgetPeriod: null, requestsPerMinute: null, tokensPerMinute: null, maxInFlight: null, models: [], expiresAt: null });
  const noSpend = (): NamedToken['spent'] => ({ monthTokens: 0, monthUsd: 0, budgetUsed: null });
  const sortedTokens = () => [...named].sort((a, b) => a.name.localeCompare(b.name));
  const SLUGS: Record<Agent, string> = { claudeCode: 'claude-code', codex: 'codex', geminiCli: 'gemini-cli' };

  /** A new value for `name` (made, with `agent`, when there is no such token). */
  function issue_(name: string, agent: string | null): string {
    issued += 1;
    const value = `kp-local-named-${issued}`;
    if (!named.some((t) => t.name === name)) named.push({ name, createdAt: now(), lastUsedAt: null, usable: true, agent, rules: noRules(), spent: noSpend() });
    values.set(name, [...(values.get(name) ?? []), value]);
    return value;
  }

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
      connection: connected
        ? { connectedAt: a.connectedAt as number, model: a.model, token: a.tokenName, keyHelper: a.keyHelper, trustAllFolders: a.trustAllFolders, changed: a.changed }
        : null,
      pointsHere: connected,
      token: a.token === null ? 'none' : a.token === servedValue(a.tokenName) ? 'own' : a.token === currentToken() ? 'main' : 'other',
      model: a.model,
      defaultModel: DEFAULTS[agent].model,
      resolution: resolve(agent, a.model ?? DEFAULTS[agent].model),
      lastCall: a.lastCall,
      problem: a.malformed,
      // Like Gemini CLI's default: its folder trust is on until Connect turns it off.
      trustedFoldersOnly: agent === 'geminiCli' && !a.trustAllFolders,
    };
  }

  function overview() {
    const list = (Object.keys(DEFAULTS) as Agent[]).map(state);
    return { agents: list, address: `http://127.0.0.1:${localApi().port}` };
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
      const zero = { requests: 0, failures: 0, inputTokens: 0, cachedTokens: 0, outputTokens: 0, cachedShare: null, cost: null, costComplete: true };
      const every = [...(Object.keys(DEFAULTS) as Agent[]).map((agent) => ({ kind: 'agent' as const, agent })), { kind: 'chat' as const }, { kind: 'other' as const }];
      return bySource ?? { sources: every.map((source) => ({ source, ...zero })), drops: [] };
    },
    // Like the backend: a name is 1 to 64 of `A-Z a-z 0-9 . _ - @`, unique in any case; the
    // list never holds a token; a revoke of an unknown name is `not_found`.
    'localApi:listTokens': () => sortedTokens(),
    'localApi:updateToken': ({ name, rules }) => {
      const token = named.find((t) => t.name.toLowerCase() === name.trim().toLowerCase());
      if (!token) throw fail('not_found', `token "${name}" does not exist`, undefined, { kind: 'notFound', what: 'token' });
      if (rules.expiresAt !== undefined && rules.expiresAt <= now()) throw fail('validation', 'expired', [issue('rules.expiresAt', 'expiry_passed')]);
      if (rules.requestsPerMinute !== undefined && rules.requestsPerMinute < 1) throw fail('validation', 'rpm', [issue('rules.requestsPerMinute', 'too_small')]);
      token.rules = {
        budget: rules.budget ?? null,
        budgetPeriod: rules.budget ? (rules.budgetPeriod ?? 'month') : null,
        requestsPerMinute: rules.requestsPerMinute ?? null,
        tokensPerMinute: rules.tokensPerMinute ?? null,
        maxInFlight: rules.maxInFlight ?? null,
        models: rules.models ?? [],
        expiresAt: rules.expiresAt ?? null,
      };
      token.usable = token.rules.expiresAt === null || token.rules.expiresAt > now();
      return sortedTokens();
    },
    'localApi:createToken': ({ name }) => {
      if (name === undefined) throw fail('validation', 'name: is required', [issue('name', 'required')]);
      if ([...name].length > LIMITS.tokenName.maxChars) {
        throw fail('validation', 'name: too long', [{ path: 'name', code: 'too_long', params: { max: LIMITS.tokenName.maxChars }, message: 'too long' }]);
      }
      const wanted = name.trim();
      if (wanted === '') throw fail('validation', 'name: blank', [issue('name', 'blank')]);
      if (!/^[A-Za-z0-9._@-]{1,64}$/.test(wanted)) throw fail('validation', 'name: bad', [issue('name', 'bad_token_name')]);
      if (named.some((t) => t.name.toLowerCase() === wanted.toLowerCase())) throw fail('validation', 'name: taken', [issue('name', 'token_name_taken')]);
      const value = issue_(wanted, null);
      const token = named.find((t) => t.name === wanted) as NamedToken;
      return { ...token, token: value };
    },
    'localApi:revokeToken': ({ name }) => {
      const index = named.findIndex((t) => t.name.toLowerCase() === name.trim().toLowerCase());
      if (index < 0) throw fail('not_found', `token "${name}" does not exist`, undefined, { kind: 'notFound', what: 'token' });
      values.delete(named[index].name);
      named.splice(index, 1);
      return sortedTokens();
    },
    'usage:getByToken': ({ from, to }) => {
      if (from >= to) throw fail('validation', 'from: must be before `to`', [issue('from', 'range_order')]);
      return byToken;
    },
    'localApi:getAgents': () => overview(),
    'localApi:connectAgent': ({ agent, model, newToken, keyHelper, trustAllFolders }) => {
      if (!localApi().enabled) throw fail('validation', 'the local API is off', [issue('', 'local_api_off')]);
      if (keyHelper && agent !== 'claudeCode') throw fail('validation', 'no key helper', [issue('keyHelper', 'no_key_helper')]);
      if (trustAllFolders && agent !== 'geminiCli') throw fail('validation', 'no folder trust', [issue('trustAllFolders', 'no_folder_trust')]);
      const a = agents.get(agent) as FakeAgent;
      if (a.malformed) throw fail('conflict', `${a.malformed.path}: cannot be merged`, undefined, { kind: 'agentFile', file: a.malformed });
      const keep = a.tokenName !== null && a.token === servedValue(a.tokenName) && !newToken;
      const tokenName = a.tokenName ?? SLUGS[agent];
      const value = keep ? (a.token as string) : issue_(tokenName, SLUGS[agent]);
      const tightened = a.readable && !keyHelper ? [a.readable] : [];
      agents.set(agent, { ...a, connectedAt: a.connectedAt ?? now(), model: model?.trim() ?? null, token: value, tokenName, keyHelper: keyHelper === true, trustAllFolders: trustAllFolders === true, readable: tightened.length > 0 ? null : a.readable });
      return { agents: overview(), tightened };
    },
    'localApi:disconnectAgent': ({ agent, force }) => {
      const a = agents.get(agent) as FakeAgent;
      if (a.connectedAt === null) return overview();
      if (a.changed.length > 0 && force !== true) {
        throw fail('conflict', `${a.changed[0]}: changed since`, undefined, { kind: 'agentFile', file: { path: a.changed[0], problem: { kind: 'changed' } } });
      }
      const index = named.findIndex((t) => t.name === a.tokenName && t.agent === SLUGS[agent]);
      if (index >= 0) {
        values.delete(named[index].name);
        named.splice(index, 1);
      }
      agents.set(agent, { ...a, connectedAt: null, model: null, token: null, tokenName: null, keyHelper: false, trustAllFolders: false, changed: [] });
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
    /** Every value the token `name` was given, the serving one last. */
    tokenValues: (name: string) => values.get(name) ?? [],
    /** Changes what the fake keeps of `agent`: a file changed, malformed or readable by others, its last call. */
    setAgent: (agent: Agent, changes: Partial<FakeAgent>) => agents.set(agent, { ...(agents.get(agent) as FakeAgent), ...changes }),
    agent: (agent: Agent) => state(agent),
  };
}
