import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { I18nProvider } from '../../../../../i18n/I18nProvider';
import { createFakeBackend, type FakeBackend } from '../../../../../test/fakeBackend';

let backend: FakeBackend;
vi.mock('@tauri-apps/api/core', () => ({ invoke: (command: string, args: Record<string, unknown>) => backend.invoke(command, args) }));
vi.mock('@tauri-apps/api/event', () => ({ listen: (event: string, handler: never) => backend.listen(event, handler) }));

const { ProvidersSection } = await import('../../../providers/ProvidersSection');

function renderSection() {
  const user = userEvent.setup();
  render(
    <I18nProvider initial="en">
      <ProvidersSection />
    </I18nProvider>,
  );
  return user;
}

const labels = () => screen.queryAllByTestId('key-label').map((l) => l.textContent);
const checkbox = (name: string) => screen.getByRole('checkbox', { name: `Select ${name}` });

/** Five keys: two active, one cooling, one disabled after a 401, one out of credit. */
function fivekeys() {
  backend.add('openai', 'sk-alpha-0001', { label: 'alpha', sortOrder: 0, weight: 3, quotaGroup: 'team-x' });
  backend.add('openai', 'sk-bravo-0002', { label: 'bravo', sortOrder: 1, weight: 1 });
  const cooling = backend.add('openai', 'sk-charl-0003', { label: 'charlie', sortOrder: 2, weight: 2 });
  backend.add('openai', 'sk-delta-0004', { label: 'delta', sortOrder: 3, weight: 5, enabled: false, disabledReason: 'HTTP 401', disabledAt: 1 });
  const exhausted = backend.add('openai', 'sk-echo-0005', { label: 'echo', sortOrder: 4, weight: 4, quotaGroup: 'team-x' });
  backend.setLive(cooling.id, { state: 'cooling', coolingUntil: backend.now() + 60_000 });
  backend.setLive(exhausted.id, { state: 'exhausted', nextProbeAt: null });
}

