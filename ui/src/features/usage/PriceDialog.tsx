import { useId, useRef } from 'react';
import { Dialog } from '../../components/Dialog';
import { Field } from '../../components/Field';
import { FormActions } from '../../components/FormActions';
import { useI18n } from '../../i18n/I18nProvider';
import type { Price, SetPriceArgs } from '../../ipc/bindings';
import { useFieldForm } from '../../forms/useFieldForm';
import { PRICE_FIELDS, type PriceField, parsePriceForm, priceText } from './priceForm';

interface Props {
  /** The price to change; absent: a new one. */
  price?: Price;
  /** A new price's model, filled in (a model used without a price); the user may change it. */
  model?: string;
  /** Model names to suggest (the providers' lists). */
  models: readonly string[];
  /** Resolves once the price is stored; rejects with the backend's error, shown at its field. */
  onSave: (price: SetPriceArgs) => Promise<unknown>;
  onClose: () => void;
}

const PRICE_INPUTS = [
  { name: 'inputPerMillion', label: 'usagePage.priceInput', id: 'input' },
  { name: 'cachedInputPerMillion', label: 'usagePage.priceCached', id: 'cached' },
  { name: 'outputPerMillion', label: 'usagePage.priceOutput', id: 'output' },
] as const;

/**
 * Adds a model's price, or changes one (its model then stays: a price is stored per model).
 * Prices are US dollars per million tokens; the cached input price may stay empty.
 */
export function PriceDialog({ price, model, models, onSave, onClose }: Props) {
  const { t } = useI18n();
  const hintId = useId();
  const listId = useId();
  const inputs: Record<PriceField, React.RefObject<HTMLInputElement | null>> = {
    model: useRef<HTMLInputElement>(null),
    inputPerMillion: useRef<HTMLInputElement>(null),
    cachedInputPerMillion: useRef<HTMLInputElement>(null),
    outputPerMillion: useRef<HTMLInputElement>(null),
  };
  const { form, errors, formError, saving, update, submit } = useFieldForm({
    fields: PRICE_FIELDS,
    initial: () => (price ? priceText(price) : { ...priceText(), model: model ?? '' }),
    inputs,
    parse: parsePriceForm,
    save: async (value) => {
      await onSave(value);
      onClose();
    },
  });

  return (
    <Dialog
      title={price ? t('usagePage.editPriceTitle', { model: price.model }) : t('usagePage.addPriceTitle')}
      onClose={onClose}
      initialFocus={price || model ? inputs.inputPerMillion : inputs.model}
      describedBy={hintId}
      testId="price-dialog"
    >
      <form className="dialog__form" onSubmit={submit} noValidate>
        <p className="field__hint" id={hintId}>
          {t('usagePage.priceHint')}
        </p>
        {formError && (
          <p className="form-error" role="alert" data-testid="price-form-error">
            {formError}
          </p>
        )}
        {!price && (
          <Field label={t('usagePage.model')} hint={t('usagePage.modelHint')} error={errors.model} testId="price-model">
            {({ id, describedBy, invalid }) => (
              <>
                <input
                  ref={inputs.model}
                  id={id}
                  className="input"
                  list={listId}
                  autoComplete="off"
                  spellCheck={false}
                  aria-invalid={invalid || undefined}
                  aria-describedby={describedBy}
                  value={form.model}
                  onChange={(e) => update('model', e.target.value)}
                  data-testid="price-model-input"
                />
                <datalist id={listId}>
                  {models.map((model) => (
                    <option key={model} value={model} />
                  ))}
                </datalist>
              </>
            )}
          </Field>
        )}
        <div className="field-row usage-price-fields">
          {PRICE_INPUTS.map((field) => (
            <Field
              key={field.name}
              label={
                field.name === 'cachedInputPerMillion' ? (
                  <>
                    {t(field.label)} <span className="field__optional">({t('add.optional')})</span>
                  </>
                ) : (
                  t(field.label)
                )
              }
              hint={field.name === 'cachedInputPerMillion' ? t('usagePage.priceCachedHint') : undefined}
              error={errors[field.name]}
              testId={`price-${field.id}`}
            >
              {({ id, describedBy, invalid }) => (
                <div className="usage-price-input">
                  <span aria-hidden="true">$</span>
                  <input
                    ref={inputs[field.name]}
                    id={id}
                    className="input input--number"
                    inputMode="decimal"
                    autoComplete="off"
                    aria-invalid={invalid || undefined}
                    aria-describedby={describedBy}
                    value={form[field.name]}
                    onChange={(e) => update(field.name, e.target.value)}
                    data-testid={`price-${field.id}-input`}
                  />
                </div>
              )}
            </Field>
          ))}
        </div>
        <FormActions
          onCancel={onClose}
          busy={saving}
          label={t('usagePage.savePrice')}
          busyLabel={t('usagePage.savingPrice')}
          testId="price-submit"
          cancelTestId="price-cancel"
        />
      </form>
    </Dialog>
  );
}
