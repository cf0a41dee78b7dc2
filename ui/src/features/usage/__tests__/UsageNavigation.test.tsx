import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { createFakeBackend, type FakeBackend } from '../../../test/fakeBackend';

let backend: FakeBackend;
vi.mock('@tauri-apps/api/core', () => ({ invoke: (command: string, args: Record<string, unknown>) => backend.invoke(command, args) }));
vi.mock('@tauri-apps/api/event', () => ({ listen: (event: string, handler: never) => backend.listen(event, handler) }));

const { App } = await import('../../../App');

describe('the Usage page in the app', () => {
  beforeEach(() => {
    backend = createFakeBackend();
    localStorage.clear();
  });

  it('sits between Chat and Settings in the rail, and opens when chosen', async () => {
    const user = userEvent.setup();
    render(<App />);
    const rail = await screen.findByRole('navigation', { name: 'Main' });
    expect(within(rail).getAllByRole('button').map((b) => b.textContent)).toEqual(['Chat', 'Usage', 'Settings']);

    await user.click(within(rail).getByRole('button', { name: 'Usage' }));
    expect(within(rail).getByRole('button', { name: 'Usage' })).toHaveAttribute('aria-current', 'page');
    expect(await screen.findByRole('heading', { level: 1, name: 'Usage' }), 'loaded on demand').toBeInTheDocument();
    expect(await screen.findByTestId('usage-empty')).toBeInTheDocument();
    await waitFor(() => expect(backend.preferences().page, 'kept in the data directory').toBe('usage'));
  });

  it('reopens on Usage when it was left there', async () => {
    backend.setPreferences({ page: 'usage' });
    render(<App />);
    expect(await screen.findByTestId('usage-page')).toBeInTheDocument();
  });
});
