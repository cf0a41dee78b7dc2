import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { Locale } from '../../../i18n';
import { I18nProvider } from '../../../i18n/I18nProvider';
import { createFakeBackend, type FakeBackend } from '../../../test/fakeBackend';
import { attempt, NO_KEY } from '../../../test/fakeLedger';

let backend: FakeBackend;
vi.mock('@tauri-apps/api/core', () => ({ invoke: (command: string, args: Record<string, unknown>) => backend.invoke(command, args) }));
vi.mock('@tauri-apps/api/event', () => ({ listen: (event: string, handler: never) => backend.listen(event, handler) }));

const { UsagePage } = await import('../UsagePage');

// jsdom has no canvas: its getContext answers null after printing "not implemented". Answering
// null quietly is the same answer; the page must then keep the tables without the drawings.
HTMLCanvasElement.prototype.getContext = () => null;

/** 15 January 2026, 14:10 on the test machine's clock, in its time zone: the page's "now". */
const NOW = new Date(2026, 0, 15, 14, 10).getTime();
/** `hour`:00 local time, `daysAgo` days before the 15th. */
const at = (daysAgo: number, hour: number) => new Date(2026, 0, 15 - daysAgo, hour).getTime();
/** A local midnight, `days` after the 15th (negative: before). */
const midnight = (days: number) => new Date(2026, 0, 15 + days).getTime();

let keyA: string;
let keyB: string;

/**
 * The ledger: key A answered three times today and was rate-limited yesterday; key B answered once
 * 10 days ago; Anthropic's own key twice 3 days ago; and key A once 100 days ago, outside every period.
 */
function seedLedger() {
  keyA = backend.add('openai', 'sk-aaaaaaaaaaaa1111', { label: 'key A' }).id;
  keyB = backend.add('openai', 'sk-bbbbbbbbbbbb2222', { label: 'key B' }).id;
  backend.usage.setAttempts([
    attempt(at(0, 9), 'openai', keyA, { latencyMs: 500 }),
    attempt(at(0, 10), 'openai', keyA, { latencyMs: 800 }),
    attempt(at(0, 11), 'openai', keyA, { latencyMs: 1500 }),
    attempt(at(1, 12), 'openai', keyA, { outcome: 'rateLimited', inputTokens: 0, cachedTokens: 0, outputTokens: 0, latencyMs: 100 }),
    attempt(at(10, 8), 'openai', keyB, { inputTokens: 1000, cachedTokens: 0, outputTokens: 200, latencyMs: 2000 }),
    attempt(at(3, 16), 'anthropic', '', { model: 'claude-sonnet-4-5', inputTokens: 200, cachedTokens: 150, outputTokens: 10 }),
    attempt(at(3, 17), 'anthropic', '', { model: 'claude-sonnet-4-5', inputTokens: 200, cachedTokens: 150, outputTokens: 10 }),
    attempt(at(100, 12), 'openai', keyA),
  ]);
}

function renderPage(locale: Locale = 'en') {
  const user = userEvent.setup();
  render(
    <I18nProvider initial={locale}>
      <UsagePage now={() => NOW} />
    </I18nProvider>,
  );
  return user;
}

const total = (id: string) => screen.getByTestId(`usage-total-${id}-value`);
/** A row's cells, headers included, as text. */
const cellsOf = (row: HTMLElement) => [...row.querySelectorAll('th, td')].map((cell) => cell.textContent);
/** A table's body rows as text. */
const rowsOf = (table: HTMLElement) => within(table).getAllByRole('row').slice(1).map(cellsOf);
/** The table of a chart, by its figure's test id. */
const chartTable = (testId: string) => within(screen.getByTestId(testId)).getByRole('table');

