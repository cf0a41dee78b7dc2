import { useEffect, useMemo, useRef } from 'react';
import { type LiveLoad, useLiveStatus } from '../../../hooks/useLiveStatus';
import type { Agent, Agents } from '../../../ipc/bindings';
import { type ConnectOptions, localApiApi } from '../../../ipc/localApi';

export type AgentsLoad = LiveLoad<Agents>;

/** How often the agents are read again (their last call, files changed by hand). */
export const AGENTS_POLL_MS = 10_000;

/**
 * The coding agents (`localApi:getAgents`): read at once, every `pollMs` while the window is
 * visible, when it comes back to the front, after every write to a provider or its keys, and
 * whenever `version` changes (the routes were saved, the port moved). Connect and Disconnect
 * answer the agents as they are after, which replaces what is shown.
 */
export function useAgents(version: unknown, pollMs = AGENTS_POLL_MS) {
  const { state, retry, change } = useLiveStatus(localApiApi.getAgents, { pollMs, changedOn: 'llmConfig:changed' });
  const first = useRef(true);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `version` is the reason to read again
  useEffect(() => {
    if (first.current) first.current = false;
    else retry();
  }, [version]);
  return useMemo(
    () => ({
      state,
      retry,
      /** Answers the files whose mode Connect tightened. */
      connect: (agent: Agent, options: ConnectOptions) =>
        change(async () => {
          const connected = await localApiApi.connectAgent(agent, options);
          return { status: connected.agents, answer: connected };
        }),
      disconnect: (agent: Agent, force?: boolean) =>
        change(async () => {
          const agents = await localApiApi.disconnectAgent(agent, force);
          return { status: agents, answer: agents };
        }),
    }),
    [state, retry, change],
  );
}
