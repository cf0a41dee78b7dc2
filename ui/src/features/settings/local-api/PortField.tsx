import { useId } from 'react';
import { useCommittedNumber } from '../../../hooks/useCommittedNumber';
import { CommittedNumberInput } from '../CommittedNumberInput';
import { useI18n } from '../../../i18n/I18nProvider';
import { errorText, issueText, type Translate } from '../../../i18n/problems';
import type { Issue } from '../../../ipc/bindings';
import { IpcError } from '../../../ipc/client';
import { parsePort } from './port';

interface Props {
  /** The port the backend keeps. */
  port: number;
  onSave: (port: number) => Promise<unknown>;
  /** Why the endpoint could not listen on the port last asked for, worded; this field's error. */
  startProblem?: string;
}

/** A port issue in words: a range for the range codes (ports are written without digit grouping). */
function portIssueText(t: Translate, issue: Issue): string {
  if (issue.code === 'too_small' || issue.code === 'too_large' || issue.code === 'wrong_type') {
    return t('localApi.portRange');
  }
  return issueText(t, issue);
}

/**
 * The local API's port, committed as `useCommittedNumber` says. Why the endpoint could not listen
 * on the port asked for shows as the field's error while the user is not typing another.
 */
export function PortField({ port, onSave, startProblem }: Props) {
  const { t } = useI18n();
  const inputId = useId();
  const hintId = useId();
  const errorId = useId();
  const field = useCommittedNumber({
    stored: port,
    parse: (text) => {
      const parsed = parsePort(text);
      return parsed.ok ? { ok: true, value: parsed.port } : { ok: false, error: portIssueText(t, parsed.issue) };
    },
    onSave,
    saveError: (e) => {
      const issue = e instanceof IpcError ? e.issueAt('port') : undefined;
      return issue ? portIssueText(t, issue) : errorText(t, e);
    },
  });
  const { error, editing } = field;

  const shown = error ?? (editing ? undefined : startProblem);
  const describedBy = [shown ? errorId : null, hintId].filter(Boolean).join(' ');
  return (
    <div className="field local-api__port">
      <label className="field__label" htmlFor={inputId}>
        {t('localApi.port')}
      </label>
      <CommittedNumberInput field={field} id={inputId} describedBy={describedBy} invalid={Boolean(shown)} testId="local-api-port" />
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