describe('Usage page', () => {
  beforeEach(() => {
    backend = createFakeBackend();
    localStorage.clear();
  });

  it('opens on the shortest period that holds the requests of the last 90 days, in whole local days', async () => {
    seedLedger();
    renderPage();
    await screen.findByTestId('usage-totals');
    expect(backend.callsOf('usage:getSummary'), 'how far back the last 90 days go, then the period').toEqual([
      { from: midnight(-89), to: midnight(1) },
      { from: midnight(-29), to: midnight(1) },
    ]);
    expect(backend.callsOf('usage:getSeries')).toEqual([{ bucket: 'day', from: midnight(-29), to: midnight(1) }]);
    expect(screen.getByRole('radio', { name: 'Last 30 days' }), 'the earliest is 10 days ago: 30 days hold it, 7 do not').toBeChecked();
  });

  it.each([
    ['a first day', [at(0, 9)], 'Today'],
    ['three days', [at(0, 9), at(2, 9)], 'Last 7 days'],
    ['seven weeks', [at(0, 9), at(48, 9)], 'Last 90 days'],
    ['nothing yet', [], 'Today'],
  ])('opens on %s of history on the period that holds it', async (_, times, period) => {
    const key = backend.add('openai', 'sk-aaaaaaaaaaaa1111', { label: 'key A' }).id;
    backend.usage.setAttempts(times.map((time) => attempt(time, 'openai', key)));
    renderPage();
    await waitFor(() => expect(screen.getByRole('radio', { name: period })).toBeChecked());
  });

  it('labels today on the axis whatever the period, and spaces the other labels evenly back from it', async () => {
    const { timelineLabelled } = await import('../charts');
    for (const count of [1, 7, 24, 30, 90]) {
      expect(timelineLabelled(count - 1, count), `${count} buckets: the last, today, is labelled`).toBe(true);
      const labelled = Array.from({ length: count }, (_, i) => i).filter((i) => timelineLabelled(i, count));
      expect(labelled.length, `${count} buckets: at most 8 labels`).toBeLessThanOrEqual(8);
      const gaps = new Set(labelled.slice(1).map((i, n) => i - labelled[n]));
      expect(gaps.size, `${count} buckets: evenly spaced`).toBeLessThanOrEqual(1);
    }
  });

  it('shows the period’s totals: requests, failures, 429s, tokens with the cache share', async () => {
    seedLedger();
    renderPage();
    await screen.findByTestId('usage-totals');
    expect(total('requests')).toHaveTextContent('7');
    expect(total('failures')).toHaveTextContent('1');
    expect(total('rate-limited')).toHaveTextContent('1');
    expect(total('input')).toHaveTextContent('1,700');
    expect(total('cached')).toHaveTextContent('420');
    expect(screen.getByTestId('usage-total-cached-note'), '420 of 1,700').toHaveTextContent('24.7% of input from the cache');
    expect(total('output')).toHaveTextContent('280');
    expect(screen.queryByTestId('usage-total-cost'), 'no price known: no cost at all').not.toBeInTheDocument();
  });

  it('lists every key with its numbers, latencies and cost', async () => {
    seedLedger();
    backend.usage.setPrice({ model: 'gpt-4o-mini', inputPerMillion: 1000, cachedInputPerMillion: null, outputPerMillion: 2000 });
    renderPage();
    const table = await screen.findByTestId('usage-key-table');
    expect(rowsOf(table)).toEqual([
      // key A: 4 attempts (one 429); 300 in, 120 cached, 60 out; latencies 100, 500, 800, 1500.
      ['OpenAI', 'key A', '4', '1', '1', '300', '120', '60', '500 ms', '1.5 sec', '$0.42'],
      ['Anthropic', 'Provider key', '2', '0', '0', '400', '300', '20', '800 ms', '800 ms', 'no price'],
      ['OpenAI', 'key B', '1', '0', '0', '1,000', '0', '200', '2 sec', '2 sec', '$1.40'],
    ]);
    expect(total('cost')).toHaveTextContent('$1.82');
    expect(screen.getByTestId('usage-total-cost-note'), 'Anthropic’s model has no price').toHaveTextContent('partly priced');
  });

  it('tells requests sent without a key from the provider’s own key, in the table and the chart', async () => {
    // Local (Ollama) has no key at all: its requests went without one. Anthropic used its own key.
    backend.usage.setAttempts([
      attempt(at(0, 9), 'local', NO_KEY, { model: 'llama3.2', inputTokens: 50, cachedTokens: 0, outputTokens: 5 }),
      attempt(at(0, 10), 'anthropic', '', { model: 'claude-sonnet-4-5', inputTokens: 200, cachedTokens: 150, outputTokens: 10 }),
    ]);
    renderPage();
    const table = await screen.findByTestId('usage-key-table');
    expect(rowsOf(table).map((row) => row.slice(0, 3))).toEqual([
      ['Anthropic', 'Provider key', '1'],
      ['local', 'Without a key', '1'],
    ]);
    const tokens = chartTable('usage-chart-tokens');
    expect(within(tokens).getAllByRole('columnheader').map((h) => h.textContent).slice(1)).toEqual(['Anthropic · Provider key', 'local · Without a key', 'Total']);
  });

  it('keeps a long key label whole in a tooltip and beside its colour, in the legend and the table', async () => {
    const long = 'production key of the data-science team, billing account 7 (do not rotate)';
    const id = backend.add('openai', 'sk-long-label-1111', { label: long }).id;
    const other = backend.add('openai', 'sk-other-label-2222', { label: 'short' }).id;
    backend.usage.setAttempts([attempt(at(0, 9), 'openai', id), attempt(at(0, 10), 'openai', other)]);
    renderPage();
    const legend = await screen.findByTestId('usage-chart-tokens-legend');
    const item = within(legend)
      .getAllByRole('listitem', { hidden: true })
      .find((li) => li.textContent?.includes('production key'));
    expect(item, 'the long label is in the legend').toBeDefined();
    expect(item, 'its whole in the tooltip (with its provider, as every provider is shown)').toHaveAttribute('title', `OpenAI · ${long}`);
    expect(item?.querySelector('.usage-legend__swatch')?.getAttribute('style'), 'with its colour beside it').toMatch(/background/);
    const cell = within(screen.getByTestId('usage-key-table')).getByRole('rowheader', { name: long });
    expect(cell, 'the key table cuts it to its column, whole in the tooltip').toHaveAttribute('title', long);
    expect(cell).toHaveClass('usage-table__name');
  });

  it('draws three charts, each a figure with a named image and a table of the same numbers', async () => {
    seedLedger();
    renderPage();
    await screen.findByTestId('usage-totals');
    for (const [testId, caption] of [
      ['usage-chart-tokens', 'Tokens per key, by day'],
      ['usage-chart-activity', 'Requests, 429s and failovers, by day'],
      ['usage-chart-cache', 'Prompt cache hits, per provider'],
    ]) {
      expect(screen.getByRole('figure', { name: caption }), `${caption} is a captioned figure`).toHaveAttribute('data-testid', testId);
      expect(screen.getByRole('region', { name: `Table: ${caption}` }), 'its table scrolls with the keyboard').toHaveAttribute('tabindex', '0');
    }
    await waitFor(() => expect(screen.queryAllByRole('img'), 'no canvas that cannot draw: the tables stand alone').toEqual([]));
    // Days with tokens only; each key's input + output.
    const tokens = chartTable('usage-chart-tokens');
    expect(within(tokens).getAllByRole('columnheader').map((h) => h.textContent)).toEqual(['Day', 'OpenAI · key A', 'Anthropic · Provider key', 'OpenAI · key B', 'Total']);
    expect(rowsOf(tokens)).toEqual([
      ['Jan 5', '0', '0', '1,200', '1,200'],
      ['Jan 12', '0', '420', '0', '420'],
      ['Jan 15', '360', '0', '0', '360'],
    ]);
    expect(rowsOf(chartTable('usage-chart-activity'))).toEqual([
      ['Jan 5', '1', '0', '0'],
      ['Jan 12', '2', '0', '0'],
      ['Jan 14', '1', '1', '1'],
      ['Jan 15', '3', '0', '0'],
    ]);
    expect(rowsOf(chartTable('usage-chart-cache'))).toEqual([
      ['OpenAI', '120', '1,300', '9.2%'],
      ['Anthropic', '300', '400', '75%'],
    ]);
  });

  it('asks again for the chosen period: today by the hour, 7 days, 90 days', async () => {
    seedLedger();
    const user = renderPage();
    await screen.findByTestId('usage-totals');

    await user.click(screen.getByRole('radio', { name: 'Today' }));
    await waitFor(() => expect(total('requests')).toHaveTextContent('3'));
    expect(backend.callsOf('usage:getSummary').at(-1)).toEqual({ from: midnight(0), to: midnight(1) });
    expect(backend.callsOf('usage:getSeries').at(-1)).toEqual({ bucket: 'hour', from: midnight(0), to: midnight(1) });
    expect(screen.getByRole('figure', { name: 'Requests, 429s and failovers, by hour' })).toBeInTheDocument();
    expect(rowsOf(chartTable('usage-chart-activity')).map((row) => row[0]), 'the hours of today with requests').toEqual(['09:00', '10:00', '11:00']);

    await user.click(screen.getByRole('radio', { name: 'Last 7 days' }));
    await waitFor(() => expect(total('requests')).toHaveTextContent('6'));
    expect(backend.callsOf('usage:getSummary').at(-1)).toEqual({ from: midnight(-6), to: midnight(1) });

    await user.click(screen.getByRole('radio', { name: 'Last 90 days' }));
    await waitFor(() => expect(backend.callsOf('usage:getSummary').at(-1)).toEqual({ from: midnight(-89), to: midnight(1) }));
    await waitFor(() => expect(total('requests'), 'the request of 100 days ago is in none').toHaveTextContent('7'));
    expect(backend.callsOf('usage:getSeries').at(-1)).toEqual({ bucket: 'day', from: midnight(-89), to: midnight(1) });
  });

  it('shows one provider when one is chosen, its keys named without it', async () => {
    seedLedger();
    const user = renderPage();
    await screen.findByTestId('usage-totals');
    await user.selectOptions(screen.getByRole('combobox', { name: 'Provider' }), 'Anthropic');
    await waitFor(() => expect(total('requests')).toHaveTextContent('2'));
    expect(backend.callsOf('usage:getSummary').at(-1)).toEqual({ providerId: 'anthropic', from: midnight(-29), to: midnight(1) });
    expect(backend.callsOf('usage:getSeries').at(-1)).toEqual({ providerId: 'anthropic', bucket: 'day', from: midnight(-29), to: midnight(1) });
    expect(within(chartTable('usage-chart-tokens')).getAllByRole('columnheader').map((h) => h.textContent)).toEqual(['Day', 'Provider key', 'Total']);

    await user.selectOptions(screen.getByRole('combobox', { name: 'Provider' }), 'All providers');
    await waitFor(() => expect(total('requests')).toHaveTextContent('7'));
    expect(backend.callsOf('usage:getSummary').at(-1), 'all providers: no providerId').toEqual({ from: midnight(-29), to: midnight(1) });
  });

  it('exports what the page shows: the chosen provider alone, or every one', async () => {
    seedLedger();
    const user = renderPage();
    await screen.findByTestId('usage-totals');
    const status = screen.getByRole('status');
    await user.selectOptions(screen.getByRole('combobox', { name: 'Provider' }), 'Anthropic');
    await waitFor(() => expect(total('requests')).toHaveTextContent('2'));
    await user.click(screen.getByRole('button', { name: 'Export CSV' }));
    await waitFor(() => expect(status).toHaveTextContent('Saved 2 requests to /home/me/keypool-usage.csv.'));
    expect(backend.usage.exports()).toEqual([{ providerId: 'anthropic', from: midnight(-29), to: midnight(1) }]);

    await user.selectOptions(screen.getByRole('combobox', { name: 'Provider' }), 'All providers');
    await waitFor(() => expect(total('requests')).toHaveTextContent('7'));
    await user.click(screen.getByRole('button', { name: 'Export CSV' }));
    await waitFor(() => expect(status).toHaveTextContent('Saved 7 requests to /home/me/keypool-usage.csv.'));
    expect(backend.usage.exports().at(-1), 'all providers: no providerId').toEqual({ from: midnight(-29), to: midnight(1) });
  });

  it('explains what is recorded when there is no usage yet', async () => {
    renderPage();
    const empty = await screen.findByTestId('usage-empty');
    expect(within(empty).getByRole('heading', { name: 'No usage in this period' })).toBeInTheDocument();
    expect(empty).toHaveTextContent('from your chats and from the local API');
    expect(screen.queryByTestId('usage-totals')).not.toBeInTheDocument();
    expect(screen.getByTestId('prices-section'), 'prices can be set before any usage').toBeInTheDocument();
  });

  it('says why the usage could not be read, in words, and reads it again on Retry', async () => {
    seedLedger();
    // The period's read fails (how far back the ledger goes was read: the page knows where to open).
    backend.rejectNext('usage:getSeries', { code: 'storage', message: 'database is locked' });
    const user = renderPage();
    const problem = await screen.findByTestId('usage-load-error');
    expect(problem).toHaveAttribute('role', 'alert');
    expect(problem).toHaveTextContent('Could not load the usage:');
    expect(problem, 'never the backend’s English').not.toHaveTextContent('database is locked');
    await user.click(within(problem).getByRole('button', { name: 'Try again' }));
    expect(await screen.findByTestId('usage-totals')).toBeInTheDocument();
  });

  it('exports the period as CSV and announces where it went; a cancelled dialog says nothing', async () => {
    seedLedger();
    const user = renderPage();
    await screen.findByTestId('usage-totals');
    const status = screen.getByRole('status');
    await user.click(screen.getByRole('button', { name: 'Export CSV' }));
    await waitFor(() => expect(status).toHaveTextContent('Saved 7 requests to /home/me/keypool-usage.csv.'));
    expect(backend.usage.exports()).toEqual([{ from: midnight(-29), to: midnight(1) }]);

    backend.usage.onExport({ path: null });
    await user.click(screen.getByRole('button', { name: 'Export CSV' }));
    await waitFor(() => expect(backend.usage.exports()).toHaveLength(2));
    await waitFor(() => expect(status).toBeEmptyDOMElement());
    expect(screen.queryByTestId('usage-export-error')).not.toBeInTheDocument();

    backend.usage.onExport({
      error: { code: 'validation', message: 'path: could not be written', issues: [{ path: 'path', code: 'cannot_write', params: { reason: 'Permission denied' }, message: 'x' }] },
    });
    await user.click(screen.getByRole('button', { name: 'Export CSV' }));
    expect(await screen.findByTestId('usage-export-error')).toHaveTextContent('Could not export the usage: The file could not be written (Permission denied).');
  });

  it('is worded in the UI’s language, numbers and days included', async () => {
    seedLedger();
    renderPage('ru');
    await screen.findByTestId('usage-totals');
    expect(screen.getByRole('heading', { name: 'Расход' })).toBeInTheDocument();
    expect(total('input')).toHaveTextContent(/^1\s700$/);
    expect(rowsOf(chartTable('usage-chart-tokens'))[0][0]).toBe('5 янв.');
  });
});

