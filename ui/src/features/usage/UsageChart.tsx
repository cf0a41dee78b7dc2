import { type ReactNode, useEffect, useId, useRef, useState } from 'react';
import { useI18n } from '../../i18n/I18nProvider';
import type { ChartTheme } from './chartTheme';
import { type ChartSpec, drawChart } from './charts';

interface Props {
  /** The figure's caption, and the name of its table. */
  title: string;
  /** What the chart shows, in a sentence, for those who do not see it (the canvas's name). */
  description: string;
  spec: ChartSpec;
  theme: ChartTheme;
  /** The same numbers as a table, beside the chart: for screen readers, keyboards and copying. */
  children: ReactNode;
  testId: string;
}

/**
 * One chart as a figure: the canvas (an image named by a summary) and the table of its numbers.
 * Where the canvas cannot draw (no 2D context) the figure keeps only the table.
 */
export function UsageChart({ title, description, spec, theme, children, testId }: Props) {
  const { t, intlTag } = useI18n();
  const captionId = useId();
  const canvas = useRef<HTMLCanvasElement>(null);
  const [drawable, setDrawable] = useState(true);

  // Drawn anew when the numbers, the theme or the language change: a few dozen bars, no animation.
  useEffect(() => {
    if (!canvas.current) return;
    const chart = drawChart(canvas.current, spec, theme, intlTag);
    if (!chart) setDrawable(false);
    return () => chart?.destroy();
  }, [spec, theme, intlTag]);

  return (
    <figure className="usage-chart" aria-labelledby={captionId} data-testid={testId}>
      <figcaption id={captionId} className="usage-chart__caption">
        {title}
      </figcaption>
      <div className="usage-chart__body">
        {drawable && (
          <div className="usage-chart__canvas">
            <canvas ref={canvas} role="img" aria-label={description} data-testid={`${testId}-canvas`} />
          </div>
        )}
        {/* Focusable, so a keyboard can scroll a long table. */}
        {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take the focus to be scrolled without a mouse (WCAG 2.1.1) */}
        <section className="usage-chart__table" aria-label={t('usagePage.tableOf', { title })} tabIndex={0}>
          {children}
        </section>
      </div>
    </figure>
  );
}
