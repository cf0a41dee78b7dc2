import { useId, useRef, useState } from 'react';
import { CheckField } from '../../../components/CheckField';
import { Dialog } from '../../../components/Dialog';
import { Field } from '../../../components/Field';
import { FormActions } from '../../../components/FormActions';
import { useI18n } from '../../../i18n/I18nProvider';
import { errorText, fieldError } from '../../../i18n/problems';
import type { AgentState, RouteInput, ServedModel, TightenedFile } from '../../../ipc/bindings';
import { LIMITS } from '../../../ipc/bindings';
import type { ConnectOptions } from '../../../ipc/localApi';
import { AGENT_API, AGENT_NAMES, otherApiOwner } from './agents';

interface Props {
  agent: AgentState;
  /** Models to suggest: those the local API serves in the agent's API, and the routes' globs' targets. */
  models: readonly string[];
  /** What the local API serves and its routes: whether the model typed goes anywhere. */
  served?: readonly ServedModel[];
  routes?: readonly RouteInput[];
  /** Adds a route sending `model` to the provider named `provider` (the same model, translated). */
  onMakeRoute?: (model: string, provider: string) => Promise<void>;
  /** Connects; answers the files whose mode was tightened. */
  onConnect: (options: ConnectOptions) => Promise<readonly TightenedFile[]>;
  onClose: () => void;
}

/** A file's permission bits as `ls` and `chmod` write them: `0644`. */
export function octal(mode: number): string {
  return `0${(mode & 0o7777).toString(8).padStart(3, '0')}`;
}

/**
 * Connect (or connect again): names the files Keypool will change (after keeping a copy), takes
 * the model the agent should ask for (blank: its own choice), and for Claude Code whether it reads
 * its token from Keypool's key helper instead of its settings file, for Gemini CLI whether it
 * reads its files in every folder (its folder trust off); connected again, whether it gets a new
 * token. A model only a provider of another API lists is said to need a route, which one click
 * adds. Each agent gets a token of its own, which Disconnect revokes. When Connect
 * made a file others could read private (it now holds the token), the dialog says so before it
 * closes. A refusal is shown at its field, or above the buttons when it is about a file.
 */
