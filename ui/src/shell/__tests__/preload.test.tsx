import { fireEvent, render, screen, waitFor } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { createFakeBackend, type FakeBackend } from '../../test/fakeBackend';

let backend: FakeBackend;
vi.mock('@tauri-apps/api/core', () => ({ invoke: (command: string, args: Record<string, unknown>) => backend.invoke(command, args) }));
vi.mock('@tauri-apps/api/event', () => ({ listen: (event: string, handler: never) => backend.listen(event, handler) }));

/** The lazily loaded pages whose modules have started loading, in order. */
const evaluated: string[] = [];
/** Their loads, awaited before the test ends: a load the teardown cuts off fails the run. */
const loads: Promise<unknown>[] = [];
vi.mock('../../features/settings/SettingsPage', async (original) => {
  evaluated.push('settings');
  const load = original();
  loads.push(load);
  return load;
});
vi.mock('../../features/usage/UsagePage', async (original) => {
  evaluated.push('usage');
  const load = original();
  loads.push(load);
  return load;
});

const { App } = await import('../../App');

describe('pages off the first screen', () => {
  beforeEach(() => {
    backend = createFakeBackend();
    localStorage.clear();
  });

  it('load when the pointer or the focus comes to their link, not with the first screen', async () => {
    render(<App />);
    await screen.findByTestId('chat-page');
    // Give any load the first screen would start the time to start.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(evaluated, 'nothing loads with the first screen').toEqual([]);

    fireEvent.pointerEnter(screen.getByTestId('nav-settings'));
    await waitFor(() => expect(evaluated).toEqual(['settings']));

    screen.getByTestId('nav-usage').focus();
    await waitFor(() => expect(evaluated).toEqual(['settings', 'usage']));
    await Promise.all(loads);
  });
});
