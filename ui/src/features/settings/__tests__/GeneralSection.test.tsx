import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { Locale } from '../../../i18n';
import { I18nProvider } from '../../../i18n/I18nProvider';
import { createFakeBackend, gate, type FakeBackend } from '../../../test/fakeBackend';
import { attempt } from '../../../test/fakeLedger';

let backend: FakeBackend;
vi.mock('@tauri-apps/api/core', () => ({ invoke: (command: string, args: Record<string, unknown>) => backend.invoke(command, args) }));
vi.mock('@tauri-apps/api/event', () => ({ listen: (event: string, handler: never) => backend.listen(event, handler) }));

const { GeneralSection } = await import('../GeneralSection');

function renderSection(locale: Locale = 'en') {
  const user = userEvent.setup();
  render(
    <I18nProvider initial={locale}>
      <GeneralSection />
    </I18nProvider>,
  );
  return user;
}

const NAME = 'Wait for a free key up to seconds';
const field = () => screen.findByRole('textbox', { name: NAME });

describe('Settings → General: how long a reply waits for a free key', () => {
  beforeEach(() => {
    backend = createFakeBackend();
    localStorage.clear();
  });

  it('shows the stored value, labelled with its unit and explained', async () => {
    renderSection();
    const input = await field();
    expect(input).toHaveValue('20');
    expect(input).toHaveAccessibleDescription(/a reply waits this long for one to free up, then fails\. 0 to 120/);
    expect(backend.callsOf('settings:get')).toEqual([{}]);
  });

  it('saves a new value on Enter and says so', async () => {
    const user = renderSection();
    const input = await field();
    await user.clear(input);
    await user.type(input, '45{Enter}');
    await waitFor(() => expect(screen.getByTestId('max-wait-status')).toHaveTextContent('Saved.'));
    expect(screen.getByTestId('max-wait-status')).toHaveAttribute('role', 'status');
    expect(backend.callsOf('settings:update')).toEqual([{ maxWaitSeconds: 45 }]);
    expect(backend.settings().maxWaitSeconds).toBe(45);
    expect(input).toHaveValue('45');

    await user.type(input, '{Backspace}');
    expect(screen.getByTestId('max-wait-status'), 'editing again clears the feedback').toHaveTextContent('');
  });

  it('saves when focus leaves, steps with the arrow keys, and sends nothing for an unchanged value', async () => {
    const user = renderSection();
    const input = await field();
    await user.click(input);
    await user.tab();
    expect(backend.callsOf('settings:update'), 'nothing changed, nothing sent').toEqual([]);

    await user.click(input);
    await user.keyboard('{ArrowDown}{ArrowDown}');
    expect(input).toHaveValue('18');
    await user.tab();
    await waitFor(() => expect(backend.callsOf('settings:update')).toEqual([{ maxWaitSeconds: 18 }]));
    expect(await screen.findByText('Saved.')).toBeInTheDocument();
  });

  it('takes 0, which fails at once instead of waiting', async () => {
    const user = renderSection();
    const input = await field();
    await user.clear(input);
    await user.type(input, '0{Enter}');
    await waitFor(() => expect(backend.settings().maxWaitSeconds).toBe(0));
  });

  it('shows an invalid value’s error at the field, sends nothing, and Escape puts the stored value back', async () => {
    const user = renderSection();
    const input = await field();
    await user.clear(input);
    await user.type(input, '121{Enter}');
    expect(input).toHaveAttribute('aria-invalid', 'true');
    expect(input).toHaveAccessibleDescription(/A whole number of seconds from 0 to 120\./);
    expect(screen.getByRole('alert')).toHaveTextContent('A whole number of seconds from 0 to 120.');
    expect(backend.callsOf('settings:update')).toEqual([]);

    await user.keyboard('{Escape}');
    expect(input).toHaveValue('20');
    expect(input).not.toHaveAttribute('aria-invalid');
  });

  it('shows the backend’s refusal in place and keeps the typed value for a fix', async () => {
    backend.rejectNext('settings:update', { code: 'validation', message: 'maxWaitSeconds: nope', issues: [{ path: 'maxWaitSeconds', code: 'too_large', params: { max: 120 }, message: 'refused by the backend' }] });
    const user = renderSection();
    const input = await field();
    await user.clear(input);
    await user.type(input, '30{Enter}');
    expect(await screen.findByTestId('max-wait-error')).toHaveTextContent('At most 120.');
    expect(input).toHaveValue('30');
    expect(screen.getByTestId('max-wait-status')).toHaveTextContent('');

    await user.keyboard('{Enter}');
    await waitFor(() => expect(backend.settings().maxWaitSeconds).toBe(30));
    expect(screen.queryByTestId('max-wait-error')).not.toBeInTheDocument();
  });

  it('says once when the settings could not be loaded, and loads them again on request', async () => {
    backend.rejectNext('settings:get', { code: 'storage', message: 'database is locked' });
    const user = renderSection();
    expect(await screen.findByTestId('settings-load-error')).toHaveTextContent('Could not load the settings: The database could not be read or written. Details are in the log.');
    expect(screen.queryAllByRole('textbox'), 'no field shows a value it does not know').toHaveLength(0);
    expect(screen.getByRole('button', { name: 'Delete all usage history…' }), 'the history can still be deleted').toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Try again' }));
    expect(await field()).toHaveValue('20');
    expect(screen.getAllByRole('textbox')).toHaveLength(3);
  });

  it.each([
    ['zh', '等待空闲 Key 最长 秒', '已保存。'],
    ['ja', '空きキーを待つ時間（最大） 秒', '保存しました。'],
    ['ru', 'Ждать свободный ключ до секунд', 'Сохранено.'],
  ] as const)('%s: is labelled and answers in the UI language', async (locale, name, saved) => {
    const user = renderSection(locale);
    const input = await screen.findByRole('textbox', { name });
    await user.clear(input);
    await user.type(input, '5{Enter}');
    await waitFor(() => expect(screen.getByTestId('max-wait-status')).toHaveTextContent(saved));
  });
});

