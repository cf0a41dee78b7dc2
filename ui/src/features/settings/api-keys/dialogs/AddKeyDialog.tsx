import { useId, useRef } from 'react';
import { Dialog } from '../../../../components/Dialog';
import { FormActions } from '../../../../components/FormActions';
import { useI18n } from '../../../../i18n/I18nProvider';
import { KeyLabelField, KeyLimitsFieldset, KeySecretField, KeyWeightField } from '../fields/KeyFields';
import { LimitFields } from '../fields/LimitFields';
import { QuotaGroupField } from '../fields/QuotaGroupField';
import { parseAddKeyForm, type AddKeyForm, type NewKey } from '../fields/schema';
import { useFieldForm } from '../../../../forms/useFieldForm';

const FIELDS = ['apiKey', 'label', 'weight', 'quotaGroup', 'rpmLimit', 'maxConcurrent'] as const;

interface Props {
  /** Resolves once the new key is in the list; rejects with the backend's error. */
  onAdd: (key: NewKey) => Promise<unknown>;
  onClose: () => void;
  returnFocus?: () => HTMLElement | null | undefined;
}

const EMPTY: Required<AddKeyForm> = { apiKey: '', label: '', weight: '1', quotaGroup: '', rpmLimit: '', maxConcurrent: '' };

/**
 * The Add key form. The secret lives only in this dialog's state while it is typed, and is wiped
 * once the backend has stored it (the dialog then closes and unmounts).
 */
export function AddKeyDialog({ onAdd, onClose, returnFocus }: Props) {
  const { t } = useI18n();
  const limitsHintId = useId();
  const keyInput = useRef<HTMLInputElement>(null);
  const inputs = {
    apiKey: keyInput,
    label: useRef<HTMLInputElement>(null),
    weight: useRef<HTMLInputElement>(null),
    quotaGroup: useRef<HTMLInputElement>(null),
    rpmLimit: useRef<HTMLInputElement>(null),
    maxConcurrent: useRef<HTMLInputElement>(null),
  };

  const { form, errors, formError, saving, update, submit, reset } = useFieldForm({
    fields: FIELDS,
    initial: () => EMPTY,
    inputs,
    parse: parseAddKeyForm,
    save: async (key) => {
      await onAdd(key);
      reset(); // the secret is stored: drop it before closing
      onClose();
    },
    conflictField: 'apiKey',
  });
  const isEnvRef = form.apiKey.trim().startsWith('$');

  return (
    <Dialog title={t('add.title')} onClose={onClose} initialFocus={keyInput} returnFocus={returnFocus} testId="add-key-dialog">
      <form className="dialog__form" onSubmit={submit} noValidate>
        {formError && (
          <p className="form-error" role="alert" data-testid="add-key-form-error">
            {formError}
          </p>
        )}
        <KeySecretField
          label={t('add.apiKey')}
          hint={isEnvRef && !errors.apiKey ? t('add.envRefNote', { name: form.apiKey.trim().slice(1) }) : t('add.apiKeyHint')}
          value={form.apiKey}
          error={errors.apiKey}
          onChange={(value) => update('apiKey', value)}
          inputRef={keyInput}
          required
          testId="add-key-apikey"
        />
        <div className="field-row">
          <KeyLabelField value={form.label} error={errors.label} onChange={(value) => update('label', value)} inputRef={inputs.label} testId="add-key-label" />
          <KeyWeightField value={form.weight} error={errors.weight} onChange={(value) => update('weight', value)} inputRef={inputs.weight} testId="add-key-weight" />
        </div>
        <QuotaGroupField
          value={form.quotaGroup}
          onChange={(value) => update('quotaGroup', value)}
          hint={t('add.quotaGroupHint')}
          error={errors.quotaGroup}
          inputRef={inputs.quotaGroup}
          testId="add-key-quota-group"
        />
        <KeyLimitsFieldset hintId={limitsHintId} testId="add-key-limits">
          <LimitFields values={form} errors={errors} onChange={update} inputs={inputs} testId="add-key" />
        </KeyLimitsFieldset>
        <FormActions onCancel={onClose} busy={saving} label={t('add.submit')} busyLabel={t('add.saving')} testId="add-key-submit" />
      </form>
    </Dialog>
  );
}
