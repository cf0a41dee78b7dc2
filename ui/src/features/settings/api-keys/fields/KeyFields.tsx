import { type ReactNode, type RefObject, useState } from 'react';
import { Field } from '../../../../components/Field';
import { Icon } from '../../../../components/Icon';
import { OptionalTextField } from '../../../../components/OptionalTextField';
import { useI18n } from '../../../../i18n/I18nProvider';
import { stepWeight } from './schema';

/** What each of a key form's fields is given. */
interface FieldProps {
  value: string;
  error?: string;
  onChange: (value: string) => void;
  inputRef?: RefObject<HTMLInputElement | null>;
  /** `<testId>` on the field, `<testId>-input` on its input. */
  testId: string;
}

/** A key's secret, hidden unless revealed (a `$NAME` reference is not a secret: it shows). */
export function KeySecretField({ value, error, onChange, inputRef, testId, label, hint, required }: FieldProps & { label: ReactNode; hint: ReactNode; required?: boolean }) {
  const { t } = useI18n();
  const [reveal, setReveal] = useState(false);
  const isEnvRef = value.trim().startsWith('$');
  return (
    <Field label={label} hint={hint} error={error} testId={testId}>
      {({ id, describedBy, invalid }) => (
        <div className="input-with-button">
          <input
            ref={inputRef}
            id={id}
            className="input input--mono"
            type={reveal || isEnvRef ? 'text' : 'password'}
            autoComplete="off"
            spellCheck={false}
            autoCapitalize="off"
            aria-invalid={invalid || undefined}
            aria-describedby={describedBy}
            aria-required={required || undefined}
            value={value}
            onChange={(e) => onChange(e.target.value)}
            data-testid={`${testId}-input`}
          />
          <button
            type="button"
            className="icon-button"
            aria-label={reveal ? t('add.hide') : t('add.show')}
            aria-pressed={reveal}
            title={reveal ? t('add.hide') : t('add.show')}
            onClick={() => setReveal((r) => !r)}
          >
            <Icon name={reveal ? 'eyeOff' : 'eye'} size={18} />
          </button>
        </div>
      )}
    </Field>
  );
}

/** A key's label, optional. */
export function KeyLabelField(props: FieldProps) {
  const { t } = useI18n();
  return <OptionalTextField {...props} label={t('add.label')} placeholder={t('add.labelPlaceholder')} />;
}

/** A key's weight; ArrowUp/ArrowDown step it within its bounds. */
export function KeyWeightField({ value, error, onChange, inputRef, testId }: FieldProps) {
  const { t } = useI18n();
  return (
    // The range error says what the hint says: while it shows, the hint is not repeated under it.
    <Field label={t('add.weight')} hint={error ? undefined : t('add.weightHint')} error={error} testId={testId}>
      {({ id, describedBy, invalid }) => (
        <input
          ref={inputRef}
          id={id}
          className="input input--number"
          inputMode="numeric"
          autoComplete="off"
          aria-invalid={invalid || undefined}
          aria-describedby={describedBy}
          value={value}
          onChange={(e) => onChange(e.target.value)}
          onKeyDown={(e) => {
            const next = stepWeight(value, e.key);
            if (next !== null) {
              e.preventDefault();
              onChange(next);
            }
          }}
          data-testid={`${testId}-input`}
        />
      )}
    </Field>
  );
}

/** A key's own limits in their fieldset, with the hint that says when they matter. */
export function KeyLimitsFieldset({ hintId, testId, children }: { hintId: string; testId: string; children: ReactNode }) {
  const { t } = useI18n();
  return (
    <fieldset className="fieldset" aria-describedby={hintId} data-testid={testId}>
      <legend className="fieldset__legend">
        {t('limits.legend')} <span className="field__optional">({t('add.optional')})</span>
      </legend>
      <p className="field__hint" id={hintId}>
        {t('limits.hint')}
      </p>
      {children}
    </fieldset>
  );
}
