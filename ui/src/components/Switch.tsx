interface Props {
  checked: boolean;
  onChange: (checked: boolean) => void;
  label: string;
  busy?: boolean;
  testId?: string;
}

/** An on/off switch: a button with role="switch", announced as "on"/"off" by screen readers. */
export function Switch({ checked, onChange, label, busy, testId }: Props) {
  return (
    <button
      type="button"
      role="switch"
      className="switch"
      aria-checked={checked}
      aria-label={label}
      aria-busy={busy || undefined}
      data-testid={testId}
      onClick={() => onChange(!checked)}
    >
      <span className="switch__thumb" aria-hidden="true" />
    </button>
  );
}