describe('Settings → General: how long an idle chat keeps its key, and how long usage is kept', () => {
  beforeEach(() => {
    backend = createFakeBackend();
    localStorage.clear();
  });

  it('shows both stored values, labelled with their units and explained', async () => {
    renderSection();
    const idle = await screen.findByRole('textbox', { name: 'Keep an idle chat on its key for minutes' });
    const retention = screen.getByRole('textbox', { name: 'Keep usage history for days' });
    expect(idle).toHaveValue('60');
    expect(idle).toHaveAccessibleDescription(/prompt cache stays warm.*1 to 1,440\./);
    expect(retention).toHaveValue('180');
    expect(retention).toHaveAccessibleDescription(/deleted after this many days\. 1 to 3,650\./);
  });

  it('saves each on its own, sending only the field that changed', async () => {
    const user = renderSection();
    const idle = await screen.findByRole('textbox', { name: 'Keep an idle chat on its key for minutes' });
    await user.clear(idle);
    await user.type(idle, '5{Enter}');
    await waitFor(() => expect(screen.getByTestId('binding-idle-status')).toHaveTextContent('Saved.'));
    const retention = screen.getByRole('textbox', { name: 'Keep usage history for days' });
    await user.click(retention);
    await user.keyboard('{ArrowUp}');
    await user.tab();
    await waitFor(() => expect(screen.getByTestId('usage-retention-status')).toHaveTextContent('Saved.'));
    expect(backend.callsOf('settings:update')).toEqual([{ bindingIdleMinutes: 5 }, { usageRetentionDays: 181 }]);
    expect(backend.settings()).toEqual({ maxWaitSeconds: 20, bindingIdleMinutes: 5, usageRetentionDays: 181, proxy: { mode: 'none' }, notifyKeysLost: true });
  });

  it.each([
    ['Keep an idle chat on its key for minutes', '0', 'A whole number of minutes from 1 to 1,440.'],
    ['Keep usage history for days', '3651', 'A whole number of days from 1 to 3,650.'],
  ])('%s: an out-of-range value is refused at the field and not sent', async (name, typed, error) => {
    const user = renderSection();
    const input = await screen.findByRole('textbox', { name });
    await user.clear(input);
    await user.type(input, `${typed}{Enter}`);
    expect(input).toHaveAttribute('aria-invalid', 'true');
    expect(input).toHaveAccessibleDescription(new RegExp(error.replace(/[.,]/g, '\\$&')));
    expect(backend.callsOf('settings:update')).toEqual([]);
  });
});