describe('the key table', () => {
  beforeEach(() => {
    backend = createFakeBackend();
    localStorage.clear();
  });

  it('filters by state and searches label, preview and group, saying how many are shown', async () => {
    fivekeys();
    const user = renderSection();
    await screen.findByText('alpha');
    const state = screen.getByRole('combobox', { name: 'State' });
    await user.selectOptions(state, 'cooling');
    expect(labels(), 'only the cooling key').toEqual(['charlie']);
    await user.selectOptions(state, 'disabled');
    expect(labels(), 'only the key switched off').toEqual(['delta']);
    await user.selectOptions(state, 'exhausted');
    expect(labels(), 'only the key out of credit').toEqual(['echo']);
    await user.selectOptions(state, 'active');
    expect(labels(), 'cooling and out-of-credit keys are not active').toEqual(['alpha', 'bravo']);
    expect(screen.getByTestId('pool-filtered')).toHaveTextContent('Showing 2 of 5 keys.');
    await user.selectOptions(state, 'all');

    const search = screen.getByRole('searchbox', { name: 'Search' });
    await user.type(search, 'TEAM-X');
    expect(labels(), 'a group matches, case aside').toEqual(['alpha', 'echo']);
    await user.clear(search);
    await user.type(search, '0003');
    expect(labels(), 'the preview matches').toEqual(['charlie']);
    await user.clear(search);
    await user.type(search, 'zulu');
    expect(labels(), 'nothing matches').toEqual([]);
    expect(screen.getByTestId('pool-no-match')).toHaveTextContent('No key matches the filter.');
  });

  it('sorts by a column header: ascending, descending, then the pool order again, and says so on the header', async () => {
    fivekeys();
    const user = renderSection();
    await screen.findByText('alpha');
    const weight = screen.getByRole('button', { name: /^Weight/ });
    await user.click(weight);
    expect(labels(), 'lightest first').toEqual(['bravo', 'charlie', 'alpha', 'echo', 'delta']);
    expect(weight.closest('th'), 'the header says how it sorts').toHaveAttribute('aria-sort', 'ascending');
    await user.click(weight);
    expect(labels(), 'heaviest first').toEqual(['delta', 'echo', 'alpha', 'charlie', 'bravo']);
    expect(weight.closest('th')).toHaveAttribute('aria-sort', 'descending');
    await user.click(weight);
    expect(labels(), 'back to the pool order').toEqual(['alpha', 'bravo', 'charlie', 'delta', 'echo']);
    expect(weight.closest('th')).not.toHaveAttribute('aria-sort');

    await user.click(screen.getByRole('button', { name: /^State/ }));
    expect(labels(), 'usable first, switched off last').toEqual(['alpha', 'bravo', 'charlie', 'echo', 'delta']);
    await user.click(screen.getByRole('button', { name: /^Key/ }));
    await user.click(screen.getByRole('button', { name: /^Key/ }));
    expect(labels(), 'by name, descending').toEqual(['echo', 'delta', 'charlie', 'bravo', 'alpha']);
  });

  it('turns reordering off while sorted, and says why on the handle', async () => {
    fivekeys();
    const user = renderSection();
    await screen.findByText('alpha');
    await user.click(screen.getByRole('button', { name: /^Weight/ }));
    const handle = screen.getByRole('button', { name: 'Move bravo' });
    expect(handle, 'the handle is marked unusable').toHaveAttribute('aria-disabled', 'true');
    expect(handle).toHaveAccessibleDescription(/Reordering is off while the table is sorted/);
    handle.focus();
    await user.keyboard('{ArrowDown}');
    expect(backend.callsOf('llmConfig:reorderApiKeys'), 'a sorted view changes no order').toEqual([]);
  });

  it('selects one row, a shift-click range, every shown row, and every filtered row only', async () => {
    fivekeys();
    const user = renderSection();
    await screen.findByText('alpha');
    await user.click(checkbox('alpha'));
    expect(screen.getByTestId('bulk-count')).toHaveTextContent('1 key selected');
    await user.keyboard('{Shift>}');
    await user.click(checkbox('delta'));
    await user.keyboard('{/Shift}');
    expect(screen.getByTestId('bulk-count'), 'alpha to delta').toHaveTextContent('4 keys selected');
    expect(checkbox('echo'), 'past the range: not selected').not.toBeChecked();
    expect(screen.getByRole('checkbox', { name: 'Select all 5 keys shown' }), 'some are: mixed').toHaveProperty('indeterminate', true);

    await user.click(screen.getByTestId('bulk-clear'));
    expect(screen.queryByTestId('bulk-bar'), 'nothing selected: no bulk bar').not.toBeInTheDocument();

    await user.selectOptions(screen.getByRole('combobox', { name: 'State' }), 'active');
    await user.click(screen.getByRole('checkbox', { name: 'Select all 2 keys shown' }));
    expect(screen.getByTestId('bulk-count'), 'only the filtered rows').toHaveTextContent('2 keys selected');
    await user.selectOptions(screen.getByRole('combobox', { name: 'State' }), 'all');
    expect(checkbox('alpha')).toBeChecked();
    expect(checkbox('bravo')).toBeChecked();
    expect(checkbox('charlie'), 'hidden rows were not selected').not.toBeChecked();
    await user.click(screen.getByTestId('bulk-select-shown'));
    expect(screen.getByTestId('bulk-count'), 'then every key').toHaveTextContent('5 keys selected');
  });

  it('moves between rows with the arrow keys on their checkboxes', async () => {
    fivekeys();
    const user = renderSection();
    await screen.findByText('alpha');
    checkbox('alpha').focus();
    await user.keyboard('{ArrowDown}');
    expect(checkbox('bravo'), 'down: the next row').toHaveFocus();
    await user.keyboard('{End}');
    expect(checkbox('echo'), 'End: the last row').toHaveFocus();
    await user.keyboard('{Home}');
    expect(checkbox('alpha'), 'Home: the first').toHaveFocus();
    await user.keyboard(' ');
    expect(checkbox('alpha'), 'Space selects').toBeChecked();
  });
});