describe('Prices', () => {
  beforeEach(() => {
    backend = createFakeBackend();
    localStorage.clear();
  });

  it('starts with none, and adds one: the costs appear at once', async () => {
    seedLedger();
    const user = renderPage();
    expect(await screen.findByTestId('prices-empty')).toHaveTextContent('No prices yet.');
    await screen.findByTestId('usage-totals');
    expect(screen.queryByTestId('usage-total-cost')).not.toBeInTheDocument();

    await user.click(screen.getByRole('button', { name: 'Add a price' }));
    const dialog = screen.getByRole('dialog', { name: 'Add a price' });
    expect(within(dialog).getByRole('combobox', { name: 'Model' }), 'the model field has the focus').toHaveFocus();
    await user.type(within(dialog).getByRole('combobox', { name: 'Model' }), '  gpt-4o-mini ');
    await user.type(within(dialog).getByRole('textbox', { name: 'Input' }), '1000');
    await user.type(within(dialog).getByRole('textbox', { name: 'Output' }), '2000,5');
    await user.click(within(dialog).getByRole('button', { name: 'Save price' }));

    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(backend.callsOf('usage:setPrice')).toEqual([{ model: 'gpt-4o-mini', inputPerMillion: 1000, outputPerMillion: 2000.5 }]);
    const row = await screen.findByTestId('price-row');
    expect(cellsOf(row)).toEqual(['gpt-4o-mini', '$1,000.00', 'as input', '$2,000.50', '']);
    await waitFor(() => expect(total('cost')).toHaveTextContent('$1.82'));
  });

  it('names the models that spent tokens without a price, each a click from its price', async () => {
    seedLedger();
    const user = renderPage();
    const unpriced = await screen.findByTestId('unpriced-models');
    const listed = () => screen.queryAllByTestId('unpriced-model').map((item) => item.dataset.model);
    expect(unpriced).toHaveTextContent('These models spent tokens in this period but have no price');
    expect(listed()).toEqual(['claude-sonnet-4-5', 'gpt-4o-mini']);

    await user.click(screen.getByRole('button', { name: 'Add a price for gpt-4o-mini' }));
    const dialog = screen.getByRole('dialog', { name: 'Add a price' });
    expect(within(dialog).getByRole('combobox', { name: 'Model' })).toHaveValue('gpt-4o-mini');
    expect(within(dialog).getByRole('textbox', { name: 'Input' }), 'the model is filled in: the price is next').toHaveFocus();
    await user.type(within(dialog).getByRole('textbox', { name: 'Input' }), '1000');
    await user.type(within(dialog).getByRole('textbox', { name: 'Output' }), '2000');
    await user.click(within(dialog).getByRole('button', { name: 'Save price' }));

    await waitFor(() => expect(listed()).toEqual(['claude-sonnet-4-5']));
    expect(backend.callsOf('usage:setPrice')).toEqual([{ model: 'gpt-4o-mini', inputPerMillion: 1000, outputPerMillion: 2000 }]);
    expect(screen.getByTestId('usage-total-cost-note')).toHaveTextContent('partly priced');

    await user.selectOptions(screen.getByRole('combobox', { name: 'Provider' }), 'OpenAI');
    await waitFor(() => expect(screen.queryByTestId('unpriced-models'), 'OpenAI alone: every model priced').not.toBeInTheDocument());
    expect(screen.queryByTestId('usage-total-cost-note'), 'and its cost whole').not.toBeInTheDocument();
  });

  it('checks the form like the backend and shows each problem at its field', async () => {
    const user = renderPage();
    await user.click(await screen.findByRole('button', { name: 'Add a price' }));
    const dialog = screen.getByRole('dialog', { name: 'Add a price' });
    await user.type(within(dialog).getByRole('textbox', { name: 'Input' }), '-1');
    await user.type(within(dialog).getByRole('textbox', { name: /Cached input/ }), '100001');
    await user.click(within(dialog).getByRole('button', { name: 'Save price' }));

    expect(screen.getByTestId('price-model-error')).toHaveTextContent('Enter the model’s name.');
    expect(screen.getByTestId('price-input-error')).toHaveTextContent('A number from 0 to 100,000, such as 2.50.');
    expect(screen.getByTestId('price-cached-error')).toHaveTextContent('A number from 0 to 100,000, such as 2.50.');
    expect(screen.getByTestId('price-output-error')).toHaveTextContent('Enter a price (0 for free).');
    expect(within(dialog).getByRole('combobox', { name: 'Model' }), 'the first field in error has the focus').toHaveFocus();
    expect(within(dialog).getByRole('textbox', { name: 'Input' })).toHaveAccessibleDescription('A number from 0 to 100,000, such as 2.50.');
    expect(backend.callsOf('usage:setPrice'), 'nothing sent').toEqual([]);
  });

  it('shows the backend’s own refusal at its field', async () => {
    const user = renderPage();
    await user.click(await screen.findByRole('button', { name: 'Add a price' }));
    const dialog = screen.getByRole('dialog', { name: 'Add a price' });
    backend.rejectNext('usage:setPrice', {
      code: 'validation',
      message: 'outputPerMillion: must be at most 100000',
      issues: [{ path: 'outputPerMillion', code: 'too_large', params: { max: 100_000 }, message: 'must be at most 100000' }],
    });
    await user.type(within(dialog).getByRole('combobox', { name: 'Model' }), 'gpt-4o');
    await user.type(within(dialog).getByRole('textbox', { name: 'Input' }), '2.5');
    await user.type(within(dialog).getByRole('textbox', { name: 'Output' }), '10');
    await user.click(within(dialog).getByRole('button', { name: 'Save price' }));
    expect(await screen.findByTestId('price-output-error')).toHaveTextContent('At most 100,000.');
    expect(within(dialog).getByRole('textbox', { name: 'Output' })).toHaveFocus();
  });

  it('edits a price (its model stays) and deletes one after asking', async () => {
    seedLedger();
    backend.usage.setPrice({ model: 'gpt-4o-mini', inputPerMillion: 1000, cachedInputPerMillion: 500, outputPerMillion: 2000 });
    const user = renderPage();
    const row = await screen.findByTestId('price-row');
    await waitFor(() => expect(total('cost')).toHaveTextContent('$1.76'));

    await user.click(within(row).getByRole('button', { name: 'Edit the price of gpt-4o-mini' }));
    const dialog = screen.getByRole('dialog', { name: 'Price of gpt-4o-mini' });
    expect(within(dialog).queryByRole('combobox', { name: 'Model' }), 'a price is per model: the model is not edited').not.toBeInTheDocument();
    const cached = within(dialog).getByRole('textbox', { name: /Cached input/ });
    expect(cached).toHaveValue('500');
    await user.clear(cached);
    await user.click(within(dialog).getByRole('button', { name: 'Save price' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(backend.callsOf('usage:setPrice')).toEqual([{ model: 'gpt-4o-mini', inputPerMillion: 1000, outputPerMillion: 2000 }]);
    await waitFor(() => expect(total('cost'), 'cached input at the input price again').toHaveTextContent('$1.82'));

    await user.click(within(screen.getByTestId('price-row')).getByRole('button', { name: 'Delete the price of gpt-4o-mini' }));
    const confirm = screen.getByRole('alertdialog', { name: 'Delete the price of gpt-4o-mini?' });
    expect(within(confirm).getByRole('button', { name: 'Cancel' }), 'Enter does not delete by accident').toHaveFocus();
    await user.click(within(confirm).getByRole('button', { name: 'Delete price' }));
    expect(await screen.findByTestId('prices-empty')).toBeInTheDocument();
    expect(backend.callsOf('usage:deletePrice')).toEqual([{ model: 'gpt-4o-mini' }]);
    await waitFor(() => expect(screen.queryByTestId('usage-total-cost'), 'no price left: no cost').not.toBeInTheDocument());
  });
});
