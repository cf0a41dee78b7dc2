import type { ReactNode, Ref } from 'react';
import { useI18n } from '../i18n/I18nProvider';
import { Field } from './Field';

interface Props {
  /** What the field holds; "(optional)" follows it. */
  label: ReactNode;
  value: string;
  onChange: (value: string) => void;
  placeholder: string;
  hint?: ReactNode;
  error?: string;
  /** A few lines of prose (a system prompt) rather than one line. */
  multiline?: boolean;
  /** A name to match exactly, not prose: no autocompletion, no spelling marks. */
  verbatim?: boolean;
  inputRef?: Ref<HTMLInputElement>;
  /** `<testId>` on the field, `<testId>-input` on its control. */
  testId: string;
}

/** A labelled text field a form can leave empty (a key's label, its quota group, a system prompt). */
export function OptionalTextField({ label, value, onChange, placeholder, hint, error, multiline = false, verbatim = false, inputRef, testId }: Props) {
  const { t } = useI18n();
  return (
    <Field
      label={
        <>
          {label} <span className="field__optional">({t('add.optional')})</span>
        </>
      }
      hint={hint}
      error={error}
      testId={testId}
    >
      {({ id, describedBy, invalid }) => {
        const control = {
          id,
          placeholder,
          'aria-invalid': invalid || undefined,
          'aria-describedby': describedBy,
          value,
          'data-testid': `${testId}-input`,
        };
        return multiline ? (
          <textarea {...control} className="input textarea textarea--short" onChange={(e) => onChange(e.target.value)} />
        ) : (
          <input
            {...control}
            ref={inputRef}
            className="input"
            autoComplete={verbatim ? 'off' : undefined}
            spellCheck={verbatim ? false : undefined}
            onChange={(e) => onChange(e.target.value)}
          />
        );
      }}
    </Field>
  );
}
