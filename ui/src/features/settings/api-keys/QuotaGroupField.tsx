import { Field } from '../../../components/Field';
import { useI18n } from '../../../i18n/I18nProvider';

interface Props {
  value: string;
  onChange: (value: string) => void;
  /** What the field is for here: one key, or every pasted key. */
  hint: string;
  error?: string;
  inputRef?: React.Ref<HTMLInputElement>;
  testId: string;
}

/** A key's quota group, optional free text: the keys a provider counts together share one. */
export function QuotaGroupField({ value, onChange, hint, error, inputRef, testId }: Props) {
  const { t } = useI18n();
  return (
    <Field
      label={
        <>
          {t('add.quotaGroup')} <span className="field__optional">({t('add.optional')})</span>
        </>
      }
      hint={hint}
      error={error}
      testId={testId}
    >
      {({ id, describedBy, invalid }) => (
        <input
          ref={inputRef}
          id={id}
          className="input"
          autoComplete="off"
          spellCheck={false}
          placeholder={t('add.quotaGroupPlaceholder')}
          aria-invalid={invalid || undefined}
          aria-describedby={describedBy}
          value={value}
          onChange={(e) => onChange(e.target.value)}
          data-testid={`${testId}-input`}
        />
      )}
    </Field>
  );
}
