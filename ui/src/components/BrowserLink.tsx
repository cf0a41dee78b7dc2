import type { MouseEvent, ReactNode } from 'react';
import { useI18n } from '../i18n/I18nProvider';
import { openInBrowser } from '../ipc/opener';

interface Props {
  /** An http(s) address; the caller has checked it is one. */
  url: string;
  children: ReactNode;
  className?: string;
  testId?: string;
}

/**
 * A link that opens in the system browser on click (or Enter), never in Keypool's window: the
 * default navigation and a middle click are stopped. Its title says where it goes.
 */
export function BrowserLink({ url, children, className, testId }: Props) {
  const { t } = useI18n();
  const open = (event: MouseEvent) => {
    event.preventDefault();
    void openInBrowser(url).catch(() => {});
  };
  return (
    <a href={url} className={className} title={t('md.opensInBrowser', { url })} onClick={open} onAuxClick={(e) => e.preventDefault()} data-testid={testId}>
      {children}
    </a>
  );
}
