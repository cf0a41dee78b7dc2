import { type KeyboardEvent, useEffect, useRef, useState } from 'react';

export type Parsed = { ok: true; value: number } | { ok: false; error: string };

interface Options {
  /** The value the backend keeps; the field follows it unless the user is typing over it. */
  stored: number;
  /** The typed text as a value, or why it is not one (worded). */
  parse: (text: string) => Parsed;
  /** ArrowUp/ArrowDown: the next text, or null for any other key (no stepping when left out). */
  step?: (text: string, key: string) => string | null;
  onSave: (value: number) => Promise<unknown>;
  /** A failed save in words (a backend issue at this field, or the error itself). */
  saveError: (error: unknown) => string;
}

export interface CommittedNumber {
  text: string;
  error: string | undefined;
  /** The user is typing, so the stored value does not replace the text. */
  editing: boolean;
  status: 'idle' | 'saving' | 'saved';
  /** Spread on the `<input>`: its value and the handlers that edit, step, commit and revert it. */
  inputProps: {
    value: string;
    onFocus: () => void;
    onChange: (event: { target: { value: string } }) => void;
    onBlur: () => void;
    onKeyDown: (event: KeyboardEvent<HTMLInputElement>) => void;
  };
}

/**
 * A number edited in place and saved when committed: Enter, or focus leaving. Escape puts the
 * stored value back. An invalid value is not sent and its error stays until fixed; a value
 * committed while a save runs is saved after it, so the last one the user typed wins.
 */
export function useCommittedNumber({ stored, parse, step, onSave, saveError }: Options): CommittedNumber {
  const [text, setText] = useState(String(stored));
  const [editing, setEditing] = useState(false);
  const [error, setError] = useState<string>();
  const [status, setStatus] = useState<CommittedNumber['status']>('idle');
  const textRef = useRef(text);
  textRef.current = text;
  /** A save is running; `again`: the user committed another value meanwhile, save that next. */
  const saving = useRef({ running: false, again: false });

  useEffect(() => {
    if (!editing) setText(String(stored));
  }, [stored, editing]);

  function edit(next: string) {
    setEditing(true);
    setText(next);
    setError(undefined);
    setStatus('idle');
  }

  async function commit() {
    if (saving.current.running) {
      saving.current.again = true;
      return;
    }
    const parsed = parse(textRef.current);
    if (!parsed.ok) {
      setError(parsed.error);
      return;
    }
    setError(undefined);
    if (parsed.value === stored) {
      setText(String(stored));
      setEditing(false);
      return;
    }
    saving.current = { running: true, again: false };
    setStatus('saving');
    try {
      await onSave(parsed.value);
      setStatus('saved');
      setEditing(false);
    } catch (e) {
      setStatus('idle');
      setError(saveError(e));
    } finally {
      const { again } = saving.current;
      saving.current = { running: false, again: false };
      if (again) void commit();
    }
  }

  return {
    text,
    error,
    editing,
    status,
    inputProps: {
      value: text,
      onFocus: () => setEditing(true),
      onChange: (event) => edit(event.target.value),
      onBlur: () => void commit(),
      onKeyDown: (event) => {
        if (event.key === 'Enter') {
          event.preventDefault();
          void commit();
        } else if (event.key === 'Escape') {
          event.preventDefault();
          setText(String(stored));
          setError(undefined);
        } else {
          const next = step?.(text, event.key) ?? null;
          if (next !== null) {
            event.preventDefault();
            edit(next);
          }
        }
      },
    },
  };
}
