import { act, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { I18nProvider } from '../../../../i18n/I18nProvider';
import { createFakeBackend, type FakeBackend } from '../../../../test/fakeBackend';

/*
 * A write answers with what it stored (the key row, the rows, the whole order, what went): the
 * pool shows that answer, and its own `llmConfig:changed` echo reads nothing again. Only what the
 * answer cannot say (the pool's live status) is asked for, and a change made elsewhere still
 * reloads the list.
 */

let backend: FakeBackend;
vi.mock('@tauri-apps/api/core', () => ({ invoke: (command: string, args: Record<string, unknown>) => backend.invoke(command, args) }));
vi.mock('@tauri-apps/api/event', () => ({ listen: (event: string, handler: never) => backend.listen(event, handler) }));

const { ProvidersSection } = await import('../../providers/ProvidersSection');

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
const row = (name: string) => {
  const found = screen.queryAllByTestId('key-row').find((r) => within(r).queryByText(name));
  if (!found) throw new Error(`no row ${name}`);
  return found;
};
/** How often the pool's three reads ran: the key list, the live status, today's usage. */
const reads = () => ({
  keys: backend.callsOf('llmConfig:getApiKeys').length,
  status: backend.callsOf('llmConfig:getPoolStatus').length,
  usage: backend.callsOf('usage:getSummary').length,
});
/** Lets the write's `llmConfig:changed` (and anything it would start) land. */
const settle = () => act(() => new Promise<void>((resolve) => setTimeout(resolve, 50)));

describe('a write’s answer updates the pool', () => {
  beforeEach(() => {
    backend = createFakeBackend();
    localStorage.clear();
  });

  async function twoKeys() {
    backend.add('openai', 'sk-light-0001', { label: 'light', sortOrder: 0, weight: 1 });
    backend.add('openai', 'sk-heavy-0002', { label: 'heavy', sortOrder: 1, weight: 3 });
    const user = renderSection();
    await screen.findByText('light');
    await settle();
    return user;
  }

  it('shows a weight edit from the write’s answer without reading the keys, the status or the usage again', async () => {
    const user = await twoKeys();
    const before = reads();
    const weight = within(row('light')).getByRole('textbox', { name: 'Weight of light' });
    await user.clear(weight);
    await user.type(weight, '5{Enter}');
    await waitFor(() => expect(within(row('light')).getByTestId('key-weight-status')).toHaveTextContent('Saved.'));
    await settle();
    expect(backend.callsOf('llmConfig:updateApiKey'), 'one write').toEqual([{ id: 'key-1', weight: 5 }]);
    expect(reads(), 'the answer is the row: nothing of the pool is read again, its own event included').toEqual(before);

    await user.click(screen.getByRole('button', { name: /^Weight/ }));
    expect(labels(), 'the pool holds the answered weight: light (5) now sorts after heavy (3)').toEqual(['heavy', 'light']);
  });

  it('still reloads the list for a change made elsewhere after its own write', async () => {
    const user = await twoKeys();
    const weight = within(row('light')).getByRole('textbox', { name: 'Weight of light' });
    await user.clear(weight);
    await user.type(weight, '5{Enter}');
    await waitFor(() => expect(within(row('light')).getByTestId('key-weight-status')).toHaveTextContent('Saved.'));
    await settle();
    const before = reads().keys;

    backend.add('openai', 'sk-elsewhere-0003', { label: 'elsewhere', sortOrder: 2 });
    await act(async () => backend.emit('openai'));
    expect(await screen.findByText('elsewhere'), 'a key written elsewhere shows up').toBeInTheDocument();
    expect(reads().keys, 'the event of another write is not taken for the echo of ours').toBe(before + 1);
  });

  it('deletes and reorders from the answers, reading nothing again', async () => {
    backend.add('openai', 'sk-c-0003', { label: 'gamma', sortOrder: 2 });
    const user = await twoKeys();
    const before = reads();
    screen.getByRole('button', { name: 'Move light' }).focus();
    await user.keyboard('{ArrowDown}');
    await waitFor(() => expect(labels()).toEqual(['heavy', 'light', 'gamma']));
    await settle();

    await user.click(screen.getByRole('button', { name: 'Delete gamma' }));
    await user.click(within(screen.getByRole('alertdialog')).getByRole('button', { name: 'Delete key' }));
    await waitFor(() => expect(labels()).toEqual(['heavy', 'light']));
    await settle();
    expect(backend.keys().map((k) => k.label), 'the backend agrees').toEqual(['heavy', 'light']);
    expect(reads(), 'a reorder answers the whole order, a delete what went').toEqual(before);
  });

  it('switches a key off and on from the answers; only switching on asks the pool’s live status again', async () => {
    const user = await twoKeys();
    const before = reads();
    const toggle = screen.getByRole('switch', { name: 'Use light' });
    await user.click(toggle);
    await waitFor(() => expect(within(row('light')).getByTestId('key-state')).toHaveTextContent('Off'));
    await settle();
    expect(reads(), 'a key switched off is off by its row: nothing is read').toEqual(before);

    await user.click(toggle);
    await waitFor(() => expect(within(row('light')).getByTestId('key-state')).toHaveTextContent('Active'));
    await settle();
    expect(reads().keys, 'the key list is not read again').toBe(before.keys);
    expect(reads().status, 'a key switched on starts afresh in the pool, which only the backend knows: asked once').toBe(before.status + 1);
  });
});
