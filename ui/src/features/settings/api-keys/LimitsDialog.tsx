import { useId, useRef } from 'react';
import { Dialog } from '../../../components/Dialog';
import { FormActions } from '../../../components/FormActions';
import { useI18n } from '../../../i18n/I18nProvider';
import { LIMIT_FIELDS, LimitFields } from './LimitFields';
import { limitsText, parseLimitsForm, type Limits } from './schema';
import { useFieldForm } from '../../../forms/useFieldForm';

interface Props {
  name: string;
  /** The key's stored limits; null: none. */
  current: { rpmLimit: number | null; maxConcurrent: number | null };
  /** Resolves once the list shows the new limits; rejects with the backend's error. */
  onSave: (limits: Limits) => Promise<unknown>;
  onClose: () => void;
  returnFocus?: () => HTMLElement | null | undefined;
}

/** Sets a key's own limits; both are replaced, and an empty field removes its limit. */
export function LimitsDialog({ name, current, onSave, onClose, returnFocus }: Props) {
  const { t } = useI18n();
  const hintId = useId();
  const inputs = { rpmLimit: useRef<HTMLInputElement>(null), maxConcurrent: useRef<HTMLInputElement>(null) };
  const { form, errors, formError, saving, update, submit } = useFieldForm({
    fields: LIMIT_FIELDS,
    initial: () => limitsText(current),
    inputs,
    parse: parseLimitsForm,
    save: async (limits) => {
      await onSave(limits);
      onClose();
    },
  });

  return (
    <Dialog title={t('limits.title', { name })} onClose={onClose} initialFocus={inputs.rpmLimit} returnFocus={returnFocus} describedBy={hintId} testId="key-limits-dialog">
      <form className="dialog__form" onSubmit={submit} noValidate>
        <p className="field__hint" id={hintId}>
          {t('limits.hint')}
        </p>
        {formError && (
          <p className="form-error" role="alert" data-testid="key-limits-form-error">
            {formError}
          </p>
        )}
        <LimitFields
          values={form}
          errors={errors}
          onChange={update}
          inputs={inputs}
          testId="key-limits"
        />
        <FormActions onCancel={onClose} busy={saving} label={t('limits.save')} busyLabel={t('limits.saving')} testId="key-limits-submit" />
      </form>
    </Dialog>
  );
}
