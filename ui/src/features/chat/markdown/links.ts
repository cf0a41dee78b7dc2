/** Links in replies. Pure. */

/** The URL a link may open in the browser: only an absolute http(s) URL; null for anything else. */
export function browserUrl(href: string | undefined | null): string | null {
  if (!href) return null;
  try {
    const url = new URL(href);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null; // relative or malformed: nothing to open
  }
}

/**
 * Whether a link's text already is its target (`https://example.com`, `www.example.com`), so
 * showing the host beside it again would only repeat it.
 */
export function isAutolink(text: string, url: string): boolean {
  const plain = (s: string) => s.trim().replace(/^https?:\/\//i, '').replace(/\/$/, '').toLowerCase();
  return plain(text) === plain(url);
}