export function ConnectAgentDialog({ agent, models, served = [], routes = [], onMakeRoute, onConnect, onClose }: Props) {
  const { t } = useI18n();
  const name = AGENT_NAMES[agent.agent];
  const [model, setModel] = useState(agent.connection?.model ?? '');
  const [keyHelper, setKeyHelper] = useState(agent.connection?.keyHelper ?? false);
  const [newToken, setNewToken] = useState(false);
  const [trustAll, setTrustAll] = useState(agent.connection?.trustAllFolders ?? false);
  const [contextWindow, setContextWindow] = useState('');
  const [routing, setRouting] = useState<{ kind: 'busy' } | { kind: 'made'; said: string } | { kind: 'failed'; said: string } | null>(null);
  const [madeFor, setMadeFor] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [tightened, setTightened] = useState<readonly TightenedFile[] | null>(null);
  const first = useRef<HTMLInputElement>(null);
  const done = useRef<HTMLButtonElement>(null);
  const bodyId = useId();
  const listId = useId();
  const modelError = fieldError(t, error, 'model');
  const windowError = fieldError(t, error, 'contextWindow');
  const general = error && !modelError && !windowError ? errorText(t, error) : undefined;
  const windowOffered = agent.agent === 'codex' || agent.agent === 'claudeCode';
  const helperOffered = agent.agent === 'claudeCode';
  const trustOffered = agent.agent === 'geminiCli';
  const asked = model.trim() || agent.defaultModel;
  const owner = madeFor.includes(asked) ? null : otherApiOwner(served, routes, AGENT_API[agent.agent], asked);
  const ownerId = useId();

  async function makeRoute(provider: string) {
    if (!onMakeRoute || routing?.kind === 'busy') return;
    setRouting({ kind: 'busy' });
    try {
      await onMakeRoute(asked, provider);
      setMadeFor((m) => [...m, asked]);
      setRouting({ kind: 'made', said: t('agents.routeMade', { model: asked, provider }) });
    } catch (e) {
      setRouting({ kind: 'failed', said: t('agents.routeFailed', { message: errorText(t, e) }) });
    }
  }
  const connected = agent.connection !== null;

  async function submit(event: React.FormEvent) {
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    setError(undefined);
    try {
      const options: ConnectOptions = { model: model.trim() || undefined };
      if (helperOffered && keyHelper) options.keyHelper = true;
      if (trustOffered && trustAll) options.trustAllFolders = true;
      if (windowOffered && contextWindow.trim() !== '') options.contextWindow = Number(contextWindow.trim());
      if (connected && newToken) options.newToken = true;
      const files = await onConnect(options);
      if (files.length === 0) {
        onClose();
        return;
      }
      setTightened(files);
      setBusy(false);
      requestAnimationFrame(() => done.current?.focus());
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  }

  if (tightened) {
    return (
      <Dialog title={t('agents.connected', { name })} onClose={onClose} initialFocus={done} describedBy={bodyId} testId="agent-connect-dialog">
        <div id={bodyId} className="dialog__body">
          <ul className="agents__tightened" data-testid="agent-tightened">
            {tightened.map((file) => (
              <li key={file.path}>{t('agents.tightened', { path: file.path, mode: octal(file.mode) })}</li>
            ))}
          </ul>
        </div>
        <div className="dialog__actions">
          <button ref={done} type="button" className="button button--primary" onClick={onClose} data-testid="agent-connect-done">
            {t('common.done')}
          </button>
        </div>
      </Dialog>
    );
  }

  return (
    <Dialog title={t(connected ? 'agents.reconnectTitle' : 'agents.connectTitle', { name })} onClose={onClose} initialFocus={first} describedBy={bodyId} testId="agent-connect-dialog">
      <form onSubmit={(e) => void submit(e)} noValidate>
        <div id={bodyId} className="dialog__body">
          <p>{t('agents.connectBody', { name })}</p>
          <ul className="agents__files">
            {agent.files.map((path) => (
              <li key={path}>
                <code>{path}</code>
              </li>
            ))}
          </ul>
        </div>
        <Field label={t('agents.model')} hint={t('agents.modelHint', { model: agent.defaultModel })} error={modelError} testId="agent-model">
          {({ id, describedBy, invalid }) => (
            <>
              <input
                ref={first}
                id={id}
                className="input input--mono"
                value={model}
                onChange={(e) => setModel(e.target.value)}
                aria-describedby={describedBy}
                aria-invalid={invalid || undefined}
                list={models.length > 0 ? listId : undefined}
                maxLength={LIMITS.modelName.maxBytes}
                spellCheck={false}
                autoComplete="off"
                placeholder={agent.defaultModel}
                data-testid="agent-model-input"
              />
              {models.length > 0 && (
                <datalist id={listId}>
                  {models.map((m) => (
                    <option key={m} value={m} />
                  ))}
                </datalist>
              )}
            </>
          )}
        </Field>
        {owner && (
          <div className="agents__route-needed" data-testid="agent-model-other-api">
            <p id={ownerId}>{t('agents.otherApiModel', { provider: owner, model: asked, name })}</p>
            {onMakeRoute && (
              <button type="button" className="button button--small" aria-describedby={ownerId} aria-busy={routing?.kind === 'busy' || undefined} onClick={() => void makeRoute(owner)} data-testid="agent-make-route">
                {t('agents.makeRoute', { provider: owner })}
              </button>
            )}
          </div>
        )}
        {routing?.kind === 'made' && (
          <p className="field__hint" role="status" data-testid="agent-route-made">
            {routing.said}
          </p>
        )}
        {routing?.kind === 'failed' && (
          <p className="form-error" role="alert" data-testid="agent-route-failed">
            {routing.said}
          </p>
        )}
        {windowOffered && (
          <Field label={t('agents.contextWindow')} hint={t('agents.contextWindowHint', { name })} error={windowError} testId="agent-context-window">
            {({ id, describedBy, invalid }) => (
              <input
                id={id}
                className="input input--mono"
                inputMode="numeric"
                value={contextWindow}
                onChange={(e) => setContextWindow(e.target.value.replace(/[^0-9]/g, ''))}
                aria-describedby={describedBy}
                aria-invalid={invalid || undefined}
                maxLength={9}
                autoComplete="off"
                placeholder={t('agents.contextWindowPlaceholder')}
                data-testid="agent-context-window-input"
              />
            )}
          </Field>
        )}
        {helperOffered && <CheckField label={t('agents.keyHelper')} hint={t('agents.keyHelperHint')} checked={keyHelper} onChange={setKeyHelper} testId="agent-key-helper" />}
        {trustOffered && <CheckField label={t('agents.trustAllFolders')} hint={t('agents.trustAllFoldersHint')} checked={trustAll} onChange={setTrustAll} testId="agent-trust-all-folders" />}
        {connected && <CheckField label={t('agents.newToken')} hint={t('agents.newTokenHint', { name })} checked={newToken} onChange={setNewToken} testId="agent-new-token" />}
        {general && (
          <p className="form-error" role="alert" data-testid="agent-connect-error">
            {general}
          </p>
        )}
        <FormActions onCancel={onClose} busy={busy} label={t('agents.connect')} busyLabel={t('agents.connecting')} testId="agent-connect-confirm" cancelTestId="agent-connect-cancel" />
      </form>
    </Dialog>
  );
}
