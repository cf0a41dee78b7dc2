import type { ReactNode } from 'react';
import type { CommittedNumber } from '../../hooks/useCommittedNumber';
import { useI18n } from '../../i18n/I18nProvider';

interface Props {
  field: CommittedNumber;
  id: string;
  /** The label's id and anything else that names the input (its unit); the `<label for>` otherwise. */
  labelledBy?: string;
  describedBy: string;
  invalid: boolean;
  /** `<testId>-input` and `<testId>-status`. */
  testId: string;
  /** Between the input and its status: the unit. */
  children?: ReactNode;
}

/**
 * The input of a `useCommittedNumber` field, with its save status beside it ("Saving…", "Saved"):
 * never "Saved" beside an error (a port saved that the endpoint cannot listen on).
 */
export function CommittedNumberInput({ field, id, labelledBy, describedBy, invalid, testId, children }: Props) {
  const { t } = useI18n();
  const { status } = field;
  return (
    <div className="general__inline">
      <input
        id={id}
        className="input input--number"
        inputMode="numeric"
        autoComplete="off"
        aria-labelledby={labelledBy}
        aria-describedby={describedBy}
        aria-invalid={invalid || undefined}
        aria-busy={status === 'saving' || undefined}
        {...field.inputProps}
        data-testid={`${testId}-input`}
      />
      {children}
      <span className="general__status" role="status" data-testid={`${testId}-status`}>
        {status === 'saving' ? t('general.saving') : status === 'saved' && !invalid ? t('general.saved') : ''}
      </span>
    </div>
  );
}
