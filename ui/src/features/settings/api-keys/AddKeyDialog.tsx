import { useId, useRef, useState } from 'react';
import { Dialog } from '../../../components/Dialog';
import { FormActions } from '../../../components/FormActions';
import { Field } from '../../../components/Field';
import { Icon } from '../../../components/Icon';
import { useI18n } from '../../../i18n/I18nProvider';
import { LimitFields } from './LimitFields';
import { QuotaGroupField } from './QuotaGroupField';
import { parseAddKeyForm, stepWeight, type AddKeyForm, type NewKey } from './schema';
import { useFieldForm } from '../../../forms/useFieldForm';

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
  const [reveal, setReveal] = useState(false);
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
        <Field
          label={t('add.apiKey')}
          hint={isEnvRef && !errors.apiKey ? t('add.envRefNote', { name: form.apiKey.trim().slice(1) }) : t('add.apiKeyHint')}
          error={errors.apiKey}
          testId="add-key-apikey"
        >
          {({ id, describedBy, invalid }) => (
            <div className="input-with-button">
              <input
                ref={keyInput}
                id={id}
                className="input input--mono"
                type={reveal || isEnvRef ? 'text' : 'password'}
                autoComplete="off"
                spellCheck={false}
                autoCapitalize="off"
                aria-invalid={invalid || undefined}
                aria-describedby={describedBy}
                aria-required="true"
                value={form.apiKey}
                onChange={(e) => update('apiKey', e.target.value)}
                data-testid="add-key-apikey-input"
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
        <div className="field-row">
          <Field
            label={
              <>
                {t('add.label')} <span className="field__optional">({t('add.optional')})</span>
              </>
            }
            error={errors.label}
            testId="add-key-label"
          >
            {({ id, describedBy, invalid }) => (
              <input
                ref={inputs.label}
                id={id}
                className="input"
                placeholder={t('add.labelPlaceholder')}
                aria-invalid={invalid || undefined}
                aria-describedby={describedBy}
                value={form.label}
                onChange={(e) => update('label', e.target.value)}
                data-testid="add-key-label-input"
              />
            )}
          </Field>
          <Field label={t('add.weight')} hint={t('add.weightHint')} error={errors.weight} testId="add-key-weight">
            {({ id, describedBy, invalid }) => (
              <input
                ref={inputs.weight}
                id={id}
                className="input input--number"
                inputMode="numeric"
                autoComplete="off"
                aria-invalid={invalid || undefined}
                aria-describedby={describedBy}
                value={form.weight}
                onChange={(e) => update('weight', e.target.value)}
                onKeyDown={(e) => {
                  const next = stepWeight(form.weight, e.key);
                  if (next !== null) {
                    e.preventDefault();
                    update('weight', next);
                  }
                }}
                data-testid="add-key-weight-input"
              />
            )}
          </Field>
        </div>
        <QuotaGroupField
          value={form.quotaGroup}
          onChange={(value) => update('quotaGroup', value)}
          hint={t('add.quotaGroupHint')}
          error={errors.quotaGroup}
          inputRef={inputs.quotaGroup}
          testId="add-key-quota-group"
        />
        <fieldset className="fieldset" aria-describedby={limitsHintId} data-testid="add-key-limits">
          <legend className="fieldset__legend">
            {t('limits.legend')} <span className="field__optional">({t('add.optional')})</span>
          </legend>
          <p className="field__hint" id={limitsHintId}>
            {t('limits.hint')}
          </p>
          <LimitFields values={form} errors={errors} onChange={update} inputs={inputs} testId="add-key" />
        </fieldset>
        <FormActions onCancel={onClose} busy={saving} label={t('add.submit')} busyLabel={t('add.saving')} testId="add-key-submit" />
      </form>
    </Dialog>
  );
}
