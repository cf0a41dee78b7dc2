import { useId, useRef, useState, type FormEvent } from 'react';
import { Dialog } from '../../../components/Dialog';
import { useI18n } from '../../../i18n/I18nProvider';
import { placeBackendError } from './backendErrors';
import { LIMIT_FIELDS, LimitFields, type LimitField } from './LimitFields';
import { limitsText, parseLimitsForm, worded, type Limits, type LimitsForm } from './schema';

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
  const [form, setForm] = useState<Required<LimitsForm>>(() => limitsText(current));
  const [errors, setErrors] = useState<Partial<Record<LimitField, string>>>({});
  const [formError, setFormError] = useState<string>();
  const [saving, setSaving] = useState(false);
  const inputs = { rpmLimit: useRef<HTMLInputElement>(null), maxConcurrent: useRef<HTMLInputElement>(null) };

  function focusFirstError(placed: Partial<Record<LimitField, string>>) {
    const first = LIMIT_FIELDS.find((f) => placed[f]);
    if (first) inputs[first].current?.focus();
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (saving) return;
    setFormError(undefined);
    const parsed = parseLimitsForm(form);
    if (!parsed.ok) {
      const placed = worded(parsed.errors, t);
      setErrors(placed);
      focusFirstError(placed);
      return;
    }
    setSaving(true);
    try {
      await onSave(parsed.value);
      onClose();
    } catch (error) {
      const placed = placeBackendError(t, error, LIMIT_FIELDS);
      setErrors(placed.fields);
      setFormError(placed.form);
      focusFirstError(placed.fields);
      setSaving(false);
    }
  }

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
          onChange={(field, value) => {
            setForm((f) => ({ ...f, [field]: value }));
            setErrors(({ [field]: _, ...rest }) => rest);
          }}
          inputs={inputs}
          testId="key-limits"
        />
        <div className="dialog__actions">
          <button type="button" className="button" onClick={onClose}>
            {t('common.cancel')}
          </button>
          <button type="submit" className="button button--primary" aria-busy={saving || undefined} data-testid="key-limits-submit">
            {saving ? t('limits.saving') : t('limits.save')}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
