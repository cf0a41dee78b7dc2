import { useCallback, useEffect, useMemo, useRef, useState } from 'react';

/**
 * Asks the user a yes/no question from inside an async flow: `ask(question)` shows it (the caller
 * renders a dialog while `question` is set) and resolves with the answer once the dialog calls
 * `answer`. One question at a time: asking again, or unmounting, answers the pending one "no", so
 * a flow waiting on it never hangs and never proceeds without a yes.
 */
export function useConfirmation<Q>() {
  const [question, setQuestion] = useState<Q | null>(null);
  const resolver = useRef<((yes: boolean) => void) | null>(null);

  const settle = useCallback((yes: boolean) => {
    const resolve = resolver.current;
    resolver.current = null;
    resolve?.(yes);
  }, []);

  useEffect(() => () => settle(false), [settle]);

  return useMemo(
    () => ({
      question,
      ask: (next: Q) => {
        settle(false);
        setQuestion(next);
        return new Promise<boolean>((resolve) => {
          resolver.current = resolve;
        });
      },
      answer: (yes: boolean) => {
        setQuestion(null);
        settle(yes);
      },
    }),
    [question, settle],
  );
}
