import { useEffect, useId, useRef, useState } from 'react';
import { useI18n } from '../../../i18n/I18nProvider';
import { errorText, issueText, type Translate } from '../../../i18n/problems';
import type { Issue } from '../../../ipc/bindings';
import { IpcError } from '../../../ipc/client';
import { MAX_PORT, MIN_PORT, parsePort } from './port';

interface Props {
  /** The port the backend keeps. */
  port: number;
  onSave: (port: number) => Promise<unknown>;
  /** Why the endpoint could not start on the stored port, worded; shown as this field's error. */
  startProblem?: string;
}

/** A port issue in words: a range for the range codes (ports are written without digit grouping). */
function portIssueText(t: Translate, issue: Issue): string {
  if (issue.code === 'too_small' || issue.code === 'too_large' || issue.code === 'wrong_type') {
    return t('localApi.portRange', { min: MIN_PORT, max: MAX_PORT });
  }
  return issueText(t, issue);
}

/**
 * The local API's port: saved when changed (Enter, or focus leaving), Escape puts the stored
 * value back. A wrong port is not sent; its error, or the backend's, stays at the field until fixed.
 */
export function PortField({ port, onSave, startProblem }: Props) {
  const { t } = useI18n();
  const inputId = useId();
  const hintId = useId();
  const errorId = useId();
  const [text, setText] = useState(String(port));
  const [editing, setEditing] = useState(false);
  const [error, setError] = useState<string>();
  const [status, setStatus] = useState<'idle' | 'saving' | 'saved'>('idle');
  const textRef = useRef(text);
  textRef.current = text;

  useEffect(() => {
    if (!editing) setText(String(port));
  }, [port, editing]);

  async function commit() {
    const parsed = parsePort(textRef.current);
    if (!parsed.ok) {
      setError(portIssueText(t, parsed.issue));
      return;
    }
    setError(undefined);
    if (parsed.port === port) {
      setText(String(port));
      setEditing(false);
      return;
    }
    setStatus('saving');
    try {
      await onSave(parsed.port);
      setStatus('saved');
      setEditing(false);
    } catch (e) {
      setStatus('idle');
      const issue = e instanceof IpcError ? e.issueAt('port') : undefined;
      setError(issue ? portIssueText(t, issue) : errorText(t, e));
    }
  }

  const shown = error ?? (editing ? undefined : startProblem);
  const describedBy = [shown ? errorId : null, hintId].filter(Boolean).join(' ');
  return (
    <div className="field local-api__port">
      <label className="field__label" htmlFor={inputId}>
        {t('localApi.port')}
      </label>
      <div className="general__inline">
        <input
          id={inputId}
          className="input input--number"
          inputMode="numeric"
          autoComplete="off"
          aria-describedby={describedBy}
          aria-invalid={shown ? true : undefined}
          aria-busy={status === 'saving' || undefined}
          value={text}
          onFocus={() => setEditing(true)}
          onChange={(e) => {
            setEditing(true);
            setText(e.target.value);
            setError(undefined);
            setStatus('idle');
          }}
          onBlur={() => void commit()}
          onKeyDown={(e) => {
            if (e.key === 'Enter') {
              e.preventDefault();
              void commit();
            } else if (e.key === 'Escape') {
              e.preventDefault();
              setText(String(port));
              setError(undefined);
            }
          }}
          data-testid="local-api-port-input"
        />
        <span className="general__status" role="status" data-testid="local-api-port-status">
          {status === 'saving' ? t('general.saving') : status === 'saved' ? t('general.saved') : ''}
        </span>
      </div>
      {shown && (
        <p className="field__error" id={errorId} role="alert" data-testid="local-api-port-error">
          {shown}
        </p>
      )}
      <p className="field__hint" id={hintId}>
        {t('localApi.portHint')}
      </p>
    </div>
  );
}
