import { useId, useRef, useState } from 'react';
import { Dialog } from '../../../components/Dialog';
import { Field } from '../../../components/Field';
import { FormActions } from '../../../components/FormActions';
import { useI18n } from '../../../i18n/I18nProvider';
import { errorText, fieldError } from '../../../i18n/problems';
import type { AgentState } from '../../../ipc/bindings';
import { LIMITS } from '../../../ipc/bindings';
import { IpcError } from '../../../ipc/client';
import { AGENT_NAMES } from './agents';

interface Props {
  agent: AgentState;
  /** A connected agent holds the local API's token: none need be given. */
  tokenKnown: boolean;
  /** Models to suggest: those the local API serves in the agent's API, and the routes' globs' targets. */
  models: readonly string[];
  onConnect: (options: { token?: string; model?: string }) => Promise<unknown>;
  onClose: () => void;
}

/**
 * Connect (or connect again): names the files Keypool will change (after keeping a copy), takes
 * the model the agent should ask for (blank: its own choice) and, when no connected agent holds
 * it, the local API's token. A refusal is shown at its field, or above the buttons when it is
 * about a file (one Keypool cannot merge is named and left as it is).
 */
export function ConnectAgentDialog({ agent, tokenKnown, models, onConnect, onClose }: Props) {
  const { t } = useI18n();
  const name = AGENT_NAMES[agent.agent];
  const [model, setModel] = useState(agent.connection?.model ?? '');
  const [token, setToken] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const first = useRef<HTMLInputElement>(null);
  const bodyId = useId();
  const listId = useId();
  const tokenError = fieldError(t, error, 'token');
  const modelError = fieldError(t, error, 'model');
  const general = error && !tokenError && !modelError ? errorText(t, error) : undefined;
  const needsToken = !tokenKnown || (error instanceof IpcError && error.issueAt('token') !== undefined);

  async function submit(event: React.FormEvent) {
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    setError(undefined);
    try {
      await onConnect({ model: model.trim() || undefined, token: needsToken && token.trim() ? token.trim() : undefined });
      onClose();
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  }

  return (
    <Dialog title={t(agent.connection ? 'agents.reconnectTitle' : 'agents.connectTitle', { name })} onClose={onClose} initialFocus={first} describedBy={bodyId} testId="agent-connect-dialog">
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
        {needsToken && (
          <Field label={t('agents.token')} hint={t('agents.tokenHint')} error={tokenError} testId="agent-token">
            {({ id, describedBy, invalid }) => (
              <input
                id={id}
                type="password"
                className="input input--mono"
                value={token}
                onChange={(e) => setToken(e.target.value)}
                aria-describedby={describedBy}
                aria-invalid={invalid || undefined}
                maxLength={LIMITS.apiKey.maxChars}
                spellCheck={false}
                autoComplete="off"
                data-testid="agent-token-input"
              />
            )}
          </Field>
        )}
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
