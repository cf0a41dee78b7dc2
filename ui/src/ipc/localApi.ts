import type { Agent, RouteInput, TokenRulesInput } from './bindings';
import { call, defined } from './client';

export const localApiApi = {
  getStatus: () => call('localApi:getStatus'),
  /** Turns the endpoint on or off (on `port` when given); `token` only the first time it is enabled. */
  configure: (enabled: boolean, port?: number) => call('localApi:configure', defined({ enabled, port })),
  /** A new token, shown this once; the old one stops working at once. */
  regenerateToken: () => call('localApi:regenerateToken'),
  /** The named tokens (one per agent, script or person), never their values. */
  listTokens: () => call('localApi:listTokens'),
  /** Makes a named token (with what it may do): its value is in the answer, this once. */
  createToken: (name: string, rules?: TokenRulesInput) => call('localApi:createToken', defined({ name, rules })),
  /** Sets what a named token may do (its value stays). Answers every token. */
  updateToken: (name: string, rules: TokenRulesInput) => call('localApi:updateToken', { name, rules }),
  /** Revokes a named token: it stops at once; what it spent stays under its name. Answers those left. */
  revokeToken: (name: string) => call('localApi:revokeToken', { name }),
  /** The routes, first match first, each with whether its provider can answer now. */
  getRoutes: () => call('localApi:getRoutes'),
  /** Replaces every route (an add, an edit, a move or a delete is a new list); applied at once. */
  setRoutes: (routes: RouteInput[]) => call('localApi:setRoutes', { routes }),
  /** Asks the route's model for a word through the pool: the reply, or why none came. */
  testRoute: (route: RouteInput) => call('localApi:testRoute', { route }),
  /** The coding agents: connected or not, their model and where it goes, their last call. */
  getAgents: () => call('localApi:getAgents'),
  /**
   * Writes the agent's own files to use the local API with a token of its own (after keeping
   * them): `newToken` gives it a new value, `keyHelper` keeps it out of Claude Code's settings,
   * `trustAllFolders` has Gemini CLI read ~/.gemini/.env in every folder (its folder trust off).
   */
  connectAgent: (agent: Agent, options: ConnectOptions = {}) => call('localApi:connectAgent', defined({ agent, ...options })),
  /** Puts the agent's files back as they were; `force` also when they changed since Connect. */
  disconnectAgent: (agent: Agent, force?: boolean) => call('localApi:disconnectAgent', defined({ agent, force })),
};

/** How to connect an agent (see `localApiApi.connectAgent`). */
export interface ConnectOptions {
  model?: string;
  newToken?: boolean;
  keyHelper?: boolean;
  trustAllFolders?: boolean;
  /** The model's context window in tokens (Codex, Claude Code); left out: the known one, if any. */
  contextWindow?: number;
}
