interface Props {
  checked: boolean;
  onChange: (checked: boolean) => void;
  label: string;
  busy?: boolean;
  testId?: string;
  /** The id of a hint that describes it. */
  describedBy?: string;
}

/** An on/off switch: a button with role="switch", announced as "on"/"off" by screen readers. */
export function Switch({ checked, onChange, label, busy, testId, describedBy }: Props) {
  return (
    <button
      type="button"
      role="switch"
      className="switch"
      aria-checked={checked}
      aria-label={label}
      aria-busy={busy || undefined}
      aria-describedby={describedBy}
      data-testid={testId}
      onClick={() => onChange(!checked)}
    >
      <span className="switch__thumb" aria-hidden="true" />
    </button>
  );
}
