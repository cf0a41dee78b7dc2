import { useId } from 'react';

interface Props {
  label: string;
  hint: string;
  checked: boolean;
  onChange: (checked: boolean) => void;
  testId: string;
}

/** A labelled checkbox with its hint. */
export function CheckField({ label, hint, checked, onChange, testId }: Props) {
  const id = useId();
  return (
    <div className="check-field">
      <input id={id} type="checkbox" className="checkbox" checked={checked} aria-describedby={`${id}-hint`} onChange={(e) => onChange(e.target.checked)} data-testid={testId} />
      <div>
        <label htmlFor={id}>{label}</label>
        <p id={`${id}-hint`} className="muted field__hint">
          {hint}
        </p>
      </div>
    </div>
  );
}
