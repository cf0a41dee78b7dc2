import { useEffect, useId, useRef, useState } from 'react';
import { useI18n } from '../../i18n/I18nProvider';
import { parseMaxWait, stepMaxWait } from './maxWait';
import type { SettingsLoad } from './useAppSettings';
import { errorText, fieldError } from '../../i18n/problems';

interface Props {
  load: SettingsLoad;
  onSave: (seconds: number) => Promise<unknown>;
  onRetry: () => void;
}

/**
 * "Wait for a free key up to N seconds", two cells of the General grid: its label, and the
 * field with its unit, hint, feedback and error. Saved when changed (Enter, or focus leaving);
 * Escape puts the stored value back. An invalid value is not sent; its error stays until fixed.
 */
export function MaxWaitField({ load, onSave, onRetry }: Props) {
  const { t } = useI18n();
  const labelId = useId();
  if (load.kind !== 'loaded') {
    return (
      <>
        <span id={labelId} className="general__label--top">
          {t('general.maxWait')}
        </span>
        {load.kind === 'loading' ? (
          <p className="muted general__loading" aria-busy="true" aria-describedby={labelId}>
            {t('general.settingsLoading')}
          </p>
        ) : (
          <div className="form-error" role="alert" data-testid="max-wait-load-error">
            <p>{t('general.settingsLoadFailed', { message: errorText(t, load.error) })}</p>
            <button type="button" className="button" onClick={onRetry}>
              {t('providers.retry')}
            </button>
          </div>
        )}
      </>
    );
  }
  return <Editor labelId={labelId} seconds={load.settings.maxWaitSeconds} onSave={onSave} />;
}

function Editor({ labelId, seconds, onSave }: { labelId: string; seconds: number; onSave: (seconds: number) => Promise<unknown> }) {
  const { t } = useI18n();
  const inputId = useId();
  const unitId = useId();
  const hintId = useId();
  const errorId = useId();
  const [text, setText] = useState(String(seconds));
  const [editing, setEditing] = useState(false);
  const [error, setError] = useState<string>();
  const [status, setStatus] = useState<'idle' | 'saving' | 'saved'>('idle');
  const textRef = useRef(text);
  textRef.current = text;
  /** A save is running; `again`: the user committed another value meanwhile, save that next. */
  const saving = useRef({ running: false, again: false });

  // Follow the stored value unless the user is typing over it.
  useEffect(() => {
    if (!editing) setText(String(seconds));
  }, [seconds, editing]);

  async function commit() {
    if (saving.current.running) {
      saving.current.again = true;
      return;
    }
    const parsed = parseMaxWait(textRef.current);
    if (!parsed.ok) {
      setError(t(parsed.error));
      return;
    }
    setError(undefined);
    if (parsed.value === seconds) {
      setText(String(seconds));
      setEditing(false);
      return;
    }
    saving.current = { running: true, again: false };
    setStatus('saving');
    try {
      await onSave(parsed.value);
      setStatus('saved');
      setEditing(false);
    } catch (e) {
      setStatus('idle');
      setError(fieldError(t, e, 'maxWaitSeconds') ?? errorText(t, e));
    } finally {
      const { again } = saving.current;
      saving.current = { running: false, again: false };
      if (again) void commit();
    }
  }

  const describedBy = [unitId, error ? errorId : null, hintId].filter(Boolean).join(' ');
  return (
    <>
      <label id={labelId} htmlFor={inputId} className="general__label--top">
        {t('general.maxWait')}
      </label>
      <div className="general__control">
        <div className="general__inline">
          <input
            id={inputId}
            className="input input--number"
            inputMode="numeric"
            autoComplete="off"
            aria-labelledby={`${labelId} ${unitId}`}
            aria-describedby={describedBy}
            aria-invalid={error ? true : undefined}
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
                setText(String(seconds));
                setError(undefined);
              } else {
                const next = stepMaxWait(text, e.key);
                if (next !== null) {
                  e.preventDefault();
                  setText(next);
                  setError(undefined);
                  setStatus('idle');
                }
              }
            }}
            data-testid="max-wait-input"
          />
          <span id={unitId}>{t('general.seconds')}</span>
          <span className="general__status" role="status" data-testid="max-wait-status">
            {status === 'saving' ? t('general.saving') : status === 'saved' ? t('general.saved') : ''}
          </span>
        </div>
        {error && (
          <p className="field__error" id={errorId} role="alert" data-testid="max-wait-error">
            {error}
          </p>
        )}
        <p className="field__hint" id={hintId}>
          {t('general.maxWaitHint')}
        </p>
      </div>
    </>
  );
}
