import { useId } from 'react';
import { useCommittedNumber } from '../../hooks/useCommittedNumber';
import { CommittedNumberInput } from './CommittedNumberInput';
import { useI18n } from '../../i18n/I18nProvider';
import { parseSetting, SETTING_SPECS, stepSetting, type BackendSetting } from './backendSettings';
import type { UpdateSettingsArgs } from '../../ipc/bindings';
import type { SettingsLoad } from './useAppSettings';
import { errorText, fieldError } from '../../i18n/problems';

interface Props {
  load: SettingsLoad;
  onSave: (changes: UpdateSettingsArgs) => Promise<unknown>;
  onRetry: () => void;
}

/**
 * The settings the backend keeps, as rows of the General grid: loaded once for all of them (one
 * loading line, or one error with Try again), then a `SettingField` per setting.
 */
export function BackendSettingFields({ load, onSave, onRetry }: Props) {
  const { t } = useI18n();
  if (load.kind === 'loading') {
    return (
      <p className="muted general__loading general__wide" aria-busy="true">
        {t('general.settingsLoading')}
      </p>
    );
  }
  if (load.kind === 'failed') {
    return (
      <div className="form-error general__wide" role="alert" data-testid="settings-load-error">
        <p>{t('general.settingsLoadFailed', { message: errorText(t, load.error) })}</p>
        <button type="button" className="button" onClick={onRetry}>
          {t('providers.retry')}
        </button>
      </div>
    );
  }
  return (Object.keys(SETTING_SPECS) as BackendSetting[]).map((setting) => (
    <SettingField key={setting} setting={setting} stored={load.settings[setting]} onSave={(value) => onSave({ [setting]: value })} />
  ));
}

/**
 * One backend setting ("Wait for a free key up to N seconds"), two cells of the General grid:
 * its label, and the field with its unit, hint, feedback and error, committed as
 * `useCommittedNumber` says.
 */
function SettingField({ setting, stored, onSave }: { setting: BackendSetting; stored: number; onSave: (value: number) => Promise<unknown> }) {
  const spec = SETTING_SPECS[setting];
  const { t } = useI18n();
  const labelId = useId();
  const inputId = useId();
  const unitId = useId();
  const hintId = useId();
  const errorId = useId();
  const field = useCommittedNumber({
    stored,
    parse: (text) => {
      const parsed = parseSetting(spec, text);
      return parsed.ok ? parsed : { ok: false, error: t(parsed.error) };
    },
    step: (text, key) => stepSetting(spec, text, key),
    onSave,
    saveError: (e) => fieldError(t, e, setting) ?? errorText(t, e),
  });
  const { error } = field;

  const describedBy = [unitId, error ? errorId : null, hintId].filter(Boolean).join(' ');
  return (
    <>
      <label id={labelId} htmlFor={inputId} className="general__label--top">
        {t(spec.label)}
      </label>
      <div className="general__control">
        <CommittedNumberInput
          field={field}
          id={inputId}
          labelledBy={`${labelId} ${unitId}`}
          describedBy={describedBy}
          invalid={Boolean(error)}
          testId={spec.testId}
        >
          <span id={unitId}>{t(spec.unit)}</span>
        </CommittedNumberInput>
        {error && (
          <p className="field__error" id={errorId} role="alert" data-testid={`${spec.testId}-error`}>
            {error}
          </p>
        )}
        <p className="field__hint" id={hintId}>
          {t(spec.hint)}
        </p>
      </div>
    </>
  );
}
