import { useId, useRef } from 'react';
import { Dialog } from '../../../../components/Dialog';
import { FormActions } from '../../../../components/FormActions';
import { useFieldForm } from '../../../../forms/useFieldForm';
import { useI18n } from '../../../../i18n/I18nProvider';
import type { ApiKey } from '../../../../ipc/bindings';
import type { ApiKeyChanges } from '../../../../ipc/llmConfig';
import { KeyLabelField, KeyLimitsFieldset, KeySecretField, KeyWeightField } from '../fields/KeyFields';
import { LimitFields } from '../fields/LimitFields';
import { QuotaGroupField } from '../fields/QuotaGroupField';
import { editKeyText, parseEditKeyForm } from '../fields/schema';

const FIELDS = ['label', 'weight', 'quotaGroup', 'rpmLimit', 'maxConcurrent', 'apiKey'] as const;

interface Props {
  /** How the key is known (its label or preview). */
  name: string;
  current: ApiKey;
  /** Resolves once the list shows the changes; rejects with the backend's error. */
  onSave: (changes: ApiKeyChanges) => Promise<unknown>;
  onClose: () => void;
  returnFocus?: () => HTMLElement | null | undefined;
}

/**
 * Edits a key: its label, weight, own limits and quota group, and replaces its secret (which is
 * kept where an added key is: the system keychain when there is one). Only what changed is sent,
 * in one write; nothing changed closes the dialog. A new secret lives only in this dialog's
 * state while typed, and is dropped once stored.
 */
export function EditKeyDialog({ name, current, onSave, onClose, returnFocus }: Props) {
  const { t } = useI18n();
  const limitsHintId = useId();
  const inputs = {
    label: useRef<HTMLInputElement>(null),
    weight: useRef<HTMLInputElement>(null),
    rpmLimit: useRef<HTMLInputElement>(null),
    maxConcurrent: useRef<HTMLInputElement>(null),
    quotaGroup: useRef<HTMLInputElement>(null),
    apiKey: useRef<HTMLInputElement>(null),
  };
  const { form, errors, formError, saving, update, submit, reset } = useFieldForm({
    fields: FIELDS,
    initial: () => editKeyText(current),
    inputs,
    parse: (typed) => parseEditKeyForm(typed, current),
    save: async (changes) => {
      if (Object.keys(changes).length > 0) await onSave(changes);
      reset(); // a new secret is stored: drop it before closing
      onClose();
    },
    conflictField: 'apiKey',
    issuePaths: { rpmLimit: 'limits.rpmLimit', maxConcurrent: 'limits.maxConcurrent' },
  });

  return (
    <Dialog title={t('edit.title', { name })} onClose={onClose} initialFocus={inputs.label} returnFocus={returnFocus} testId="edit-key-dialog">
      <form className="dialog__form" onSubmit={submit} noValidate>
        {formError && (
          <p className="form-error" role="alert" data-testid="edit-key-form-error">
            {formError}
          </p>
        )}
        {/* Add key's order (label and weight, quota group, limits); the key itself last, as an
            optional replacement rather than the field the dialog is for. */}
        <div className="field-row">
          <KeyLabelField value={form.label} error={errors.label} onChange={(value) => update('label', value)} inputRef={inputs.label} testId="edit-key-label" />
          <KeyWeightField value={form.weight} error={errors.weight} onChange={(value) => update('weight', value)} inputRef={inputs.weight} testId="edit-key-weight" />
        </div>
        <QuotaGroupField
          value={form.quotaGroup}
          onChange={(value) => update('quotaGroup', value)}
          hint={t('add.quotaGroupHint')}
          error={errors.quotaGroup}
          inputRef={inputs.quotaGroup}
          testId="edit-key-quota-group"
        />
        <KeyLimitsFieldset hintId={limitsHintId} testId="edit-key-limits">
          <LimitFields values={form} errors={errors} onChange={update} inputs={inputs} testId="edit-key" />
        </KeyLimitsFieldset>
        <KeySecretField
          label={
            <>
              {t('edit.secret')} <span className="field__optional">({t('add.optional')})</span>
            </>
          }
          hint={t('edit.secretHint', { preview: current.apiKeyPreview })}
          value={form.apiKey}
          error={errors.apiKey}
          onChange={(value) => update('apiKey', value)}
          inputRef={inputs.apiKey}
          testId="edit-key-apikey"
        />
        <FormActions onCancel={onClose} busy={saving} label={t('edit.submit')} busyLabel={t('edit.saving')} testId="edit-key-submit" />
      </form>
    </Dialog>
  );
}
