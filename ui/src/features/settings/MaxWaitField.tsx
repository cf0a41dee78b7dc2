import { useId } from 'react';
import { useCommittedNumber } from '../../hooks/useCommittedNumber';
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
 * field with its unit, hint, feedback and error, committed as `useCommittedNumber` says.
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
  const field = useCommittedNumber({
    stored: seconds,
    parse: (text) => {
      const parsed = parseMaxWait(text);
      return parsed.ok ? parsed : { ok: false, error: t(parsed.error) };
    },
    step: stepMaxWait,
    onSave,
    saveError: (e) => fieldError(t, e, 'maxWaitSeconds') ?? errorText(t, e),
  });
  const { error, status } = field;

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
            {...field.inputProps}
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
