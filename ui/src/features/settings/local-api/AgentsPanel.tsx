import { useId, useRef, useState } from 'react';
import { CopyButton } from '../../../components/CopyButton';
import { Dialog } from '../../../components/Dialog';
import { formatRelative } from '../../../i18n/format';
import { useI18n } from '../../../i18n/I18nProvider';
import { errorText } from '../../../i18n/problems';
import type { Agent, Provider, RouteInput, ServedModel } from '../../../ipc/bindings';
import { IpcError } from '../../../ipc/client';
import { localApiApi } from '../../../ipc/localApi';
import { AGENT_API, AGENT_NAMES, agentNotices, connectionState, envInShell, manualFiles } from './agents';
import { MANUAL_NOTES, noticeText, resolutionText, STATE_BADGES, STATE_WORDS } from './agentWords';
import { inputOf } from './routes';
import { ConnectAgentDialog } from './ConnectAgentDialog';
import { useAgents } from './useAgents';
import './agents.css';

interface Props {
  /** The local API is on: Connect needs it (it makes the token agents are given). */
  enabled: boolean;
  /** What the local API serves now, for the model suggestions. */
  served: readonly ServedModel[];
  /** Changes when something the agents' states depend on was saved (the routes). */
  version: unknown;
  /** The providers, for a route Connect offers to add (served names them by name). */
  providers?: readonly Provider[];
  /** Told after Connect added a route (the Routes list shows it). */
  onRouteMade?: () => void;
}

/**
 * Settings → Local API → Coding agents: Claude Code, Codex CLI and Gemini CLI, each with whether
 * Keypool connected it (or its files point here, set up by hand), the model it will ask for and
 * where that goes now, and when it last called; Connect writes its own files (after keeping a
 * copy), Disconnect puts them back exactly. Copy-ready files for doing it by hand too.
 */
