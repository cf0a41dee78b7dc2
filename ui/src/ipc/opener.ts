import { openUrl } from '@tauri-apps/plugin-opener';

/**
 * Opens an http(s) URL in the system browser, never in Keypool's window. The capability lets the
 * opener plugin open only http:// and https:// URLs (and no chosen application), so anything else
 * is refused by the backend too.
 */
export function openInBrowser(url: string): Promise<void> {
  return openUrl(url);
}
