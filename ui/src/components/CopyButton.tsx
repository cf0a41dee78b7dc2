import { useEffect, useRef, useState } from 'react';
import { copyText } from '../clipboard';
import { useI18n } from '../i18n/I18nProvider';
import { Icon } from './Icon';

interface Props {
  /** What goes on the clipboard; read when clicked, so a growing text is copied as it is then. */
  text: () => string;
  /** The accessible name, e.g. "Copy code" or "Copy the reply". */
  label: string;
  className?: string;
  testId?: string;
}

/** Copies on click and says so for two seconds ("Copied"), announced politely. */
export function CopyButton({ text, label, className = 'button button--small', testId }: Props) {
  const { t } = useI18n();
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);

  async function copy() {
    const ok = await copyText(text());
    setState(ok ? 'copied' : 'failed');
    clearTimeout(timer.current);
    timer.current = setTimeout(() => setState('idle'), 2000);
  }

  return (
    <button type="button" className={className} aria-label={label} title={label} onClick={() => void copy()} data-testid={testId} data-state={state}>
      <Icon name={state === 'copied' ? 'check' : 'copy'} size={14} />
      <span aria-live="polite">{state === 'copied' ? t('md.copied') : state === 'failed' ? t('md.copyFailed') : t('md.copy')}</span>
    </button>
  );
}
