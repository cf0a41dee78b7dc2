import { render, screen, within } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { Locale } from '../../../i18n';
import { I18nProvider } from '../../../i18n/I18nProvider';
import type { UsageBySource } from '../../../ipc/bindings';
import { createFakeBackend, type FakeBackend } from '../../../test/fakeBackend';

let backend: FakeBackend;
vi.mock('@tauri-apps/api/core', () => ({ invoke: (command: string, args: Record<string, unknown>) => backend.invoke(command, args) }));
vi.mock('@tauri-apps/api/event', () => ({ listen: (event: string, handler: never) => backend.listen(event, handler) }));

const { SourcesSection } = await import('../SourcesSection');

const RANGE = { from: Date.UTC(2026, 0, 8), to: Date.UTC(2026, 0, 15) };

const REPORT: UsageBySource = {
  sources: [
    { source: { kind: 'agent', agent: 'claudeCode' }, requests: 1200, failures: 17, inputTokens: 9_000_000, cachedTokens: 6_300_000, outputTokens: 150_000, cachedShare: 0.7, cost: 12.5, costComplete: true },
    { source: { kind: 'agent', agent: 'codex' }, requests: 40, failures: 0, inputTokens: 400_000, cachedTokens: 0, outputTokens: 9_000, cachedShare: 0, cost: 0.42, costComplete: false },
    { source: { kind: 'agent', agent: 'geminiCli' }, requests: 0, failures: 0, inputTokens: 0, cachedTokens: 0, outputTokens: 0, cachedShare: null, cost: null, costComplete: true },
    { source: { kind: 'chat' }, requests: 12, failures: 1, inputTokens: 24_000, cachedTokens: 6_000, outputTokens: 3_000, cachedShare: 0.25, cost: null, costComplete: false },
    { source: { kind: 'other' }, requests: 3, failures: 0, inputTokens: 300, cachedTokens: 0, outputTokens: 30, cachedShare: 0, cost: 0, costComplete: true },
  ],
  drops: [{ agent: 'claudeCode', lastDay: 0.12, weekBefore: 0.81 }],
};

function renderSection(locale: Locale = 'en') {
  render(
    <I18nProvider initial={locale}>
      <SourcesSection range={RANGE} refresh={0} />
    </I18nProvider>,
  );
}

describe('Usage → By source', () => {
  beforeEach(() => {
    backend = createFakeBackend();
  });

  it('shows each source with its share of cached input, and asks for the page’s range', async () => {
    backend.localApiExtras.setUsageBySource(REPORT);
    renderSection();
    const table = await screen.findByRole('table', { name: 'By source' });
    const rows = within(table).getAllByTestId('usage-source-row');
    expect(rows.map((r) => within(r).getByRole('rowheader').textContent)).toEqual(['Claude Code', 'Codex CLI', 'Gemini CLI', 'Chat', 'Other clients']);
    expect(rows[0]).toHaveTextContent('1,200');
    expect(rows[0]).toHaveTextContent('9,000,000');
    expect(rows[0]).toHaveTextContent('70%');
    expect(rows[2], 'no input: no share').toHaveTextContent('—');
    expect(backend.callsOf('usage:getBySource')).toEqual([RANGE]);
  });

  it('shows each source’s failures and its cost, partly priced or not priced at all, as By token does', async () => {
    backend.localApiExtras.setUsageBySource(REPORT);
    renderSection();
    const table = await screen.findByRole('table', { name: 'By source' });
    const headers = within(table).getAllByRole('columnheader').map((h) => h.textContent);
    expect(headers, 'with a failures and a cost column').toEqual(['Source', 'Requests', 'Failures', 'Input', 'Cached input', 'Output', 'Cost']);
    const rows = within(table).getAllByTestId('usage-source-row');
    const column = (id: string) => rows.map((r) => within(r).getByTestId(id).textContent);
    expect(column('usage-source-failures')).toEqual(['17', '0', '0', '1', '0']);
    const costs = column('usage-source-cost');
    expect(costs[0]).toBe('$12.50');
    expect(costs[1], 'a model without a price spent tokens').toBe('$0.42 (some models have no price)');
    expect(costs[2], 'nothing spent: no cost').toBe('—');
    expect(costs[3], 'no model of it has a price').toBe('—');
  });

  it('warns of an agent whose cache share dropped sharply, and of none otherwise', async () => {
    backend.localApiExtras.setUsageBySource(REPORT);
    renderSection();
    const drops = await screen.findByTestId('usage-cache-drops');
    expect(drops).toHaveTextContent('Claude Code: the prompt cache served 12% of its input in the last day, against 81% in the week before.');
  });

  it('says nothing is wrong when nothing dropped, in the UI’s language', async () => {
    renderSection('ja');
    await screen.findByRole('table', { name: '送信元別' });
    expect(screen.queryByTestId('usage-cache-drops')).not.toBeInTheDocument();
    expect(screen.getAllByTestId('usage-source-row')[3]).toHaveTextContent('チャット');
  });
});
