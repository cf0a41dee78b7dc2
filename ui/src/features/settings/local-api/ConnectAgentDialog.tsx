import { useId, useRef, useState } from 'react';
import { CheckField } from '../../../components/CheckField';
import { Dialog } from '../../../components/Dialog';
import { Field } from '../../../components/Field';
import { FormActions } from '../../../components/FormActions';
import { useI18n } from '../../../i18n/I18nProvider';
import { errorText, fieldError } from '../../../i18n/problems';
import type { AgentState, TightenedFile } from '../../../ipc/bindings';
import { LIMITS } from '../../../ipc/bindings';
import type { ConnectOptions } from '../../../ipc/localApi';
import { AGENT_NAMES } from './agents';

interface Props {
  agent: AgentState;
  /** Models to suggest: those the local API serves in the agent's API, and the routes' globs' targets. */
  models: readonly string[];
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
 * its token from Keypool's key helper instead of its settings file; connected again, whether it
 * gets a new token. Each agent gets a token of its own, which Disconnect revokes. When Connect
 * made a file others could read private (it now holds the token), the dialog says so before it
 * closes. A refusal is shown at its field, or above the buttons when it is about a file.
 */
export function ConnectAgentDialog({ agent, models, onConnect, onClose }: Props) {
  const { t } = useI18n();
  const name = AGENT_NAMES[agent.agent];
  const [model, setModel] = useState(agent.connection?.model ?? '');
  const [keyHelper, setKeyHelper] = useState(agent.connection?.keyHelper ?? false);
  const [newToken, setNewToken] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [tightened, setTightened] = useState<readonly TightenedFile[] | null>(null);
  const first = useRef<HTMLInputElement>(null);
  const done = useRef<HTMLButtonElement>(null);
  const bodyId = useId();
  const listId = useId();
  const modelError = fieldError(t, error, 'model');
  const general = error && !modelError ? errorText(t, error) : undefined;
  const helperOffered = agent.agent === 'claudeCode';
  const connected = agent.connection !== null;

  async function submit(event: React.FormEvent) {
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    setError(undefined);
    try {
      const options: ConnectOptions = { model: model.trim() || undefined };
      if (helperOffered && keyHelper) options.keyHelper = true;
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
        {helperOffered && <CheckField label={t('agents.keyHelper')} hint={t('agents.keyHelperHint')} checked={keyHelper} onChange={setKeyHelper} testId="agent-key-helper" />}
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
