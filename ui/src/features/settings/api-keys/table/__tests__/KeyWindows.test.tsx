import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { Locale } from '../../../../../i18n';
import { I18nProvider } from '../../../../../i18n/I18nProvider';
import type { KeyWindows, PlanWindow } from '../../../../../ipc/bindings';
import { KeyWindowsLine } from '../KeyWindows';

/** The backend's clock is far from the UI's; every time below is on the backend's. */
const BACKEND_NOW = new Date(2026, 11, 7, 9, 0).getTime();

const window = (count: number, unit: PlanWindow['span']['unit'], used: number, resetsAt: number | null): PlanWindow => ({
  span: { count, unit },
  used,
  resetsAt,
});

function renderWindows(windows: Partial<KeyWindows>, locale: Locale = 'en') {
  const full: KeyWindows = { readAt: BACKEND_NOW, windows: [], problem: null, status: 200, ...windows };
  render(
    <I18nProvider initial={locale}>
      <KeyWindowsLine windows={full} offset={BACKEND_NOW - Date.now()} />
    </I18nProvider>,
  );
  return screen.getByTestId('key-windows');
}

afterEach(cleanup);

describe("what a coding plan's key has left of its windows", () => {
  it('names each window by its span, with what is left and when it resets, in the backend’s time', () => {
    const fiveHours = window(5, 'hour', 0.32, new Date(2026, 11, 7, 14, 0).getTime());
    const week = window(1, 'week', 0.6, null);
    expect(renderWindows({ windows: [fiveHours, week] })).toHaveTextContent(/^5-hour window 68% left, resets 14:00 · week 40% left$/);
  });

  it('marks a used-up window, and reads in every language', () => {
    const spent = renderWindows({ windows: [window(5, 'hour', 1, BACKEND_NOW + 3_600_000)] });
    expect(spent).toHaveAttribute('data-state', 'spent');
    expect(spent).toHaveTextContent('5-hour window 0% left, resets 10:00');
    cleanup();
    expect(renderWindows({ windows: [window(1, 'month', 0.25, null)] }, 'ru')).toHaveTextContent('месяц: осталось 75');
    cleanup();
    expect(renderWindows({ windows: [window(5, 'hour', 0.5, null)] }, 'zh')).toHaveTextContent('5 小时窗口剩余 50%');
    cleanup();
    expect(renderWindows({ windows: [window(1, 'week', 0.1, null)] }, 'ja')).toHaveTextContent('週 残り 90%');
  });

  it('says why nothing was read', () => {
    const line = renderWindows({ problem: 'unreadable windows: not JSON', status: 200 });
    expect(line).toHaveTextContent('Plan windows not read: unreadable windows: not JSON');
    expect(line).toHaveAttribute('data-state', 'unreadable');
  });
});
