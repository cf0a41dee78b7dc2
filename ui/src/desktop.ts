/** The desktop the window runs on: WebKitGTK on Linux, WebView2 on Windows, WKWebView on macOS. */
export type Desktop = 'linux' | 'windows' | 'macos';

/** The desktop a webview's user agent names; undefined for one it does not. */
export function desktopOf(userAgent: string): Desktop | undefined {
  if (userAgent.includes('Windows NT')) return 'windows';
  if (userAgent.includes('Macintosh')) return 'macos';
  if (userAgent.includes('Linux') || userAgent.includes('X11')) return 'linux';
  return undefined;
}

/**
 * Marks the page with its desktop (`<html data-desktop="linux">`), for what the stylesheet chooses
 * by platform: the font stack, where each family WebKitGTK looks for and does not find costs the
 * first paint a fontconfig lookup.
 */
export function markDesktop(root: HTMLElement, userAgent: string) {
  const desktop = desktopOf(userAgent);
  if (desktop) root.dataset.desktop = desktop;
}
