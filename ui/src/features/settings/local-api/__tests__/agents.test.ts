import { describe, expect, it } from 'vitest';
import type { AgentState, ServedModel } from '../../../../ipc/bindings';
import { agentNotices, connectionState, envInShell, manualFiles, otherApiOwner } from '../agents';

const agent = (changes: Partial<AgentState> = {}): AgentState => ({
  agent: 'claudeCode',
  files: ['/home/u/.claude/settings.json'],
  connection: null,
  pointsHere: false,
  token: 'none',
  model: null,
  defaultModel: 'claude-opus-5-5',
  resolution: { kind: 'routed', provider: 'Anthropic', model: 'claude-opus-5-5', via: { kind: 'listed' }, usable: true },
  lastCall: null,
  problem: null,
  trustedFoldersOnly: false,
  ...changes,
});
const connected = { connectedAt: 1, model: null, token: 'claude-code', keyHelper: false, trustAllFolders: false, changed: [] };

describe('coding agents', () => {
  it('tells connected, set up by hand and not connected apart', () => {
    expect(connectionState(agent())).toBe('notConnected');
    expect(connectionState(agent({ pointsHere: true, token: 'main' })), 'its files point here without Keypool’s backup').toBe('byHand');
    expect(connectionState(agent({ connection: connected, pointsHere: true }))).toBe('connected');
  });

  it('says what needs doing, most pressing first', () => {
    expect(agentNotices(agent()), 'nothing: its model answers').toEqual([]);
    const stale = agent({ connection: { ...connected, changed: ['/f'] }, pointsHere: true, token: 'other' });
    expect(agentNotices(stale).map((n) => n.kind)).toEqual(['oldToken', 'changed']);
    const own = agent({ connection: connected, pointsHere: true, token: 'own' });
    expect(agentNotices(own), 'its own token: nothing to say').toEqual([]);
    const shared = agent({ connection: { ...connected, token: null }, pointsHere: true, token: 'main' });
    expect(agentNotices(shared).map((n) => n.kind), 'connected before agents had their own').toEqual(['sharedToken']);
    expect(agentNotices(agent({ connection: connected, pointsHere: false })).map((n) => n.kind), 'the port moved').toEqual(['pointsElsewhere']);
    expect(agentNotices(agent({ resolution: { kind: 'unknown' } })).map((n) => n.kind)).toEqual(['unrouted']);
    expect(agentNotices(agent({ resolution: { kind: 'otherApi', provider: 'OpenAI' } }))).toEqual([{ kind: 'otherApi', provider: 'OpenAI' }]);
    const keyless = agent({ resolution: { kind: 'routed', provider: 'OpenAI', model: 'gpt-4o', via: { kind: 'route', glob: 'claude-*' }, usable: false } });
    expect(agentNotices(keyless)).toEqual([{ kind: 'noUsableKey', provider: 'OpenAI' }]);
    const broken = agent({ problem: { path: '/f', problem: { kind: 'malformed', reason: 'x' } } });
    expect(agentNotices(broken)[0].kind).toBe('fileProblem');
  });

  it('says when Gemini CLI reads its .env only in trusted folders, and gives the shell line instead', () => {
    const gemini = agent({
      agent: 'geminiCli',
      files: ['/home/u/.gemini/settings.json', '/home/u/.gemini/.env'],
      connection: { ...connected, token: 'gemini-cli' },
      pointsHere: true,
      token: 'own',
      trustedFoldersOnly: true,
    });
    expect(agentNotices(gemini), 'connected, yet it finds no key outside a trusted folder').toEqual([{ kind: 'trustedFoldersOnly', envFile: '/home/u/.gemini/.env' }]);
    expect(agentNotices({ ...gemini, trustedFoldersOnly: false }), 'its folder trust is off: nothing to say').toEqual([]);
    expect(agentNotices({ ...gemini, connection: null, pointsHere: false }), 'not pointed here: nothing of it matters yet').toEqual([]);
    expect(envInShell('/home/u/.gemini/.env')).toBe('set -a; . /home/u/.gemini/.env; set +a');
    expect(envInShell("/home/o'k/.gemini/.env"), 'quoted for the shell').toBe("set -a; . '/home/o'\\''k/.gemini/.env'; set +a");
  });

  it('tells a model only a provider of another API serves, which needs a route', () => {
    const served: ServedModel[] = [
      { api: 'openai', model: 'gpt-5', provider: 'OpenAI', others: [] },
      { api: 'gemini', model: 'gemini-3.1-pro-preview', provider: 'Gemini', others: [] },
      { api: 'openai', model: 'gemini-3.1-pro-preview', provider: 'OpenRouter', others: [] },
    ];
    expect(otherApiOwner(served, [], 'gemini', 'gpt-5'), 'OpenAI speaks another API: a 400 without a route').toBe('OpenAI');
    expect(otherApiOwner(served, [{ model: 'gpt-*', provider: 'openai', toModel: 'gpt-5' }], 'gemini', 'gpt-5'), 'a route takes it').toBeNull();
    expect(otherApiOwner(served, [], 'gemini', 'gemini-3.1-pro-preview'), 'a provider of its API serves it').toBeNull();
    expect(otherApiOwner(served, [], 'gemini', 'OpenAI/gpt-5'), 'provider/model reaches it').toBeNull();
    expect(otherApiOwner(served, [], 'gemini', 'nobody-lists-this'), 'nobody lists it: the card says so otherwise').toBeNull();
    expect(otherApiOwner(served, [], 'openai', 'gpt-5')).toBeNull();
  });

  it('writes the files by hand as Connect would merge them, with the placeholder given', () => {
    const [claude] = manualFiles('claudeCode', 'http://127.0.0.1:4141/', '<token>', 'claude-sonnet-4-6');
    expect(JSON.parse(claude.code)).toEqual({ env: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:4141', ANTHROPIC_AUTH_TOKEN: '<token>', ANTHROPIC_MODEL: 'claude-sonnet-4-6' } });
    const [codex] = manualFiles('codex', 'http://127.0.0.1:4141', '<token>', null);
    expect(codex.code).toContain('base_url = "http://127.0.0.1:4141/v1"');
    expect(codex.code).toContain('supports_websockets = false');
    expect(codex.code).not.toContain('model =');
    const [settings, env] = manualFiles('geminiCli', 'http://127.0.0.1:4141', '<token>', null);
    expect(JSON.parse(settings.code)).toEqual({ security: { auth: { selectedType: 'gemini-api-key' } } });
    expect(env.code).toBe('GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:4141\nGEMINI_API_KEY=<token>');
  });
});