export function AgentsPanel({ enabled, served, version, providers = [], onRouteMade }: Props) {
  const { t, intlTag } = useI18n();
  const titleId = useId();
  const api = useAgents(version);
  const [connecting, setConnecting] = useState<Agent | null>(null);
  const [confirming, setConfirming] = useState<{ agent: Agent; files: string[] } | null>(null);
  const [busy, setBusy] = useState<Agent | null>(null);
  const [problems, setProblems] = useState<Partial<Record<Agent, string>>>({});
  const [announcement, setAnnouncement] = useState('');
  const confirmCancel = useRef<HTMLButtonElement>(null);
  /** The routes when Connect opened: whether the model typed goes anywhere. */
  const [routes, setRoutes] = useState<RouteInput[]>([]);

  function openConnect(agent: Agent) {
    setConnecting(agent);
    localApiApi.getRoutes().then(
      (list) => setRoutes(list.map(inputOf)),
      () => setRoutes([]),
    );
  }

  /** Adds a route sending `model` as it is to the provider named `provider`, after the others. */
  async function makeRoute(model: string, provider: string) {
    const target = providers.find((p) => p.name === provider);
    if (!target) throw new Error(provider);
    const current = (await localApiApi.getRoutes()).map(inputOf);
    const saved = await localApiApi.setRoutes([...current, { model, provider: target.id, toModel: model }]);
    setRoutes(saved.map(inputOf));
    onRouteMade?.();
  }

  async function disconnect(agent: Agent, force = false) {
    setBusy(agent);
    setProblems((p) => ({ ...p, [agent]: undefined }));
    try {
      await api.disconnect(agent, force);
      setConfirming(null);
      setAnnouncement(t('agents.disconnected', { name: AGENT_NAMES[agent] }));
    } catch (e) {
      api.retry();
      const file = e instanceof IpcError && e.details?.kind === 'agentFile' ? e.details.file : null;
      if (!force && file?.problem.kind === 'changed') {
        const status = api.state.kind === 'loaded' ? api.state.status.agents.find((a) => a.agent === agent) : undefined;
        setConfirming({ agent, files: status?.connection?.changed.length ? status.connection.changed : [file.path] });
      } else {
        setConfirming(null);
        setProblems((p) => ({ ...p, [agent]: t('agents.actionFailed', { message: errorText(t, e) }) }));
      }
    } finally {
      setBusy(null);
    }
  }

  let body: React.ReactNode;
  if (api.state.kind === 'loading') {
    body = (
      <p className="muted" aria-busy="true">
        {t('localApi.loading')}
      </p>
    );
  } else if (api.state.kind === 'failed') {
    body = (
      <div className="form-error" role="alert">
        <p>{t('agents.loadFailed', { message: errorText(t, api.state.error) })}</p>
        <button type="button" className="button" onClick={api.retry}>
          {t('providers.retry')}
        </button>
      </div>
    );
  } else {
    const { agents, address } = api.state.status;
    const now = Date.now();
    body = (
      <>
        {!enabled && <p className="field__hint">{t('agents.turnOnFirst')}</p>}
        <div className="agents__list">
          {agents.map((agent) => {
            const name = AGENT_NAMES[agent.agent];
            const state = connectionState(agent);
            const notices = agentNotices(agent);
            const headingId = `${titleId}-${agent.agent}`;
            return (
              <article key={agent.agent} className="agents__card" aria-labelledby={headingId} data-testid={`agent-${agent.agent}`} data-state={state}>
                <div className="agents__head">
                  <h4 id={headingId}>{name}</h4>
                  <span className={`badge ${STATE_BADGES[state]}`} data-testid="agent-state">
                    {t(STATE_WORDS[state])}
                  </span>
                </div>
                <dl className="local-api__facts">
                  <dt>{t('agents.modelFact')}</dt>
                  <dd data-testid="agent-model">{agent.model ? <code>{agent.model}</code> : t('agents.defaultModel', { model: agent.defaultModel })}</dd>
                  <dt>{t('agents.goesFact')}</dt>
                  <dd data-testid="agent-resolution">{resolutionText(t, agent.agent, agent.resolution)}</dd>
                  {agent.connection?.token && (
                    <>
                      <dt>{t('agents.tokenFact')}</dt>
                      <dd data-testid="agent-token">
                        <code>{agent.connection.token}</code>
                        {agent.connection.keyHelper && ` · ${t('agents.viaKeyHelper')}`}
                      </dd>
                    </>
                  )}
                  <dt>{t('agents.lastCallFact')}</dt>
                  <dd data-testid="agent-last-call">{agent.lastCall === null ? t('agents.neverCalled') : formatRelative(agent.lastCall, now, intlTag)}</dd>
                  <dt>{t('agents.filesFact')}</dt>
                  <dd className="agents__paths" data-testid="agent-files">
                    {agent.files.map((path) => (
                      <code key={path}>{path}</code>
                    ))}
                  </dd>
                </dl>
                {notices.length > 0 && (
                  <ul className="agents__notices" data-testid="agent-notices">
                    {notices.map((notice) => (
                      <li key={notice.kind} data-kind={notice.kind}>
                        {noticeText(t, agent.agent, notice)}
                        {notice.kind === 'trustedFoldersOnly' && (
                          <div className="code-block agents__shell-line">
                            <div className="code-block__bar">
                              <span className="code-block__language">bash</span>
                              <CopyButton text={() => envInShell(notice.envFile)} label={t('agents.copyEnvLine')} className="button button--small code-block__copy" testId="agent-env-line-copy" />
                            </div>
                            {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a long line scrolls sideways; the keyboard must reach it to scroll */}
                            <pre className="code-block__pre" tabIndex={0} data-testid="agent-env-line">
                              <code>{envInShell(notice.envFile)}</code>
                            </pre>
                          </div>
                        )}
                      </li>
                    ))}
                  </ul>
                )}
                {problems[agent.agent] && (
                  <p className="form-error" role="alert" data-testid="agent-problem">
                    {problems[agent.agent]}
                  </p>
                )}
                <div className="agents__actions">
                  <button type="button" className="button button--primary" disabled={!enabled || busy !== null} onClick={() => openConnect(agent.agent)} aria-label={t(state === 'connected' ? 'agents.reconnectLabel' : 'agents.connectLabel', { name })} data-testid="agent-connect">
                    {t(state === 'connected' ? 'agents.reconnect' : 'agents.connect')}
                  </button>
                  {agent.connection && (
                    <button type="button" className="button" disabled={busy !== null} aria-busy={busy === agent.agent || undefined} onClick={() => void disconnect(agent.agent)} aria-label={t('agents.disconnectLabel', { name })} data-testid="agent-disconnect">
                      {t('agents.disconnect')}
                    </button>
                  )}
                </div>
                <details className="agents__manual" data-testid="agent-manual">
                  <summary>{t('agents.manual')}</summary>
                  <p className="field__hint">{t(MANUAL_NOTES[agent.agent])}</p>
                  {manualFiles(agent.agent, address, t('localApi.tokenPlaceholder'), agent.model).map((file) => (
                    <div key={file.path} className="code-block">
                      <div className="code-block__bar">
                        <span className="code-block__language">{file.path}</span>
                        <CopyButton text={() => file.code} label={t('agents.copyFile', { path: file.path })} className="button button--small code-block__copy" testId="agent-manual-copy" />
                      </div>
                      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a long line scrolls sideways; the keyboard must reach it to scroll */}
                      <pre className="code-block__pre" tabIndex={0}>
                        <code>{file.code}</code>
                      </pre>
                    </div>
                  ))}
                </details>
              </article>
            );
          })}
        </div>
        {connecting &&
          (() => {
            const agent = agents.find((a) => a.agent === connecting);
            if (!agent) return null;
            const models = served.filter((m) => m.api === AGENT_API[connecting]).map((m) => m.model);
            return (
              <ConnectAgentDialog
                agent={agent}
                models={models}
                served={served}
                routes={routes}
                onMakeRoute={providers.length > 0 ? makeRoute : undefined}
                onConnect={async (options) => {
                  let connected: Awaited<ReturnType<typeof api.connect>>;
                  try {
                    connected = await api.connect(connecting, options);
                  } catch (e) {
                    // What stopped it (a file) may have changed what the panel shows.
                    api.retry();
                    throw e;
                  }
                  setProblems((p) => ({ ...p, [connecting]: undefined }));
                  setAnnouncement(t('agents.connected', { name: AGENT_NAMES[connecting] }));
                  return connected.tightened;
                }}
                onClose={() => setConnecting(null)}
              />
            );
          })()}
        {confirming && (
          <Dialog title={t('agents.changedTitle', { name: AGENT_NAMES[confirming.agent] })} role="alertdialog" onClose={() => setConfirming(null)} initialFocus={confirmCancel} testId="agent-disconnect-dialog">
            <div className="dialog__body">
              <p>{t('agents.changedBody', { name: AGENT_NAMES[confirming.agent] })}</p>
              <ul className="agents__files">
                {confirming.files.map((path) => (
                  <li key={path}>
                    <code>{path}</code>
                  </li>
                ))}
              </ul>
            </div>
            <div className="dialog__actions">
              <button ref={confirmCancel} type="button" className="button" onClick={() => setConfirming(null)} data-testid="agent-disconnect-cancel">
                {t('common.cancel')}
              </button>
              <button type="button" className="button button--danger" aria-busy={busy === confirming.agent || undefined} onClick={() => void disconnect(confirming.agent, true)} data-testid="agent-disconnect-force">
                {t('agents.restoreAnyway')}
              </button>
            </div>
          </Dialog>
        )}
      </>
    );
  }

  return (
    <section className="agents" aria-labelledby={titleId} data-testid="agents-section">
      <h3 id={titleId}>{t('agents.title')}</h3>
      <p className="field__hint">{t('agents.intro')}</p>
      {body}
      <p className="visually-hidden" role="status" aria-live="polite" data-testid="agents-announcement">
        {announcement}
      </p>
    </section>
  );
}
