import { useId } from 'react';
import { useCommittedNumber } from '../../../../hooks/useCommittedNumber';
import { useI18n } from '../../../../i18n/I18nProvider';
import { parseWeight, stepWeight } from '../fields/schema';
import { errorText, fieldError } from '../../../../i18n/problems';

interface Props {
  weight: number;
  label: string;
  onSave: (weight: number) => Promise<unknown>;
  testId?: string;
}

/**
 * A weight edited in place, committed as `useCommittedNumber` says; under it, its error (in the
 * row's flow, so it never covers the row below) or that it was saved.
 */
export function WeightEditor({ weight, label, onSave, testId }: Props) {
  const { t } = useI18n();
  const errorId = useId();
  const field = useCommittedNumber({
    stored: weight,
    parse: (text) => {
      const parsed = parseWeight(text);
      return parsed.ok ? parsed : { ok: false, error: t(parsed.error) };
    },
    step: stepWeight,
    onSave,
    saveError: (e) => fieldError(t, e, 'weight') ?? errorText(t, e),
  });
  const { error } = field;

  return (
    <div className="weight-editor">
      <input
        className="input input--number input--compact"
        inputMode="numeric"
        autoComplete="off"
        aria-label={label}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? errorId : undefined}
        aria-busy={field.status === 'saving' || undefined}
        {...field.inputProps}
        data-testid={testId}
      />
      {error && (
        <p className="field__error weight-editor__error" id={errorId} role="alert" data-testid={testId ? `${testId}-error` : undefined}>
          {error === t('error.weightRange') ? (
            // The column is 64 px: the range is seen, the whole sentence is read.
            <>
              <span aria-hidden="true">{t('error.weightRangeShort')}</span>
              <span className="visually-hidden">{error}</span>
            </>
          ) : (
            error
          )}
        </p>
      )}
      {/* Said where it is seen: the saved weight, or nothing while it is edited or wrong. */}
      <span className="weight-editor__status" role="status" data-testid={testId ? `${testId}-status` : undefined}>
        {error ? '' : field.status === 'saving' ? t('general.saving') : field.status === 'saved' ? t('general.saved') : ''}
      </span>
    </div>
  );
}
