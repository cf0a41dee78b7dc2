import { useMemo } from 'react';
import { type LiveLoad, useLiveStatus } from '../../../hooks/useLiveStatus';
import type { TeamStatus } from '../../../ipc/bindings';
import { teamApi } from '../../../ipc/team';
import type { TeamJoin } from './teamForm';

export type TeamLoad = LiveLoad<TeamStatus>;

/** How often the status is read while the section is shown (members and "last change" move on their own). */
export const POLL_MS = 2000;

/**
 * The team's status (`team:getStatus`): read at once, again on every `team:changed` and every
 * `pollMs` while the window is visible. Connect and disconnect go one at a time; what each
 * answers replaces the shown status.
 */
export function useTeam(pollMs = POLL_MS) {
  const { state, retry, change } = useLiveStatus(teamApi.getStatus, { pollMs, changedOn: 'team:changed' });
  return useMemo(() => {
    const run = (ask: () => Promise<TeamStatus>) =>
      change(async () => {
        const status = await ask();
        return { status, answer: status };
      });
    return {
      state,
      retry,
      connect: (join: TeamJoin) => run(() => teamApi.connect(join.redisUrl, join.team, join.secret)),
      disconnect: () => run(teamApi.disconnect),
      generateSecret: async () => (await teamApi.generateSecret()).secret,
    };
  }, [state, retry, change]);
}
