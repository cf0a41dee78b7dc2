import { act, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { Locale } from '../../../../i18n';
import { I18nProvider } from '../../../../i18n/I18nProvider';
import { createFakeBackend, type FakeBackend, READY } from '../../../../test/fakeBackend';

let backend: FakeBackend;
vi.mock('@tauri-apps/api/core', () => ({ invoke: (command: string, args: Record<string, unknown>) => backend.invoke(command, args) }));
vi.mock('@tauri-apps/api/event', () => ({ listen: (event: string, handler: never) => backend.listen(event, handler) }));

const { TeamSection } = await import('../TeamSection');
const { parseTeamForm } = await import('../teamForm');

const SECRET = 'ab'.repeat(32);

function renderSection(locale: Locale = 'en') {
  const user = userEvent.setup();
  render(
    <I18nProvider initial={locale}>
      <TeamSection />
    </I18nProvider>,
  );
  return user;
}

const urlInput = () => screen.getByRole('textbox', { name: 'Redis URL' });
const nameInput = () => screen.getByRole('textbox', { name: 'Team name' });
const secretInput = () => screen.getByLabelText('Team secret') as HTMLInputElement;
const state = () => screen.getByTestId('team-state');

async function fill(user: ReturnType<typeof userEvent.setup>, url: string, name: string, secret?: string) {
  await user.clear(urlInput());
  await user.type(urlInput(), url);
  await user.clear(nameInput());
  await user.type(nameInput(), name);
  if (secret !== undefined) {
    await user.clear(secretInput());
    await user.click(secretInput());
    await user.paste(secret);
  }
}

describe('Settings → Team', () => {
  beforeEach(() => {
    backend = createFakeBackend();
  });

  it('is off at first, with a masked secret field and no Disconnect', async () => {
    renderSection();
    expect(await screen.findByTestId('team-state')).toHaveTextContent('Off');
    expect(state(), 'a change of state is announced').toHaveAttribute('role', 'status');
    expect(secretInput(), 'the secret is masked').toHaveAttribute('type', 'password');
    expect(screen.queryByRole('button', { name: 'Disconnect' }), 'nothing to leave').not.toBeInTheDocument();
    expect(screen.queryByTestId('team-members'), 'no members while off').not.toBeInTheDocument();
  });

  it('connects with a pasted secret, then shows the status the backend reports', async () => {
    const user = renderSection();
    await screen.findByTestId('team-state');
    await fill(user, 'redis://:hunter2@127.0.0.1:6379', 'crew', SECRET);
    await user.click(screen.getByRole('button', { name: 'Connect' }));
    await waitFor(() => expect(state()).toHaveTextContent('Connecting…'));
    expect(backend.callsOf('team:connect'), 'the form as typed, the secret pasted').toEqual([{ redisUrl: 'redis://:hunter2@127.0.0.1:6379', team: 'crew', secret: SECRET }]);
    expect(secretInput(), 'the secret field is emptied once it is kept').toHaveValue('');
    expect(screen.getByText(/A secret is kept in the keychain/)).toBeInTheDocument();
    act(() => backend.setTeam({ state: 'connected', members: 2, lastChangeAt: Date.UTC(2026, 0, 2, 3, 4, 5) }));
    await waitFor(() => expect(state()).toHaveTextContent('Connected'));
    expect(screen.getByTestId('team-members'), 'members follow team:changed').toHaveTextContent('2');
    expect(screen.getByTestId('team-last-change')).not.toHaveTextContent('None yet');
    await user.click(screen.getByRole('button', { name: 'Disconnect' }));
    await waitFor(() => expect(state()).toHaveTextContent('Off'));
  });

  it('shows a generated secret once with a Copy button, and connects with it', async () => {
    const user = renderSection();
    await screen.findByTestId('team-state');
    await user.click(screen.getByRole('button', { name: 'Generate' }));
    const shown = await screen.findByRole('textbox', { name: 'The new team secret' });
    const generated = (shown as HTMLInputElement).value;
    expect(generated, 'a secret of 64 hex digits').toMatch(/^[0-9a-f]{64}$/);
    expect(within(screen.getByTestId('team-generated')).getByRole('button', { name: 'Copy the team secret' })).toBeInTheDocument();
    expect(secretInput(), 'the field holds it, masked').toHaveValue(generated);
    await fill(user, 'redis://127.0.0.1:6379', 'crew');
    await user.click(screen.getByRole('button', { name: 'Connect' }));
    await waitFor(() => expect(screen.queryByTestId('team-generated'), 'shown once: gone after connecting').not.toBeInTheDocument());
    expect(backend.teamSecret()).toBe(generated);
  });

  it('refuses bad input before a round trip, at the field, in words', async () => {
    const user = renderSection();
    await screen.findByTestId('team-state');
    await fill(user, 'http://127.0.0.1:6379', 'two words', 'abc');
    await user.click(screen.getByRole('button', { name: 'Connect' }));
    expect(await screen.findByText('Enter a Redis URL such as redis://127.0.0.1:6379 or rediss://host:6380.')).toBeInTheDocument();
    expect(urlInput(), 'the first field in error has the focus').toHaveFocus();
    expect(urlInput()).toHaveAttribute('aria-invalid', 'true');
    expect(backend.callsOf('team:connect'), 'nothing was sent').toEqual([]);
    expect(parseTeamForm({ redisUrl: 'redis://h:1', team: 'two words', secret: '' })).toEqual({ ok: false, errors: { team: 'issue.badTeamName' } });
    expect(parseTeamForm({ redisUrl: 'rediss://h:1', team: 'crew', secret: 'xyz' })).toEqual({ ok: false, errors: { secret: 'team.secretFormat' } });
    expect(parseTeamForm({ redisUrl: ' redis://h:1 ', team: 'crew', secret: '' }), 'an empty secret keeps the kept one').toEqual({ ok: true, value: { redisUrl: 'redis://h:1', team: 'crew' } });
  });

  it('says before connecting that there is no keychain, and never promises one', async () => {
    backend.setAppStatus({ ...READY, keychain: { state: 'unavailable', reason: 'unreachable' } });
    const user = renderSection();
    await screen.findByTestId('team-state');
    await waitFor(() => expect(secretInput(), 'said before connecting').toHaveAccessibleDescription(/No keychain: Keypool will hold it only until it closes/));
    await user.click(screen.getByRole('button', { name: 'Generate' }));
    const warning = await screen.findByTestId('team-generated');
    expect(warning).not.toHaveTextContent(/keep it in the keychain/);
    expect(warning).toHaveTextContent('There is no keychain here: Keypool holds it only until it closes, so keep a copy somewhere safe.');
  });

  it('after a restart without a keychain, says why it is not connected, not in red', async () => {
    backend.setAppStatus({ ...READY, keychain: { state: 'unavailable', reason: 'unreachable' } });
    backend.setTeam({ state: 'disconnected', reason: 'secretMissing', redisUrl: 'redis://127.0.0.1:6379', team: 'crew', secret: 'none' });
    renderSection();
    await waitFor(() =>
      expect(state()).toHaveTextContent('Disconnected: with no keychain, the team secret was held only until Keypool closed. Paste it and connect.'),
    );
    expect(state(), 'expected, not a failure').not.toHaveClass('badge--error');
  });

  it('says a bad team name once: the error, not the hint that says the same', async () => {
    const user = renderSection();
    await screen.findByTestId('team-state');
    await fill(user, 'redis://127.0.0.1:6379', 'two words', '');
    await user.click(screen.getByRole('button', { name: 'Connect' }));
    await waitFor(() => expect(nameInput()).toHaveAttribute('aria-invalid', 'true'));
    const described = nameInput().getAttribute('aria-describedby') ?? '';
    const text = described
      .split(' ')
      .map((id) => document.getElementById(id)?.textContent)
      .join(' ');
    expect(text.match(/1 to 64 letters/g), `the rule is said once: ${text}`).toHaveLength(1);
    expect(text, 'what the error does not say stays').toContain('The same on every member.');
  });

  it('words the backend’s refusal at its field: no secret kept, none given', async () => {
    const user = renderSection();
    await screen.findByTestId('team-state');
    await fill(user, 'redis://127.0.0.1:6379', 'crew');
    await user.click(screen.getByRole('button', { name: 'Connect' }));
    expect(await screen.findByText('This is required.')).toBeInTheDocument();
    expect(secretInput()).toHaveAttribute('aria-invalid', 'true');
    expect(state(), 'nothing changed').toHaveTextContent('Off');
  });

  it('says why it is disconnected, in each language', async () => {
    backend.setTeam({ state: 'disconnected', reason: 'unreachable', redisUrl: 'redis://127.0.0.1:1', team: 'crew', secret: 'keychain' });
    renderSection('ru');
    await waitFor(() => expect(screen.getByTestId('team-state')).toHaveTextContent('Отключено: Redis по этому адресу недоступен.'));
    await waitFor(() => expect(screen.getByRole('textbox', { name: 'URL Redis' }), 'the kept URL fills the form').toHaveValue('redis://127.0.0.1:1'));
    expect(screen.getByRole('textbox', { name: 'Название команды' }), 'so does the name').toHaveValue('crew');
  });
});