describe('Settings → General: deleting the usage history', () => {
  beforeEach(() => {
    backend = createFakeBackend();
    localStorage.clear();
  });

  it('appears once the settings above it are in, so it never moves under the pointer', async () => {
    const loaded = gate();
    const answer = backend.invoke;
    backend.invoke = async (command, args) => {
      if (command === 'settings:get') await loaded.opened;
      return answer(command, args);
    };
    renderSection();
    expect(await screen.findByText('Loading…')).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Delete all usage history…' }), 'not while the fields above it may still push it down').not.toBeInTheDocument();
    loaded.open();
    expect(await screen.findByRole('button', { name: 'Delete all usage history…' })).toBeInTheDocument();
    expect(await field()).toHaveValue('20');
  });

  it('asks first, deletes every record, and says how many went', async () => {
    backend.usage.setAttempts(Array.from({ length: 1234 }, (_, i) => attempt(backend.now() - i * 60_000, 'openai', 'key-1')));
    const user = renderSection();
    await user.click(await screen.findByRole('button', { name: 'Delete all usage history…' }));
    const dialog = screen.getByRole('alertdialog', { name: 'Delete all usage history?' });
    expect(dialog).toHaveTextContent('Chats, keys and prices stay. This cannot be undone.');
    expect(within(dialog).getByRole('button', { name: 'Cancel' }), 'Enter never deletes by accident').toHaveFocus();
    expect(backend.callsOf('usage:purge')).toEqual([]);

    await user.click(within(dialog).getByRole('button', { name: 'Delete history' }));
    await waitFor(() => expect(screen.getByTestId('usage-purge-status')).toHaveTextContent('Deleted 1,234 records.'));
    expect(backend.callsOf('usage:purge')).toEqual([{}]);
    expect(screen.queryByRole('alertdialog')).not.toBeInTheDocument();
    // The dialog gives focus back once React has removed it (a task later).
    await waitFor(() => expect(screen.getByRole('button', { name: 'Delete all usage history…' }), 'focus goes back where it was').toHaveFocus());
  });

  it('deletes nothing when cancelled, and shows a failure in the dialog', async () => {
    const user = renderSection();
    await user.click(await screen.findByRole('button', { name: 'Delete all usage history…' }));
    await user.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(backend.callsOf('usage:purge')).toEqual([]);

    backend.rejectNext('usage:purge', { code: 'storage', message: 'database is locked' });
    await user.click(screen.getByRole('button', { name: 'Delete all usage history…' }));
    await user.click(screen.getByRole('button', { name: 'Delete history' }));
    expect(await screen.findByRole('alertdialog')).toHaveTextContent('Could not delete the usage history: The database could not be read or written. Details are in the log.');
  });
});

describe('Settings → General: the proxy for provider requests', () => {
  beforeEach(() => {
    backend = createFakeBackend();
    localStorage.clear();
  });

  it('is none by default, and keeps the system’s or an address when chosen', async () => {
    const user = renderSection();
    const group = await screen.findByRole('group', { name: 'Proxy' });
    expect(group, 'explained').toHaveAccessibleDescription(/Never used for this machine/);
    expect(within(group).getByRole('radio', { name: 'None: straight to the provider' })).toBeChecked();
    await user.click(within(group).getByRole('radio', { name: 'The system’s (HTTPS_PROXY, ALL_PROXY)' }));
    await waitFor(() => expect(backend.settings().proxy).toEqual({ mode: 'system' }));
    await user.click(within(group).getByRole('radio', { name: 'This address' }));
    const address = within(group).getByRole('textbox', { name: 'Proxy address' });
    await user.type(address, 'http://proxy.example:3128{Enter}');
    await waitFor(() => expect(backend.settings().proxy).toEqual({ mode: 'url', url: 'http://proxy.example:3128' }));
    expect(await within(group).findByRole('status')).toHaveTextContent('Saved.');
  });

  it('says at the field why an address is refused, and keeps what was stored', async () => {
    const user = renderSection();
    const group = await screen.findByRole('group', { name: 'Proxy' });
    await user.click(within(group).getByRole('radio', { name: 'This address' }));
    const address = within(group).getByRole('textbox', { name: 'Proxy address' });
    await user.type(address, 'ftp://proxy.example');
    await user.tab();
    expect(await within(group).findByRole('alert')).toHaveTextContent('Not a proxy address');
    expect(address).toHaveAttribute('aria-invalid', 'true');
    expect(address).toHaveAccessibleDescription(/Not a proxy address/);
    expect(backend.settings().proxy, 'nothing changed').toEqual({ mode: 'none' });
  });
});
