import type { RefObject } from 'react';
import { Field } from '../../../../components/Field';
import { useI18n } from '../../../../i18n/I18nProvider';
import type { LimitsForm } from './schema';

export type LimitField = keyof LimitsForm;
export const LIMIT_FIELDS = ['rpmLimit', 'maxConcurrent'] as const satisfies readonly LimitField[];

interface Props {
  values: Required<LimitsForm>;
  errors: Partial<Record<LimitField, string>>;
  onChange: (field: LimitField, value: string) => void;
  inputs: Record<LimitField, RefObject<HTMLInputElement | null>>;
  /** Prefix of the fields' test ids (`add-key` → `add-key-rpm-input`). */
  testId: string;
}

/** A key's own limits, side by side: requests per minute and requests at once; empty is none. */
export function LimitFields({ values, errors, onChange, inputs, testId }: Props) {
  const { t } = useI18n();
  const fields = [
    { name: 'rpmLimit', label: t('limits.rpm'), hint: t('limits.rpmHint'), id: 'rpm' },
    { name: 'maxConcurrent', label: t('limits.concurrent'), hint: t('limits.concurrentHint'), id: 'concurrent' },
  ] as const;
  return (
    <div className="field-row field-row--even">
      {fields.map((field) => (
        <Field key={field.name} label={field.label} hint={field.hint} error={errors[field.name]} testId={`${testId}-${field.id}`}>
          {({ id, describedBy, invalid }) => (
            <input
              ref={inputs[field.name]}
              id={id}
              className="input input--number"
              inputMode="numeric"
              autoComplete="off"
              placeholder={t('limits.none')}
              aria-invalid={invalid || undefined}
              aria-describedby={describedBy}
              value={values[field.name]}
              onChange={(e) => onChange(field.name, e.target.value)}
              data-testid={`${testId}-${field.id}-input`}
            />
          )}
        </Field>
      ))}
    </div>
  );
}
