import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  type ChartConfiguration,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
} from 'chart.js';
import type { ChartTheme } from './chartTheme';

/*
 * Chart.js 4, tree-shaken: only the two chart types, the two scales and the legend and tooltip
 * the Usage page draws are registered, so the rest of the library stays out of the bundle. (uPlot
 * is smaller and faster, but draws series over a continuous axis only: no categorical bars, which
 * the tokens per day and the cache share per provider are.)
 */
Chart.register(BarController, BarElement, LineController, LineElement, PointElement, CategoryScale, LinearScale, Legend, Tooltip);

/** A series' colour: a place in the palette, or the warning and danger tones of the theme. */
export type Tone = number | 'warning' | 'danger';

export interface ChartSpec {
  type: 'bar' | 'line';
  /** One per bucket or category, already worded. */
  labels: string[];
  series: { name: string; values: (number | null)[]; tone: Tone }[];
  /** Bars of a category stacked on each other (the tokens of every key in a day). */
  stacked?: boolean;
  /** The values are shares from 0 to 1, shown as percentages. */
  share?: boolean;
  /** The labels are buckets of time, the last one now (today, this hour): it is always labelled. */
  timeline?: boolean;
}

/** At most this many labels under a timeline; the rest go unlabelled, counted back from now. */
export const TIMELINE_LABELS = 8;

/**
 * Whether a timeline's bucket `index` of `count` is labelled: every `step`-th counted back from
 * the last, so the last (today, or this hour) always is and the labels are evenly spaced.
 */
export function timelineLabelled(index: number, count: number): boolean {
  const step = Math.max(1, Math.ceil(count / TIMELINE_LABELS));
  return (count - 1 - index) % step === 0;
}

/** A series' colour in `theme`: the canvas's, and the swatch of its legend. */
export function colorOf(theme: ChartTheme, tone: Tone): string {
  if (tone === 'warning') return theme.warning;
  if (tone === 'danger') return theme.danger;
  return theme.palette[tone % theme.palette.length];
}

/**
 * What Chart.js draws for `spec`: no animation (the numbers are read, not watched, and motion
 * would ignore prefers-reduced-motion), numbers in the UI's language, the theme's colours.
 */
export function chartConfig(spec: ChartSpec, theme: ChartTheme, intlTag: string): ChartConfiguration<'bar' | 'line', (number | null)[], string> {
  const exact = new Intl.NumberFormat(intlTag, spec.share ? { style: 'percent', maximumFractionDigits: 1 } : {});
  const axis = new Intl.NumberFormat(intlTag, spec.share ? { style: 'percent' } : { notation: 'compact' });
  const font = { family: theme.font };
  const line = spec.type === 'line';
  return {
    type: spec.type,
    data: {
      labels: spec.labels,
      datasets: spec.series.map((series) => {
        const color = colorOf(theme, series.tone);
        return {
          label: series.name,
          data: series.values,
          backgroundColor: color,
          borderColor: color,
          borderWidth: line ? 2 : 0,
          // Dots only where they can be told apart; a month of them would blur the lines.
          pointRadius: line && spec.labels.length <= 14 ? 2 : 0,
          maxBarThickness: 40,
        };
      }),
    },
    options: {
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      locale: intlTag,
      interaction: { mode: 'index', intersect: false },
      scales: {
        x: {
          stacked: spec.stacked,
          ticks: spec.timeline
            ? {
                color: theme.muted,
                font,
                maxRotation: 0,
                autoSkip: false,
                callback: (_, index) => (timelineLabelled(index, spec.labels.length) ? spec.labels[index] : ''),
              }
            : { color: theme.muted, font, maxRotation: 0, autoSkipPadding: 12 },
          grid: { display: false },
          border: { color: theme.grid },
        },
        y: {
          stacked: spec.stacked,
          beginAtZero: true,
          ...(spec.share ? { max: 1 } : {}),
          ticks: { color: theme.muted, font, precision: spec.share ? 2 : 0, callback: (value) => axis.format(Number(value)) },
          grid: { color: theme.grid },
          border: { display: false },
        },
      },
      plugins: {
        // The legend is the page's own (HTML: long names are cut with a tooltip, each with its swatch).
        legend: { display: false },
        tooltip: {
          titleFont: font,
          bodyFont: font,
          callbacks: { label: (item) => `${item.dataset.label ?? ''}: ${exact.format(item.parsed.y ?? 0)}` },
        },
      },
    },
  };
}

/** Draws `spec` on `canvas`; null where the canvas cannot draw (no 2D context, as in jsdom). */
export function drawChart(canvas: HTMLCanvasElement, spec: ChartSpec, theme: ChartTheme, intlTag: string): Chart<'bar' | 'line', (number | null)[], string> | null {
  let context: CanvasRenderingContext2D | null = null;
  try {
    context = canvas.getContext('2d');
  } catch {
    context = null;
  }
  if (!context) return null;
  return new Chart(context, chartConfig(spec, theme, intlTag));
}
