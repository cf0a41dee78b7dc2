import { describe, expect, it } from 'vitest';
import { desktopOf, markDesktop } from '../desktop';

// What each platform's webview sends (WebKitGTK 2.50, WebView2, WKWebView).
const WEBKITGTK = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Safari/605.1.15';
const WEBVIEW2 = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0';
const WKWEBVIEW = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko)';

describe('desktopOf', () => {
  it("names each platform's webview", () => {
    expect(desktopOf(WEBKITGTK)).toBe('linux');
    expect(desktopOf(WEBVIEW2)).toBe('windows');
    expect(desktopOf(WKWEBVIEW)).toBe('macos');
  });

  it('names none for an agent it does not know', () => {
    expect(desktopOf('curl/8.5.0')).toBeUndefined();
  });
});

describe('markDesktop', () => {
  it('sets data-desktop on the root, or nothing for an unknown agent', () => {
    const root = document.createElement('html');
    markDesktop(root, 'curl/8.5.0');
    expect(root.hasAttribute('data-desktop')).toBe(false);
    markDesktop(root, WEBKITGTK);
    expect(root.dataset.desktop).toBe('linux');
  });
});
