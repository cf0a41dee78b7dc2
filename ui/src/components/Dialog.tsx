import { useEffect, useId, useRef, type ReactNode, type RefObject } from 'react';

interface Props {
  title: string;
  /** `alertdialog` for confirmations that interrupt. */
  role?: 'dialog' | 'alertdialog';
  onClose: () => void;
  /** Focused when the dialog opens; else the first focusable element. A ref, so it stays the same object. */
  initialFocus?: RefObject<HTMLElement | null>;
  /** Where focus goes on close when what opened the dialog is gone (e.g. a deleted row's button). */
  returnFocus?: () => HTMLElement | null | undefined;
  describedBy?: string;
  children: ReactNode;
  testId?: string;
}

const FOCUSABLE = 'button:not([disabled]), [href], input:not([disabled]), textarea:not([disabled]), select:not([disabled]), [tabindex]:not([tabindex="-1"])';

/**
 * A modal dialog: focus moves in, Tab cycles inside, Escape closes, and focus returns to where it
 * was (or to `returnFocus`) when it closes.
 */
export function Dialog({ title, role = 'dialog', onClose, initialFocus, returnFocus, describedBy, children, testId }: Props) {
  const titleId = useId();
  const panel = useRef<HTMLDivElement>(null);
  const onCloseRef = useRef(onClose);
  onCloseRef.current = onClose;
  const returnFocusRef = useRef(returnFocus);
  returnFocusRef.current = returnFocus;

  useEffect(() => {
    const opener = document.activeElement as HTMLElement | null;
    const first = initialFocus?.current ?? panel.current?.querySelector<HTMLElement>(FOCUSABLE);
    (first ?? panel.current)?.focus();
    return () => {
      // After React has removed the dialog (and maybe the opener's row), so focus lands outside.
      setTimeout(() => {
        const target = opener?.isConnected && opener !== document.body ? opener : returnFocusRef.current?.();
        target?.focus();
      }, 0);
    };
  }, [initialFocus]);

  function onKeyDown(event: React.KeyboardEvent) {
    if (event.key === 'Escape') {
      event.stopPropagation();
      onCloseRef.current();
      return;
    }
    if (event.key !== 'Tab' || !panel.current) return;
    const items = [...panel.current.querySelectorAll<HTMLElement>(FOCUSABLE)];
    if (items.length === 0) return;
    const first = items[0];
    const last = items[items.length - 1];
    if (event.shiftKey && document.activeElement === first) {
      event.preventDefault();
      last.focus();
    } else if (!event.shiftKey && document.activeElement === last) {
      event.preventDefault();
      first.focus();
    }
  }

  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: a click beside the panel is the mouse's Escape; the keyboard has Escape itself
    <div className="dialog-backdrop" onMouseDown={(e) => e.target === e.currentTarget && onCloseRef.current()}>
      {/* biome-ignore lint/a11y/noStaticElementInteractions lint/a11y/useAriaPropsSupportedByRole: `role` is dialog or alertdialog, which take aria-modal and keys; the rule cannot see through the prop */}
      <div
        ref={panel}
        className="dialog"
        role={role}
        aria-modal="true"
        aria-labelledby={titleId}
        aria-describedby={describedBy}
        tabIndex={-1}
        onKeyDown={onKeyDown}
        data-testid={testId}
      >
        <h2 id={titleId} className="dialog__title">
          {title}
        </h2>
        {children}
      </div>
    </div>
  );
}
