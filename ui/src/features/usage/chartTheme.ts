import { useEffect, useState } from 'react';

/*
 * The charts' colours, from the stylesheet's custom properties (usage.css), so they follow the
 * theme like the rest of the page. A canvas cannot take `var()` or `light-dark()`, so each is
 * resolved by the browser on a probe element, and read again when the theme changes.
 */

/** The series colours, in the order series take them. */
const PALETTE = ['--chart-1', '--chart-2', '--chart-3', '--chart-4', '--chart-5', '--chart-6', '--chart-7', '--chart-8'];

export interface ChartTheme {
  palette: string[];
  /** Legend text. */
  text: string;
  /** Axis labels. */
  muted: string;
  grid: string;
  warning: string;
  danger: string;
  font: string;
}

/** The colours as the document resolves them now. */
export function readChartTheme(): ChartTheme {
  const probe = document.createElement('span');
  probe.style.display = 'none';
  document.body.appendChild(probe);
  const resolve = (variable: string) => {
    probe.style.color = `var(${variable})`;
    return getComputedStyle(probe).color;
  };
  try {
    return {
      palette: PALETTE.map(resolve),
      text: resolve('--text'),
      muted: resolve('--muted'),
      grid: resolve('--border'),
      warning: resolve('--warning'),
      danger: resolve('--danger'),
      font: getComputedStyle(document.documentElement).fontFamily,
    };
  } finally {
    probe.remove();
  }
}

const same = (a: ChartTheme, b: ChartTheme) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The chart colours, read again when the theme changes: the user's choice (`data-theme` on
 * <html>, see shell/useTheme) or, while following the system, the OS's light/dark preference.
 */
export function useChartTheme(): ChartTheme {
  const [theme, setTheme] = useState(readChartTheme);
  useEffect(() => {
    const reread = () => {
      const next = readChartTheme();
      setTheme((current) => (same(current, next) ? current : next));
    };
    const observer = new MutationObserver(reread);
    observer.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });
    const scheme = typeof window.matchMedia === 'function' ? window.matchMedia('(prefers-color-scheme: dark)') : null;
    scheme?.addEventListener('change', reread);
    return () => {
      observer.disconnect();
      scheme?.removeEventListener('change', reread);
    };
  }, []);
  return theme;
}
