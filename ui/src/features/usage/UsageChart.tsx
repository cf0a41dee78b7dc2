import { useEffect, useId, useRef, useState } from 'react';
import { useI18n } from '../../i18n/I18nProvider';
import type { ChartTheme } from './chartTheme';
import { type ChartSpec, colorOf, drawChart } from './charts';

/** A chart's numbers as a table: a header per row (a day, an hour, a provider), then its numbers. */
export interface ChartTable {
  /** The row headers' column, then one per number. */
  columns: { key: string; label: string }[];
  /** Each row's numbers, already worded, one per column after the first. */
  rows: { key: string | number; header: string; cells: string[] }[];
  /** The one row shown when there are no others; none: an empty body. */
  empty?: string;
}

interface Props {
  /** The figure's caption, and the name of its table. */
  title: string;
  /** What the chart shows, in a sentence, for those who do not see it (the canvas's name). */
  description: string;
  spec: ChartSpec;
  theme: ChartTheme;
  /** The same numbers as a table, beside the chart: for screen readers, keyboards and copying. */
  table: ChartTable;
  testId: string;
}

/**
 * One chart as a figure: the canvas (an image named by a summary) and the table of its numbers.
 * Where the canvas cannot draw (no 2D context) the figure keeps only the table.
 */
export function UsageChart({ title, description, spec, theme, table, testId }: Props) {
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
          <div className="usage-chart__drawing">
            <div className="usage-chart__canvas">
              <canvas ref={canvas} role="img" aria-label={description} data-testid={`${testId}-canvas`} />
            </div>
            {spec.series.length > 1 && <Legend spec={spec} theme={theme} testId={`${testId}-legend`} />}
          </div>
        )}
        {/* Focusable, so a keyboard can scroll a long table. */}
        {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take the focus to be scrolled without a mouse (WCAG 2.1.1) */}
        <section className="usage-chart__table" aria-label={t('usagePage.tableOf', { title })} tabIndex={0}>
          <NumbersTable caption={title} {...table} />
        </section>
      </div>
    </figure>
  );
}

/**
 * The series' names, each beside its colour. In HTML rather than on the canvas, so a long name
 * (a key's label) is cut to its line with the whole of it in a tooltip, and keeps its swatch.
 * Hidden from screen readers: the table beside the chart names the series, with their numbers.
 */
function Legend({ spec, theme, testId }: { spec: ChartSpec; theme: ChartTheme; testId: string }) {
  return (
    <ul className="usage-legend" aria-hidden="true" data-testid={testId}>
      {spec.series.map((series) => (
        <li key={series.name} className="usage-legend__item" title={series.name}>
          <span className="usage-legend__swatch" style={{ background: colorOf(theme, series.tone) }} />
          <span className="usage-legend__name">{series.name}</span>
        </li>
      ))}
    </ul>
  );
}

function NumbersTable({ caption, columns, rows, empty }: ChartTable & { caption: string }) {
  const [headerColumn, ...numberColumns] = columns;
  return (
    <table className="usage-table">
      <caption className="visually-hidden">{caption}</caption>
      <thead>
        <tr>
          <th scope="col">{headerColumn.label}</th>
          {numberColumns.map((column) => (
            <th key={column.key} scope="col" className="num usage-table__name" title={column.label}>
              {column.label}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.key}>
            <th scope="row">{row.header}</th>
            {numberColumns.map((column, i) => (
              <td key={column.key} className="num">
                {row.cells[i]}
              </td>
            ))}
          </tr>
        ))}
        {rows.length === 0 && empty !== undefined && (
          <tr>
            <td colSpan={columns.length}>{empty}</td>
          </tr>
        )}
      </tbody>
    </table>
  );
}
