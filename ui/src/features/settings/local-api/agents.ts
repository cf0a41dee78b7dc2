import type { Agent, AgentFile, AgentState, ClientApi, Resolution, RouteInput, ServedModel } from '../../../ipc/bindings';
import { firstMatch } from './routes';
import { shellWord } from './snippets';

/*
 * The Coding agents panel's derived state: what each agent is called, which API it speaks, how
 * its connection stands and what the user should know about it, and the files to write by hand.
 * Pure: the agents' states come from `localApi:getAgents`.
 */

/** Every agent, in the order the panel shows them. */
export const AGENTS: readonly Agent[] = ['claudeCode', 'codex', 'geminiCli'];

/** Product names: the same in every language. */
export const AGENT_NAMES: Record<Agent, string> = { claudeCode: 'Claude Code', codex: 'Codex CLI', geminiCli: 'Gemini CLI' };

/** The API each agent speaks to the local API. */
export const AGENT_API: Record<Agent, ClientApi> = { claudeCode: 'anthropic', codex: 'openai', geminiCli: 'gemini' };

/** A glob that takes every model the agent asks for by its vendor's names, for a route's example. */
export const AGENT_GLOB: Record<Agent, string> = { claudeCode: 'claude-*', codex: 'gpt-*', geminiCli: 'gemini-*' };

/** Connected by Keypool; pointed here by hand (no backup to put back); or neither. */
export type ConnectionState = 'connected' | 'byHand' | 'notConnected';

export function connectionState(agent: AgentState): ConnectionState {
  if (agent.connection) return 'connected';
  return agent.pointsHere ? 'byHand' : 'notConnected';
}

/** What the user should know about an agent, most pressing first. */
export type AgentNotice =
  /** A file of its cannot be merged: Connect would change nothing. */
  | { kind: 'fileProblem'; file: AgentFile }
  /** Connected, but its files point elsewhere now (the port moved, or they were edited): Connect again. */
  | { kind: 'pointsElsewhere' }
  /** It points here with a token this local API does not take (revoked, or regenerated): Connect again. */
  | { kind: 'oldToken' }
  /** Connected before agents had tokens of their own: it shares the local API's own. Connect again. */
  | { kind: 'sharedToken' }
  /**
   * It reads the file with the address and token only in folders it trusts (Gemini CLI's
   * `~/.gemini/.env` while its folder trust is on): elsewhere it asks for a key. `envFile` is
   * that file, to read into the shell instead.
   */
  | { kind: 'trustedFoldersOnly'; envFile: string }
  /** Files changed since Connect: Disconnect would undo those changes. */
  | { kind: 'changed'; files: string[] }
  /** Its model goes to a provider with no usable key. */
  | { kind: 'noUsableKey'; provider: string }
  /** Only a provider of another API lists its model: a route sends it there. */
  | { kind: 'otherApi'; provider: string }
  /** Nothing answers its model: a route is needed. */
  | { kind: 'unrouted' };

export function agentNotices(agent: AgentState): AgentNotice[] {
  const notices: AgentNotice[] = [];
  const state = connectionState(agent);
  if (agent.problem) notices.push({ kind: 'fileProblem', file: agent.problem });
  if (state === 'connected' && !agent.pointsHere) notices.push({ kind: 'pointsElsewhere' });
  if (state !== 'notConnected' && agent.pointsHere && (agent.token === 'other' || agent.token === 'none')) notices.push({ kind: 'oldToken' });
  if (state === 'connected' && agent.token === 'main') notices.push({ kind: 'sharedToken' });
  if (state !== 'notConnected' && agent.pointsHere && agent.trustedFoldersOnly) {
    notices.push({ kind: 'trustedFoldersOnly', envFile: agent.files.find((f) => /[\\/]\.env$/.test(f)) ?? agent.files[agent.files.length - 1] });
  }
  if (agent.connection && agent.connection.changed.length > 0) notices.push({ kind: 'changed', files: agent.connection.changed });
  notices.push(...resolutionNotices(agent.resolution));
  return notices;
}

function resolutionNotices(resolution: Resolution): AgentNotice[] {
  switch (resolution.kind) {
    case 'routed':
      return resolution.usable ? [] : [{ kind: 'noUsableKey', provider: resolution.provider }];
    case 'otherApi':
      return [{ kind: 'otherApi', provider: resolution.provider }];
    case 'unknown':
      return [{ kind: 'unrouted' }];
  }
}

/** A file to write by hand: where, in what language, what. */
export interface ManualFile {
  path: string;
  language: 'json' | 'toml' | 'bash';
  code: string;
}

/**
 * The files that point `agent` at the local API at `address`, with `token` (a placeholder: the
 * real token is never put here) and `model` when one is chosen: what Connect would merge in.
 */
export function manualFiles(agent: Agent, address: string, token: string, model: string | null): ManualFile[] {
  const root = address.replace(/\/+$/, '');
  const q = (text: string) => JSON.stringify(text);
  switch (agent) {
    case 'claudeCode': {
      const env: Record<string, string> = { ANTHROPIC_BASE_URL: root, ANTHROPIC_AUTH_TOKEN: token };
      if (model) env.ANTHROPIC_MODEL = model;
      return [{ path: '~/.claude/settings.json', language: 'json', code: JSON.stringify({ env }, null, 2) }];
    }
    case 'codex':
      return [
        {
          path: '~/.codex/config.toml',
          language: 'toml',
          code: [
            ...(model ? [`model = ${q(model)}`] : []),
            'model_provider = "keypool"',
            '',
            '[model_providers.keypool]',
            'name = "Keypool"',
            `base_url = ${q(`${root}/v1`)}`,
            `experimental_bearer_token = ${q(token)}`,
            'wire_api = "responses"',
            'supports_websockets = false',
          ].join('\n'),
        },
      ];
    case 'geminiCli': {
      const settings: Record<string, unknown> = { security: { auth: { selectedType: 'gemini-api-key' } } };
      if (model) settings.model = { name: model };
      return [
        { path: '~/.gemini/settings.json', language: 'json', code: JSON.stringify(settings, null, 2) },
        { path: '~/.gemini/.env', language: 'bash', code: `GOOGLE_GEMINI_BASE_URL=${root}\nGEMINI_API_KEY=${token}` },
      ];
    }
  }
}

/**
 * The shell line that sets every variable of `envFile` in this shell (POSIX shells: bash, zsh):
 * what Gemini CLI then reads in any folder, trusted or not, since a variable set in the shell
 * wins over its files. The token stays in the file: it is never written here.
 */
export function envInShell(envFile: string): string {
  return `set -a; . ${shellWord(envFile)}; set +a`;
}

/**
 * The provider a model typed at Connect would need a route to: only a provider of another API
 * than `api` serves it, no route takes it and no provider of `api` serves it, so the agent's
 * requests would be refused (HTTP 400). Null when it goes somewhere, or nobody lists it.
 */
export function otherApiOwner(served: readonly ServedModel[], routes: readonly RouteInput[], api: ClientApi, model: string): string | null {
  const name = model.trim();
  if (!name || firstMatch(routes, name) >= 0) return null;
  if (served.some((m) => m.api === api && (m.model === name || `${m.provider}/${m.model}` === name || m.others.some((o) => `${o}/${m.model}` === name)))) return null;
  if (served.some((m) => `${m.provider}/${m.model}` === name)) return null;
  return served.find((m) => m.api !== api && m.model === name)?.provider ?? null;
}
