import { useMemo, useRef, useState, type FormEvent } from 'react';
import { Dialog } from '../../../components/Dialog';
import { FormActions } from '../../../components/FormActions';
import { Field } from '../../../components/Field';
import { useI18n } from '../../../i18n/I18nProvider';
import { errorText as errorWords, fieldError } from '../../../i18n/problems';
import { QuotaGroupField } from './QuotaGroupField';
import { parsePastedKeys, parseQuotaGroup, parseWeight, stepWeight } from './schema';

interface Props {
  /** Resolves with the key as stored. */
  onAdd: (key: { apiKey: string; weight: number; quotaGroup?: string }) => Promise<{ id: string }>;
  /** Called with the ids of the keys added when the dialog closes (none: nothing was added). */
  onClose: (added: string[]) => void;
  returnFocus?: () => HTMLElement | null | undefined;
}

interface LineError {
  line: number;
  message: string;
}

/**
 * Paste several keys, one per line. Each line is checked like a single key; valid lines are added
 * one by one, and lines that failed stay in the box with their reason, the added ones leave it.
 */
export function PasteKeysDialog({ onAdd, onClose, returnFocus }: Props) {
  const { t } = useI18n();
  const [text, setText] = useState('');
  const [weight, setWeight] = useState('1');
  const [quotaGroup, setQuotaGroup] = useState('');
  const [quotaGroupError, setQuotaGroupError] = useState<string>();
  const [lineErrors, setLineErrors] = useState<LineError[]>([]);
  const [keysError, setKeysError] = useState<string>();
  const [weightError, setWeightError] = useState<string>();
  const [added, setAdded] = useState<string[]>([]);
  const [saving, setSaving] = useState(false);
  const textarea = useRef<HTMLTextAreaElement>(null);

  const lines = useMemo(() => parsePastedKeys(text), [text]);

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (saving) return;
    const parsedWeight = parseWeight(weight);
    setWeightError(parsedWeight.ok ? undefined : t(parsedWeight.error));
    const group = parseQuotaGroup(quotaGroup);
    setQuotaGroupError(group.ok ? undefined : t(group.error));
    if (lines.length === 0) {
      setKeysError(t('bulk.none'));
      textarea.current?.focus();
      return;
    }
    const invalid = lines.flatMap((l) => (l.error ? [{ line: l.line, message: t(l.error) }] : []));
    if (invalid.length > 0 || !parsedWeight.ok || !group.ok) {
      setLineErrors(invalid);
      setKeysError(undefined);
      textarea.current?.focus();
      return;
    }
    setSaving(true);
    const ids = [...added];
    const failed: { apiKey: string; message: string }[] = [];
    for (const line of lines) {
      try {
        ids.push((await onAdd({ apiKey: line.apiKey, weight: parsedWeight.value, ...(group.value ? { quotaGroup: group.value } : {}) })).id);
      } catch (error) {
        const message = fieldError(t, error, 'apiKey') ?? errorWords(t, error);
        failed.push({ apiKey: line.apiKey, message });
      }
    }
    setAdded(ids);
    setSaving(false);
    if (failed.length === 0) {
      setText(''); // every secret is stored: drop them
      onClose(ids);
      return;
    }
    setText(failed.map((f) => f.apiKey).join('\n'));
    setLineErrors(failed.map((f, i) => ({ line: i + 1, message: f.message })));
    setKeysError(t('bulk.partial', { added: ids.length }));
    textarea.current?.focus();
  }

  const errorText = [keysError, ...lineErrors.map((e) => t('bulk.line', { line: e.line, message: e.message }))]
    .filter(Boolean)
    .join('\n');

  return (
    <Dialog title={t('bulk.title')} onClose={() => onClose(added)} initialFocus={textarea} returnFocus={returnFocus} testId="paste-keys-dialog">
      <form className="dialog__form" onSubmit={submit} noValidate>
        <Field label={t('bulk.keys')} hint={t('bulk.hint')} error={errorText || undefined} testId="paste-keys">
          {({ id, describedBy, invalid }) => (
            <textarea
              ref={textarea}
              id={id}
              className="input input--mono textarea"
              rows={6}
              spellCheck={false}
              autoComplete="off"
              aria-invalid={invalid || undefined}
              aria-describedby={describedBy}
              value={text}
              onChange={(e) => {
                setText(e.target.value);
                setLineErrors([]);
                setKeysError(undefined);
              }}
              data-testid="paste-keys-input"
            />
          )}
        </Field>
        <div className="field-row field-row--end">
          <Field label={t('add.weight')} hint={t('add.weightHint')} error={weightError} testId="paste-keys-weight">
            {({ id, describedBy, invalid }) => (
              <input
                id={id}
                className="input input--number"
                inputMode="numeric"
                autoComplete="off"
                aria-invalid={invalid || undefined}
                aria-describedby={describedBy}
                value={weight}
                onChange={(e) => {
                  setWeight(e.target.value);
                  setWeightError(undefined);
                }}
                onKeyDown={(e) => {
                  const next = stepWeight(weight, e.key);
                  if (next !== null) {
                    e.preventDefault();
                    setWeight(next);
                  }
                }}
              />
            )}
          </Field>
          <QuotaGroupField
            value={quotaGroup}
            onChange={(value) => {
              setQuotaGroup(value);
              setQuotaGroupError(undefined);
            }}
            hint={t('bulk.quotaGroupHint')}
            error={quotaGroupError}
            testId="paste-keys-quota-group"
          />
          <p className="muted paste-count" aria-live="polite">
            {t('bulk.count', { count: lines.length })}
          </p>
        </div>
        <FormActions onCancel={() => onClose(added)} busy={saving} label={t('bulk.submit')} busyLabel={t('add.saving')} testId="paste-keys-submit" />
      </form>
    </Dialog>
  );
}
