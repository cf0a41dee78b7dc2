import { act, render, screen } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { Locale } from '../../../i18n';
import { I18nProvider } from '../../../i18n/I18nProvider';
import { createFakeBackend, type FakeBackend, READY } from '../../../test/fakeBackend';

let backend: FakeBackend;
vi.mock('@tauri-apps/api/core', () => ({ invoke: (command: string, args: Record<string, unknown>) => backend.invoke(command, args) }));
vi.mock('@tauri-apps/api/event', () => ({ listen: (event: string, handler: never) => backend.listen(event, handler) }));

const { KeychainNotice } = await import('../KeychainNotice');

function renderNotice(locale: Locale = 'en') {
  render(
    <I18nProvider initial={locale}>
      <KeychainNotice />
    </I18nProvider>,
  );
}

describe('Settings: where API keys are kept', () => {
  beforeEach(() => {
    backend = createFakeBackend();
    localStorage.clear();
  });

  it('says quietly that keys are in the system keychain', async () => {
    renderNotice();
    const line = await screen.findByTestId('keychain-status');
    expect(line).toHaveAttribute('data-state', 'available');
    expect(line).toHaveTextContent('API keys are kept in the system keychain');
    expect(screen.queryByRole('status')).toBeNull();
  });

  it('announces, in the user language, that keys stay in the database and why', async () => {
    backend.setAppStatus({ ...READY, keychain: { state: 'unavailable', reason: 'unreachable', detail: 'no session bus' } });
    renderNotice('ru');
    const notice = await screen.findByRole('status');
    expect(notice).toHaveTextContent('API-ключи хранятся в базе данных Keypool');
    expect(notice).toHaveTextContent('Служба связки ключей недоступна');
    const details = notice.querySelector('details');
    expect(details, 'the system words sit behind a disclosure').not.toBeNull();
    expect(details).not.toHaveAttribute('open');
    expect(details).toHaveTextContent('no session bus');
  });

  it.each([
    ['locked', /locked or refused access/],
    ['failed', /answered with an error/],
    ['not_configured', /started without the system keychain/],
  ] as const)('words the reason %s', async (reason, text) => {
    backend.setAppStatus({ ...READY, keychain: { state: 'unavailable', reason } });
    renderNotice();
    expect(await screen.findByRole('status')).toHaveTextContent(text);
  });

  it('reads the state again after a key change (a keychain that stops answering)', async () => {
    renderNotice();
    await screen.findByTestId('keychain-status');
    backend.setAppStatus({ ...READY, keychain: { state: 'unavailable', reason: 'unreachable' } });
    await act(async () => backend.emit('openai'));
    expect(await screen.findByRole('status')).toHaveTextContent('kept in Keypool’s database');
  });
});