describe('bulk actions on the selected keys', () => {
  beforeEach(() => {
    backend = createFakeBackend();
    localStorage.clear();
  });

  async function selectBravoToDelta(user: ReturnType<typeof userEvent.setup>) {
    await screen.findByText('alpha');
    await user.click(checkbox('bravo'));
    await user.keyboard('{Shift>}');
    await user.click(checkbox('delta'));
    await user.keyboard('{/Shift}');
  }
  const ids = () => backend.keys().filter((k) => ['bravo', 'charlie', 'delta'].includes(k.label ?? '')).map((k) => k.id);

  it('enables, disables, sets the weight and the group of the selected keys in one command each', async () => {
    fivekeys();
    const user = renderSection();
    await selectBravoToDelta(user);
    const bar = screen.getByRole('toolbar', { name: 'Selected keys' });
    await user.click(within(bar).getByRole('button', { name: 'Disable' }));
    await waitFor(() => expect(screen.getByTestId('pool-announcement')).toHaveTextContent('3 keys disabled.'));
    expect(backend.callsOf('llmConfig:updateApiKeys'), 'one command for the three').toEqual([{ ids: ids(), enabled: false }]);
    expect(backend.keys().map((k) => k.enabled)).toEqual([true, false, false, false, true]);

    await user.click(within(bar).getByRole('button', { name: 'Enable' }));
    // Delta was switched off after a 401: asked first, as for one key.
    const ask = await screen.findByRole('alertdialog', { name: 'Turn on 1 key the provider refused?' });
    await user.click(within(ask).getByRole('button', { name: 'Turn all 3 on anyway' }));
    await waitFor(() => expect(screen.getByTestId('pool-announcement')).toHaveTextContent('3 keys enabled.'));
    expect(backend.callsOf('llmConfig:updateApiKeys').at(-1)).toEqual({ ids: ids(), enabled: true });

    const weight = within(bar).getByLabelText('Weight');
    await user.clear(weight);
    await user.type(weight, '7');
    await user.click(within(bar).getByRole('button', { name: 'Set weight' }));
    await waitFor(() => expect(screen.getByTestId('pool-announcement')).toHaveTextContent('Weight 7 set on 3 keys.'));
    expect(backend.keys().map((k) => k.weight)).toEqual([3, 7, 7, 7, 4]);

    await user.clear(weight);
    await user.type(weight, '500');
    await user.click(within(bar).getByRole('button', { name: 'Set weight' }));
    expect(within(bar).getByRole('alert'), 'a weight out of range is refused here').toHaveTextContent('The weight is a whole number from 1 to 100');
    expect(backend.callsOf('llmConfig:updateApiKeys').filter((c) => c.weight === 500), 'and not sent').toEqual([]);

    await user.type(within(bar).getByLabelText('Quota group'), 'org-9');
    await user.click(within(bar).getByRole('button', { name: 'Set group' }));
    await waitFor(() => expect(screen.getByTestId('pool-announcement')).toHaveTextContent('Group “org-9” set on 3 keys.'));
    expect(backend.keys().map((k) => k.quotaGroup)).toEqual(['team-x', 'org-9', 'org-9', 'org-9', 'team-x']);
  });

  it('deletes the selected keys after one confirmation that names the count', async () => {
    fivekeys();
    const user = renderSection();
    await selectBravoToDelta(user);
    await user.click(screen.getByRole('button', { name: 'Delete…' }));
    const dialog = screen.getByRole('alertdialog', { name: 'Delete keys?' });
    expect(dialog).toHaveTextContent('Delete 3 keys from the pool? This cannot be undone.');
    expect(backend.callsOf('llmConfig:deleteApiKeys'), 'nothing before the answer').toEqual([]);
    await user.click(within(dialog).getByRole('button', { name: 'Delete 3 keys' }));
    await waitFor(() => expect(screen.queryByRole('alertdialog')).not.toBeInTheDocument());
    expect(backend.callsOf('llmConfig:deleteApiKeys'), 'one command').toHaveLength(1);
    expect(labels(), 'the others stay').toEqual(['alpha', 'echo']);
    expect(screen.getByTestId('pool-announcement')).toHaveTextContent('3 keys deleted.');
    expect(screen.queryByTestId('bulk-bar'), 'the deleted keys are no longer selected').not.toBeInTheDocument();
  });

  it('tests the selected keys in one command and shows each result on its row', async () => {
    fivekeys();
    const delta = backend.keys()[3];
    backend.setKeyTest(delta.id, { ok: false, status: 401, problem: { kind: 'keyRejected' } as never, message: 'invalid key', latencyMs: 5 });
    const user = renderSection();
    await selectBravoToDelta(user);
    await user.click(screen.getByRole('button', { name: 'Test' }));
    await waitFor(() => expect(screen.getByTestId('pool-announcement')).toHaveTextContent('Tested 3: 2 work, 1 failed.'));
    expect(backend.callsOf('llmConfig:testApiKeys')).toEqual([{ ids: ids() }]);
    expect(backend.callsOf('llmConfig:testApiKey'), 'not one command per key').toEqual([]);
  });

  it('exports the selected keys as CSV, and the full keys only after a warning', async () => {
    fivekeys();
    const user = renderSection();
    await selectBravoToDelta(user);
    await user.click(screen.getByRole('button', { name: 'Export CSV' }));
    await waitFor(() => expect(screen.getByTestId('pool-announcement')).toHaveTextContent('3 keys exported to /home/user/keys.csv.'));
    expect(backend.callsOf('llmConfig:exportApiKeys')).toEqual([{ providerId: 'openai', ids: ids(), full: false }]);

    await user.click(screen.getByRole('button', { name: 'Export full keys…' }));
    const warning = screen.getByRole('alertdialog', { name: 'Export full keys?' });
    expect(warning, 'says what the file holds').toHaveTextContent('anyone who reads the file can use them');
    expect(backend.callsOf('llmConfig:exportApiKeys'), 'nothing before the answer').toHaveLength(1);
    await user.click(within(warning).getByRole('button', { name: 'Cancel' }));
    expect(backend.callsOf('llmConfig:exportApiKeys'), 'cancelled: nothing exported').toHaveLength(1);

    backend.onKeyExport(null);
    await user.click(screen.getByRole('button', { name: 'Export full keys…' }));
    await user.click(within(screen.getByRole('alertdialog')).getByRole('button', { name: 'Choose where to save' }));
    await waitFor(() => expect(screen.getByTestId('pool-announcement')).toHaveTextContent('Nothing exported: no file was chosen.'));
    expect(backend.callsOf('llmConfig:exportApiKeys').at(-1)).toEqual({ providerId: 'openai', ids: ids(), full: true });
  });
});

