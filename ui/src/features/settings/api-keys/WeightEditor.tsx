import { useEffect, useId, useRef, useState } from 'react';
import { useI18n } from '../../../i18n/I18nProvider';
import { parseWeight, stepWeight } from './schema';
import { errorText, fieldError } from '../../../i18n/problems';

interface Props {
  weight: number;
  label: string;
  onSave: (weight: number) => Promise<unknown>;
  testId?: string;
}

/**
 * A weight edited in place: saved on Enter or when focus leaves, Escape puts the stored value
 * back. An invalid weight is not sent; its error stays under the field until fixed.
 */
export function WeightEditor({ weight, label, onSave, testId }: Props) {
  const { t } = useI18n();
  const errorId = useId();
  const [text, setText] = useState(String(weight));
  const [editing, setEditing] = useState(false);
  const [error, setError] = useState<string>();
  const [saving, setSaving] = useState(false);
  const inFlight = useRef(false);

  // Follow the stored value unless the user is typing over it.
  useEffect(() => {
    if (!editing) setText(String(weight));
  }, [weight, editing]);

  async function commit() {
    if (inFlight.current) return;
    const parsed = parseWeight(text);
    if (!parsed.ok) {
      setError(t(parsed.error));
      return;
    }
    setError(undefined);
    if (parsed.value === weight) {
      setText(String(weight));
      setEditing(false);
      return;
    }
    setSaving(true);
    inFlight.current = true;
    try {
      await onSave(parsed.value);
      setEditing(false);
    } catch (e) {
      setError(fieldError(t, e, 'weight') ?? errorText(t, e));
    } finally {
      inFlight.current = false;
      setSaving(false);
    }
  }

  return (
    <div className="weight-editor">
      <input
        className="input input--number input--compact"
        inputMode="numeric"
        autoComplete="off"
        aria-label={label}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? errorId : undefined}
        aria-busy={saving || undefined}
        value={text}
        onFocus={() => setEditing(true)}
        onChange={(e) => {
          setEditing(true);
          setText(e.target.value);
          setError(undefined);
        }}
        onBlur={() => void commit()}
        onKeyDown={(e) => {
          if (e.key === 'Enter') {
            e.preventDefault();
            void commit();
          } else if (e.key === 'Escape') {
            e.preventDefault();
            setText(String(weight));
            setError(undefined);
          } else {
            const next = stepWeight(text, e.key);
            if (next !== null) {
              e.preventDefault();
              setText(next);
              setError(undefined);
            }
          }
        }}
        data-testid={testId}
      />
      {error && (
        <p className="field__error weight-editor__error" id={errorId} role="alert" data-testid={testId ? `${testId}-error` : undefined}>
          {error}
        </p>
      )}
    </div>
  );
}
