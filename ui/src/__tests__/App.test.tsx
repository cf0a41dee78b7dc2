import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AppStatus } from '../ipc/bindings';
import { createFakeBackend, READY, type FakeBackend } from '../test/fakeBackend';

const invoke = vi.fn();
let backend: FakeBackend;
vi.mock('@tauri-apps/api/core', () => ({ invoke: (...args: unknown[]) => invoke(...args) }));
vi.mock('@tauri-apps/api/event', () => ({ listen: (event: string, handler: never) => backend.listen(event, handler) }));

const { App } = await import('../App');

describe('App shell', () => {
  // Settings loads on first use; its module is compiled once here, not inside a test's wait.
  beforeAll(async () => {
    await import('../features/settings/SettingsPage');
  });

  beforeEach(() => {
    backend = createFakeBackend();
    invoke.mockReset();
    invoke.mockImplementation((command: string, args: Record<string, unknown>) => backend.invoke(command, args));
    localStorage.clear();
  });

  it('asks the backend for its status with app:getStatus', async () => {
    render(<App />);
    await screen.findByTestId('app-shell');
    expect(invoke).toHaveBeenCalledWith('app:getStatus', {});
  });

  describe('with what the window hands over at its first load', () => {
    const handed = {
      preferences: { theme: 'dark', language: 'ja', page: 'settings/about', provider: null },
      status: READY,
    } as const;
    const reload = (type: NavigationTimingType) =>
      vi.spyOn(performance, 'getEntriesByType').mockImplementation((kind) =>
        kind === 'navigation' ? ([{ type }] as unknown as PerformanceEntryList) : [],
      );
    beforeEach(() => {
      window.__KEYPOOL_FIRST_SCREEN__ = structuredClone(handed) as typeof window.__KEYPOOL_FIRST_SCREEN__;
      return () => {
        delete window.__KEYPOOL_FIRST_SCREEN__;
        vi.restoreAllMocks();
      };
    });

    it('draws its first screen at the first render, asking no command', async () => {
      reload('navigate');
      render(<App />);
      expect(screen.getByTestId('app-shell'), 'the shell is there without waiting for an answer').toBeInTheDocument();
      expect(await screen.findByTestId('about-version'), 'on the page it was left on').toBeInTheDocument();
      expect(document.documentElement.dataset.theme, 'in the theme chosen').toBe('dark');
      const asked = invoke.mock.calls.map(([command]) => command);
      expect(asked, 'neither the preferences nor the status are asked').not.toContain('app:getPreferences');
      expect(asked).not.toContain('app:getStatus');
    });

    it('asks the commands after a reload, since the handed values are those of when the window opened', async () => {
      reload('reload');
      render(<App />);
      expect(screen.queryByTestId('app-shell'), 'nothing is drawn from the stale values').not.toBeInTheDocument();
      await screen.findByTestId('app-shell');
      const asked = invoke.mock.calls.map(([command]) => command);
      expect(asked).toContain('app:getPreferences');
      expect(asked).toContain('app:getStatus');
      expect(screen.getByRole('heading', { name: 'Chat' }), 'the preferences kept now (none), not the handed ones').toBeInTheDocument();
    });

    it('still brings over, first, what an earlier Keypool kept in the web view’s storage', async () => {
      reload('navigate');
      window.__KEYPOOL_FIRST_SCREEN__ = { ...handed, preferences: { ...handed.preferences, theme: null } } as typeof window.__KEYPOOL_FIRST_SCREEN__;
      localStorage.setItem('keypool.theme', 'light');
      render(<App />);
      await screen.findByTestId('app-shell');
      expect(invoke, 'the carried-over theme is written').toHaveBeenCalledWith('app:setPreferences', { theme: 'light' });
      expect(document.documentElement.dataset.theme).toBe('light');
    });
  });

  it('navigates between Chat and Settings → Providers', async () => {
    const user = userEvent.setup();
    render(<App />);

    expect(await screen.findByRole('heading', { name: 'Chat' })).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: /Settings/ }));
    expect(await screen.findByRole('heading', { name: 'Settings' }), 'Settings loads on first use').toBeInTheDocument();
    expect(screen.getByTestId('providers-section')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: /Settings/ })).toHaveAttribute('aria-current', 'page');
    expect(await screen.findByTestId('api-key-pool'), 'the first provider opens with its pool').toBeInTheDocument();

    await user.click(screen.getByRole('button', { name: 'About' }));
    const about = screen.getByRole('region', { name: 'Keypool' });
    expect(within(about).getByRole('heading', { level: 2, name: 'Keypool' }), 'About names the app').toBeInTheDocument();
    expect(screen.getByTestId('about-version'), 'its version').toHaveTextContent(/\d+\.\d+/);
    expect(screen.getByTestId('about-data-dir'), 'where its data is').not.toBeEmptyDOMElement();
    expect(screen.getByTestId('about-licence'), 'and under which licence').toHaveTextContent('MIT');
    expect(about).toHaveTextContent('/data/logs');

    await user.click(screen.getByRole('button', { name: /Chat/ }));
    expect(screen.getByTestId('chat-page')).toBeInTheDocument();
  });

  it('switches the language in Settings → General, and remembers it', async () => {
    const user = userEvent.setup();
    const { unmount } = render(<App />);
    await user.click(await screen.findByRole('button', { name: /Settings/ }));
    await user.click(await screen.findByRole('button', { name: 'General' }));
    await user.selectOptions(screen.getByLabelText('Language'), 'zh');
    expect(screen.getByRole('heading', { name: '设置' }), 'the page is in Chinese at once').toBeInTheDocument();
    expect(screen.getByRole('button', { name: /聊天/ }), 'the shell is translated too').toBeInTheDocument();
    unmount();

    render(<App />);
    expect(await screen.findByRole('button', { name: /设置/ }), 'the choice survives a restart').toBeInTheDocument();
  });

  it('reopens on the page it was left on', async () => {
    const user = userEvent.setup();
    const { unmount } = render(<App />);
    await user.click(await screen.findByRole('button', { name: /Settings/ }));
    await user.click(await screen.findByRole('button', { name: 'General' }));
    unmount();

    render(<App />);
    expect(await screen.findByTestId('general-section'), 'a restart opens Settings → General again').toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'General' })).toHaveAttribute('aria-current', 'page');
  });

  it('opens on Chat when the page an earlier Keypool remembered is not one it knows', async () => {
    localStorage.setItem('keypool.route', 'settings/nowhere');
    render(<App />);
    expect(await screen.findByTestId('chat-page'), 'an unknown page falls back to Chat').toBeInTheDocument();
    expect(backend.preferences().page, 'and is not brought over').toBeNull();
  });

  it('keeps the language, theme and page in the data directory, not in the web view’s storage', async () => {
    const user = userEvent.setup();
    render(<App />);
    await user.click(await screen.findByRole('button', { name: /Settings/ }));
    await user.click(screen.getByRole('button', { name: 'General' }));
    await user.selectOptions(screen.getByLabelText('Language'), 'ru');
    await user.selectOptions(screen.getByLabelText('Тема'), 'dark');
    await waitFor(() => expect(backend.preferences()).toEqual({ theme: 'dark', language: 'ru', page: 'settings/general', provider: null }));
    expect(Object.keys(localStorage), 'nothing in the storage every profile shares').toEqual([]);
  });

  it('brings over, once, what an earlier Keypool kept in the web view’s storage, and never over a choice of this profile', async () => {
    localStorage.setItem('keypool.language', 'ja');
    localStorage.setItem('keypool.theme', 'dark');
    localStorage.setItem('keypool.route', 'usage');
    backend.setPreferences({ theme: 'light' });
    render(<App />);
    expect(await screen.findByRole('button', { name: /設定/ }), 'the language chosen before is kept').toBeInTheDocument();
    expect(await screen.findByTestId('usage-page'), 'and the page').toBeInTheDocument();
    expect(backend.preferences(), 'this profile’s own theme stays').toEqual({ theme: 'light', language: 'ja', page: 'usage', provider: null });
    expect(document.documentElement.dataset.theme).toBe('light');
    expect(Object.keys(localStorage), 'the old entries are gone: another profile does not take them too').toEqual([]);
  });

  it('applies a theme chosen in settings over the OS preference', async () => {
    const user = userEvent.setup();
    render(<App />);
    await user.click(await screen.findByRole('button', { name: /Settings/ }));
    await user.click(await screen.findByRole('button', { name: 'General' }));
    await user.selectOptions(screen.getByLabelText('Theme'), 'dark');
    expect(document.documentElement.dataset.theme).toBe('dark');
    await user.selectOptions(screen.getByLabelText('Theme'), 'system');
    expect(document.documentElement.dataset.theme, 'system removes the override').toBeUndefined();
  });

  it('shows why the database could not be opened instead of an empty app', async () => {
    invoke.mockResolvedValue({
      ...READY,
      database: { state: 'failed', kind: 'not_a_database', message: 'keypool.sqlite3 is not a Keypool database', path: '/data/keypool.sqlite3' },
    } satisfies AppStatus);
    render(<App />);

    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('could not open your data');
    expect(alert).toHaveTextContent('/data/keypool.sqlite3');
    expect(screen.queryByTestId('app-shell')).not.toBeInTheDocument();
  });

  it('turns a structured rejection into a readable problem screen, worded from its code', async () => {
    invoke.mockImplementation(async () => {
      throw { code: 'internal', message: 'backend exploded' };
    });
    render(<App />);
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('Something went wrong inside Keypool. Details are in the log.');
    expect(alert, 'the backend’s English is not shown as is').not.toHaveTextContent('backend exploded');
  });

  it('words a database that cannot be opened by its kind, keeping the English under the details', async () => {
    invoke.mockImplementation(async () => ({
      version: '0.1.0',
      dataDir: '/data',
      logDir: '/data/logs',
      database: { state: 'failed', kind: 'too_new', message: '/data/keypool.sqlite3 was written by a newer Keypool (schema version 9)', path: '/data/keypool.sqlite3' },
    }));
    render(<App />);
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('The file was written by a newer version of Keypool.');
    expect(within(alert).getByText('Technical details').closest('details'), 'the backend’s words are folded away').not.toHaveAttribute('open');
  });
});