describe('the key table with thousands of keys', () => {
  let heights: PropertyDescriptor | undefined;
  let tops: PropertyDescriptor | undefined;
  let rects: PropertyDescriptor | undefined;
  /** Where the head ends in the scrolling box: the rows' box starts 40 px below the box's top. */
  const HEAD = 40;
  const isRowsBox = (element: Element) => element.classList.contains('key-table__rows');
  beforeEach(() => {
    backend = createFakeBackend();
    localStorage.clear();
    // Rows 60 px high (jsdom lays out nothing), so the 720 px box holds 12 of them.
    heights = Object.getOwnPropertyDescriptor(HTMLElement.prototype, 'offsetHeight');
    Object.defineProperty(HTMLElement.prototype, 'offsetHeight', {
      configurable: true,
      get(this: HTMLElement) {
        return this.dataset.testid === 'key-row' ? 60 : 0;
      },
    });
    // A head above the rows: the rows' box starts HEAD px down in the scrolling box (by its
    // rectangle and by its offsetTop alike), which the rows' box's height must not lose.
    tops = Object.getOwnPropertyDescriptor(HTMLElement.prototype, 'offsetTop');
    Object.defineProperty(HTMLElement.prototype, 'offsetTop', {
      configurable: true,
      get(this: HTMLElement) {
        return isRowsBox(this) ? HEAD : 0;
      },
    });
    rects = Object.getOwnPropertyDescriptor(Element.prototype, 'getBoundingClientRect');
    const rect = rects?.value as (this: Element) => DOMRect;
    Object.defineProperty(Element.prototype, 'getBoundingClientRect', {
      configurable: true,
      value(this: Element) {
        const r = rect.call(this);
        if (!isRowsBox(this)) return r;
        return { x: r.x, left: r.left, right: r.right, width: r.width, height: r.height, top: HEAD, y: HEAD, bottom: HEAD + r.height, toJSON: () => ({}) };
      },
    });
  });
  afterEach(() => {
    if (heights) Object.defineProperty(HTMLElement.prototype, 'offsetHeight', heights);
    if (tops) Object.defineProperty(HTMLElement.prototype, 'offsetTop', tops);
    if (rects) Object.defineProperty(Element.prototype, 'getBoundingClientRect', rects);
  });

  it('draws only the rows near the view, and tells assistive technology the whole count', async () => {
    for (let i = 0; i < 2000; i++) backend.add('openai', `sk-many-${String(i).padStart(6, '0')}`, { label: `key ${i}`, sortOrder: i });
    renderSection();
    await screen.findByText('key 0');
    const table = screen.getByRole('table', { name: 'API keys' });
    expect(table, 'the header row and every key').toHaveAttribute('aria-rowcount', '2001');
    const drawn = within(table).getAllByTestId('key-row');
    expect(drawn.length, 'a window of rows, not 2000').toBeLessThan(60);
    expect(drawn[1], 'each row knows its place').toHaveAttribute('aria-rowindex', '3');
    await waitFor(() => expect(screen.getByTestId('pool-summary')).toHaveTextContent('Keys on: 2,000 of 2,000'));
  });
  it('places each drawn row by its index, and after a scroll draws the rows there with their aria-rowindex', async () => {
    for (let i = 0; i < 2000; i++) backend.add('openai', `sk-many-${String(i).padStart(6, '0')}`, { label: `key ${i}`, sortOrder: i });
    const user = renderSection();
    await screen.findByText('key 0');
    const box = screen.getByTestId('key-list-scroll');
    const table = within(box).getByRole('table', { name: 'API keys' });
    const body = within(table).getAllByRole('rowgroup')[1];
    expect(body.style.height, 'the rows’ box is as high as all 2000 rows of 60 px, the head above it aside').toBe('120000px');
    // jsdom scrolls nothing: the box's offset is kept here, and each scroll sends its event.
    let top = 0;
    Object.defineProperty(box, 'scrollTop', { configurable: true, get: () => top, set: (value: number) => (top = value) });
    Object.defineProperty(box, 'scrollHeight', { configurable: true, get: () => 60 * 2000 });
    box.scrollTo = ((options: ScrollToOptions) => {
      top = options.top ?? top;
      fireEvent.scroll(box);
    }) as typeof box.scrollTo;
    box.scrollTo({ top: 60 * 1000 });
    await waitFor(() => expect(labels(), 'the rows around key 1000 are drawn').toContain('key 1000'));
    expect(labels(), 'and not the first ones any more').not.toContain('key 0');
    const row = within(table).getAllByTestId('key-row').find((r) => within(r).queryByText('key 1000'));
    expect(row, 'key 1000 is the 1002nd row of the table (the header is the first)').toHaveAttribute('aria-rowindex', '1002');
    expect(row?.style.transform, 'placed at its own offset in the rows’ box').toBe('translateY(60000px)');
    for (const each of within(table).getAllByTestId('key-row')) {
      const index = Number(each.getAttribute('aria-rowindex')) - 2;
      expect(within(each).getByTestId('key-label'), 'each drawn row shows the key of its index').toHaveTextContent(`key ${index}`);
      expect(each.style.transform, 'and sits at 60 px times its index').toBe(`translateY(${index * 60}px)`);
    }

    checkbox('key 1000').focus();
    await user.keyboard('{ArrowDown}');
    expect(checkbox('key 1001'), 'down after a scroll: the next row').toHaveFocus();
    await user.keyboard('{End}');
    await waitFor(() => expect(checkbox('key 1999'), 'End: the last key, drawn first').toHaveFocus());
    expect(checkbox('key 1999').closest('tr'), 'the last row’s index').toHaveAttribute('aria-rowindex', '2001');
  });
});
