import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { AppStatus } from '../ipc/app';

const invoke = vi.fn();
vi.mock('@tauri-apps/api/core', () => ({ invoke: (...args: unknown[]) => invoke(...args) }));

const { App } = await import('../App');

const ready: AppStatus = {
  version: '0.1.0',
  dataDir: '/data',
  logDir: '/data/logs',
  database: { state: 'ready', path: '/data/keypool.sqlite3' },
};

describe('App shell', () => {
  beforeEach(() => {
    invoke.mockReset();
  });

  it('asks the backend for its status with app:getStatus', async () => {
    invoke.mockResolvedValue(ready);
    render(<App />);
    await screen.findByTestId('app-shell');
    expect(invoke).toHaveBeenCalledWith('app:getStatus', {});
  });

  it('navigates between Chat and Settings → Providers', async () => {
    invoke.mockResolvedValue(ready);
    const user = userEvent.setup();
    render(<App />);

    expect(await screen.findByRole('heading', { name: 'Chat' })).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: /Settings/ }));
    expect(screen.getByRole('heading', { name: 'Settings' })).toBeInTheDocument();
    expect(screen.getByTestId('providers-section')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: /Settings/ })).toHaveAttribute('aria-current', 'page');

    await user.click(screen.getByRole('button', { name: 'About' }));
    expect(screen.getByTestId('about')).toHaveTextContent('/data/logs');

    await user.click(screen.getByRole('button', { name: /Chat/ }));
    expect(screen.getByTestId('chat-page')).toBeInTheDocument();
  });

  it('shows why the database could not be opened instead of an empty app', async () => {
    invoke.mockResolvedValue({
      ...ready,
      database: { state: 'failed', kind: 'not_a_database', message: 'keypool.sqlite3 is not a Keypool database', path: '/data/keypool.sqlite3' },
    } satisfies AppStatus);
    render(<App />);

    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('could not open your data');
    expect(alert).toHaveTextContent('/data/keypool.sqlite3');
    expect(screen.queryByTestId('app-shell')).not.toBeInTheDocument();
  });

  it('turns a structured rejection into a readable problem screen', async () => {
    invoke.mockImplementation(async () => {
      throw { code: 'internal', message: 'backend exploded' };
    });
    render(<App />);
    expect(await screen.findByRole('alert')).toHaveTextContent('backend exploded');
  });
});
