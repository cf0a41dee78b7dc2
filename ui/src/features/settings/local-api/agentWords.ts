// How the coding agents panel words an agent: its connection state, where its model goes, its
// notices, and the notes of its manual setup.
import type { MessageKey } from '../../../i18n';
import type { Translate } from '../../../i18n/problems';
import { agentFileText } from '../../../i18n/problems';
import type { Agent, Resolution } from '../../../ipc/bindings';
import { AGENT_GLOB, AGENT_NAMES, type AgentNotice, type ConnectionState } from './agents';

export const STATE_WORDS: Record<ConnectionState, MessageKey> = {
  connected: 'agents.stateConnected',
  byHand: 'agents.stateByHand',
  notConnected: 'agents.stateNotConnected',
};

export const STATE_BADGES: Record<ConnectionState, string> = { connected: 'badge--active', byHand: 'badge--cooling', notConnected: 'badge--off' };

/** Where an agent's model goes, in words. */
export function resolutionText(t: Translate, agent: Agent, resolution: Resolution): string {
  switch (resolution.kind) {
    case 'routed':
      return resolution.via.kind === 'route'
        ? t('agents.goesViaRoute', { provider: resolution.provider, model: resolution.model, glob: resolution.via.glob })
        : t('agents.goesTo', { provider: resolution.provider, model: resolution.model });
    case 'otherApi':
      return t('agents.goesNowhereOtherApi', { provider: resolution.provider });
    case 'unknown':
      return t('agents.goesNowhere', { glob: AGENT_GLOB[agent] });
  }
}

export function noticeText(t: Translate, agent: Agent, notice: AgentNotice): string {
  switch (notice.kind) {
    case 'fileProblem':
      return agentFileText(t, notice.file);
    case 'pointsElsewhere':
      return t('agents.pointsElsewhere');
    case 'oldToken':
      return t('agents.oldToken');
    case 'sharedToken':
      return t('agents.sharedToken');
    case 'trustedFoldersOnly':
      return t('agents.trustedFoldersOnly', { name: AGENT_NAMES[agent], file: notice.envFile });
    case 'changed':
      return t('agents.changedSince', { files: notice.files.join(t('list.separator')) });
    case 'noUsableKey':
      return t('agents.noUsableKey', { provider: notice.provider });
    case 'otherApi':
      return t('agents.otherApiHint', { provider: notice.provider, glob: AGENT_GLOB[agent] });
    case 'unrouted':
      return t('agents.unroutedHint', { glob: AGENT_GLOB[agent] });
  }
}

/** The extra words an agent's manual setup needs. */
export const MANUAL_NOTES: Record<Agent, MessageKey> = {
  claudeCode: 'agents.manualClaude',
  codex: 'agents.manualCodex',
  geminiCli: 'agents.manualGemini',
};
