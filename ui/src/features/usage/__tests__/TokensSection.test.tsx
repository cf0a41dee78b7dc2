import { render, screen, within } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { Locale } from '../../../i18n';
import { I18nProvider } from '../../../i18n/I18nProvider';
import type { TokenUsage } from '../../../ipc/bindings';
import { createFakeBackend, type FakeBackend } from '../../../test/fakeBackend';

let backend: FakeBackend;
vi.mock('@tauri-apps/api/core', () => ({ invoke: (command: string, args: Record<string, unknown>) => backend.invoke(command, args) }));
vi.mock('@tauri-apps/api/event', () => ({ listen: (event: string, handler: never) => backend.listen(event, handler) }));

const { TokensSection } = await import('../TokensSection');

const RANGE = { from: Date.UTC(2026, 0, 8), to: Date.UTC(2026, 0, 15) };

const LINES: TokenUsage[] = [
  { name: 'ci-bot', requests: 1200, failed: 3, inputTokens: 9_000_000, cachedTokens: 4_500_000, outputTokens: 150_000, costUsd: 31.5, costComplete: true },
  { name: null, requests: 40, failed: 0, inputTokens: 400_000, cachedTokens: 0, outputTokens: 9_000, costUsd: 0.0042, costComplete: false },
  { name: 'alice@home', requests: 2, failed: 0, inputTokens: 0, cachedTokens: 0, outputTokens: 0, costUsd: null, costComplete: true },
];

function renderSection(locale: Locale = 'en') {
  return render(
    <I18nProvider initial={locale}>
      <TokensSection range={RANGE} refresh={0} />
    </I18nProvider>,
  );
}

describe('Usage → By token', () => {
  beforeEach(() => {
    backend = createFakeBackend();
  });

  it('shows what each named token spent, by name, in the order the backend gives', async () => {
    backend.localApiExtras.setUsageByToken(LINES);
    renderSection();
    const table = await screen.findByRole('table', { name: 'By token' });
    const rows = within(table).getAllByTestId('usage-token-row');
    expect(rows.map((r) => within(r).getByRole('rowheader').textContent)).toEqual(['ci-bot', 'Without a named token (the chat, the local API’s own token)', 'alice@home']);
    expect(rows[0]).toHaveTextContent('1,200');
    expect(rows[0]).toHaveTextContent('50%');
    expect(rows[0]).toHaveTextContent('$31.50');
    expect(rows[1], 'a cost without every price says so').toHaveTextContent('$0.0042 (some models have no price)');
    expect(rows[2], 'nothing to share, no price: dashes').toHaveTextContent('—');
    expect(backend.calls.filter((c) => c.command === 'usage:getByToken').at(-1)?.args).toEqual(RANGE);
  });

  it('is not shown while no named token was used in the range', async () => {
    backend.localApiExtras.setUsageByToken([{ ...LINES[1], name: null }]);
    const { container } = renderSection();
    await vi.waitFor(() => expect(backend.calls.some((c) => c.command === 'usage:getByToken')).toBe(true));
    expect(container).toBeEmptyDOMElement();
  });

  it.each(['zh', 'ja', 'ru'] as const)('speaks %s', async (locale) => {
    backend.localApiExtras.setUsageByToken(LINES);
    renderSection(locale);
    const section = await screen.findByTestId('usage-tokens');
    expect(section.textContent).not.toMatch(/By token|Without a named token/);
  });
});
