import type { ReactNode } from 'react';

/**
 * A wide table in a region of its own that scrolls sideways, named by the heading it sits under.
 * Focusable, so a keyboard can scroll it too.
 */
export function TableRegion({ labelledBy, children }: { labelledBy: string; children: ReactNode }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take the focus to be scrolled without a mouse (WCAG 2.1.1)
    <section className="usage-table-scroll" aria-labelledby={labelledBy} tabIndex={0}>
      {children}
    </section>
  );
}
