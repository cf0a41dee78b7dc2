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
    { source: { kind: 'agent', agent: 'claudeCode' }, requests: 1200, inputTokens: 9_000_000, cachedTokens: 6_300_000, outputTokens: 150_000, cachedShare: 0.7 },
    { source: { kind: 'agent', agent: 'codex' }, requests: 40, inputTokens: 400_000, cachedTokens: 0, outputTokens: 9_000, cachedShare: 0 },
    { source: { kind: 'agent', agent: 'geminiCli' }, requests: 0, inputTokens: 0, cachedTokens: 0, outputTokens: 0, cachedShare: null },
    { source: { kind: 'chat' }, requests: 12, inputTokens: 24_000, cachedTokens: 6_000, outputTokens: 3_000, cachedShare: 0.25 },
    { source: { kind: 'other' }, requests: 3, inputTokens: 300, cachedTokens: 0, outputTokens: 30, cachedShare: 0 },
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
