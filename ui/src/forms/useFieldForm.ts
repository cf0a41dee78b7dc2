import { type FormEvent, type RefObject, useState } from 'react';
import { useI18n } from '../i18n/I18nProvider';
import { type Parsed, worded } from './fieldErrors';
import { placeBackendError } from './placeBackendError';

interface Options<F extends string, V> {
  /** The fields in the order they are shown: the first with an error gets the focus. */
  fields: readonly F[];
  initial: () => Record<F, string>;
  inputs: Record<F, RefObject<HTMLInputElement | null>>;
  parse: (form: Record<F, string>) => Parsed<V, F>;
  /** Stores the checked value; rejects with the backend's error, which is placed at its field. */
  save: (value: V) => Promise<unknown>;
  /** Where a `conflict` belongs (e.g. the key that is already in the pool). */
  conflictField?: F;
  /** The backend's path of a field's issues, where it is not the field's name (`limits.rpmLimit`). */
  issuePaths?: Partial<Record<F, string>>;
}

/**
 * A dialog's form: the text of each field, the errors at them (the UI's own checks first,
 * then the backend's), one above the form when no field is to blame, and the focus moved to the
 * first field in error. Submitting twice while a save runs sends once.
 */
export function useFieldForm<F extends string, V>({ fields, initial, inputs, parse, save, conflictField, issuePaths }: Options<F, V>) {
  const { t } = useI18n();
  const [form, setForm] = useState(initial);
  const [errors, setErrors] = useState<Partial<Record<F, string>>>({});
  const [formError, setFormError] = useState<string>();
  const [saving, setSaving] = useState(false);

  function update(field: F, value: string) {
    setForm((f) => ({ ...f, [field]: value }));
    setErrors(({ [field]: _, ...rest }) => rest as Partial<Record<F, string>>);
  }

  function place(placed: Partial<Record<F, string>>) {
    setErrors(placed);
    const first = fields.find((f) => placed[f]);
    if (first) inputs[first].current?.focus();
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (saving) return;
    setFormError(undefined);
    const parsed = parse(form);
    if (!parsed.ok) {
      place(worded(parsed.errors, t));
      return;
    }
    setSaving(true);
    try {
      await save(parsed.value);
    } catch (error) {
      const placed = placeBackendError(t, error, fields, conflictField, issuePaths);
      place(placed.fields);
      setFormError(placed.form);
    } finally {
      // A form that stays after saving (Settings → Team) can be sent again.
      setSaving(false);
    }
  }

  /** Back to the initial text (the add form drops a stored secret with it before closing). */
  function reset() {
    setForm(initial());
  }

  return { form, errors, formError, saving, update, submit, reset };
}
