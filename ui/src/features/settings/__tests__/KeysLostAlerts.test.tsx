import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { I18nProvider } from '../../../i18n/I18nProvider';
import { createFakeBackend, type FakeBackend } from '../../../test/fakeBackend';

let backend: FakeBackend;
vi.mock('@tauri-apps/api/core', () => ({ invoke: (command: string, args: Record<string, unknown>) => backend.invoke(command, args) }));
vi.mock('@tauri-apps/api/event', () => ({ listen: (event: string, handler: never) => backend.listen(event, handler) }));

const { KeysLostAlerts } = await import('../KeysLostAlerts');

function renderAlerts() {
  const user = userEvent.setup();
  render(
    <I18nProvider initial="en">
      <KeysLostAlerts />
    </I18nProvider>,
  );
  return user;
}

describe('Settings → General → Keys lost', () => {
  beforeEach(() => {
    backend = createFakeBackend();
    localStorage.clear();
  });

  it('lists the keys lost, switched off or not, and reads them again when one is lost', async () => {
    await backend.invoke('settings:update', { notifyKeysLost: false });
    renderAlerts();
    expect(await screen.findByTestId('keys-lost-none')).toHaveTextContent('No key lost since Keypool started.');
    expect(screen.queryByTestId('notifications-status'), 'the desktop shows them: no banner').not.toBeInTheDocument();

    backend.alert({ kind: 'keyDisabled', providerId: 'openai', provider: 'OpenAI', key: 'work…x9Qz', status: 401 });
    const list = await screen.findByRole('list', { name: 'Keys lost' });
    expect(within(list).getAllByRole('listitem')).toHaveLength(1);
    expect(list, 'told nowhere else while switched off, so listed here').toHaveTextContent('OpenAI: a key was refused');
    expect(list).toHaveTextContent('The provider refused the key work…x9Qz (HTTP 401).');
    expect(backend.notifications(), 'switched off: no desktop notification').toEqual([]);
  });

  it('sends a test notification, and says so with a banner when nothing can show one', async () => {
    const user = renderAlerts();
    await screen.findByTestId('keys-lost-none');
    await user.click(screen.getByRole('button', { name: 'Send a test notification' }));
    await waitFor(() => expect(screen.getByTestId('notification-test-result')).toHaveTextContent('Sent.'));
    expect(backend.notifications()).toEqual([{ title: 'Keypool: a test notification', body: 'Keypool’s notifications reach this desktop.' }]);

    backend.notificationsDown('org.freedesktop.Notifications was not provided by any .service files');
    await user.click(screen.getByRole('button', { name: 'Send a test notification' }));
    await waitFor(() => expect(screen.getByTestId('notification-test-result')).toHaveTextContent('Nothing was shown: no notification service answers.'));
    const banner = screen.getByTestId('notifications-status');
    expect(banner, 'as the keychain says it is missing').toHaveTextContent('Desktop notifications cannot be shown.');
    expect(within(banner).getByText('org.freedesktop.Notifications was not provided by any .service files'), 'the system’s words, out of the way').toBeInTheDocument();
    expect(backend.notifications(), 'nothing more was shown').toHaveLength(1);
  });
});
