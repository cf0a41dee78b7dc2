import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { Locale } from '../../../../i18n';
import { I18nProvider } from '../../../../i18n/I18nProvider';
import { createFakeBackend, type FakeBackend } from '../../../../test/fakeBackend';

let backend: FakeBackend;
vi.mock('@tauri-apps/api/core', () => ({ invoke: (command: string, args: Record<string, unknown>) => backend.invoke(command, args) }));
vi.mock('@tauri-apps/api/event', () => ({ listen: (event: string, handler: never) => backend.listen(event, handler) }));

const { NamedTokens } = await import('../NamedTokens');

function renderTokens(locale: Locale = 'en') {
  const user = userEvent.setup();
  render(
    <I18nProvider initial={locale}>
      <NamedTokens />
    </I18nProvider>,
  );
  return user;
}

const nameInput = () => screen.getByRole('textbox', { name: 'Name' });

describe('Settings → Local API → Named tokens', () => {
  beforeEach(() => {
    backend = createFakeBackend();
  });

  it('makes a token from its name, shows it once, and lists the name only', async () => {
    const user = renderTokens();
    expect(await screen.findByTestId('named-tokens-empty')).toHaveTextContent('No named tokens.');
    await user.type(nameInput(), 'ci-bot{Enter}');
    const dialog = await screen.findByRole('dialog', { name: 'The token ci-bot' });
    const shown = within(dialog).getByRole('textbox', { name: 'Token' });
    expect(shown).toHaveValue('kp-local-named-1');
    expect(shown, 'the token has the focus, to copy it').toHaveFocus();
    await user.click(within(dialog).getByRole('button', { name: 'Done' }));
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
    const row = await screen.findByTestId('named-token');
    expect(row).toHaveTextContent('ci-bot');
    expect(row).toHaveTextContent('Never used');
    expect(screen.getByTestId('named-tokens').textContent, 'the list never holds a token').not.toContain('kp-local-');
    expect(nameInput(), 'the field is cleared for the next').toHaveValue('');
  });

  it('says at the field why a name is refused, and writes nothing', async () => {
    const user = renderTokens();
    await screen.findByTestId('named-tokens-empty');
    await user.click(screen.getByRole('button', { name: 'Make token' }));
    expect(nameInput()).toHaveAccessibleDescription(/^Enter something here\./);
    await user.type(nameInput(), 'two words{Enter}');
    await waitFor(() => expect(nameInput()).toHaveAccessibleDescription(/^1 to 64 letters, digits, dots, dashes, underscores or @\./));
    expect(nameInput()).toHaveAttribute('aria-invalid', 'true');
    expect(nameInput(), 'the focus goes back to the field').toHaveFocus();
    await user.clear(nameInput());
    await user.type(nameInput(), 'alice{Enter}');
    await user.click(within(await screen.findByRole('dialog')).getByRole('button', { name: 'Done' }));
    await user.type(nameInput(), 'ALICE{Enter}');
    await waitFor(() => expect(nameInput()).toHaveAccessibleDescription(/^Another token is called that \(in any case\)/));
    expect(backend.localApiExtras.namedTokens().map((t) => t.name)).toEqual(['alice']);
  });

  it('sets a token’s limits from the keyboard, refusing a bad one at its field', async () => {
    const user = renderTokens();
    await screen.findByTestId('named-tokens-empty');
    await user.type(nameInput(), 'ci-bot{Enter}');
    await user.click(within(await screen.findByRole('dialog')).getByRole('button', { name: 'Done' }));
    expect(await screen.findByTestId('named-token-rules')).toHaveTextContent('No limits');
    expect(screen.getByTestId('named-token-last-used')).toHaveTextContent('this month 0 tokens, $0.00');

    await user.click(screen.getByRole('button', { name: 'Limits of the token ci-bot' }));
    const dialog = await screen.findByRole('dialog', { name: 'Limits of ci-bot' });
    expect(within(dialog).getByRole('textbox', { name: 'Budget' }), 'the first field has the focus').toHaveFocus();
    await user.keyboard('20');
    await user.selectOptions(within(dialog).getByRole('combobox', { name: 'Per' }), 'day');
    await user.type(within(dialog).getByRole('textbox', { name: 'Requests per minute' }), '0');
    await user.type(within(dialog).getByRole('textbox', { name: 'Models it may ask for' }), 'gpt-* claude-[[x]');
    await user.click(within(dialog).getByRole('button', { name: 'Save limits' }));
    const rpm = within(dialog).getByRole('textbox', { name: 'Requests per minute' });
    expect(rpm, 'the first field in error has the focus').toHaveFocus();
    expect(rpm).toHaveAccessibleDescription(/from 1 to 1,000,000/);
    expect(within(dialog).getByRole('textbox', { name: 'Models it may ask for' })).toHaveAccessibleDescription(/Only \* and \? are wildcards/);
    expect(backend.callsOf('localApi:updateToken'), 'nothing was sent').toEqual([]);

    await user.clear(rpm);
    await user.type(rpm, '60');
    const models = within(dialog).getByRole('textbox', { name: 'Models it may ask for' });
    await user.clear(models);
    await user.type(models, 'gpt-*, claude-sonnet-*');
    await user.type(within(dialog).getByRole('textbox', { name: 'Requests at once' }), '4');
    await user.click(within(dialog).getByRole('button', { name: 'Save limits' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(backend.callsOf('localApi:updateToken')).toEqual([
      { name: 'ci-bot', rules: { budget: { usd: 20 }, budgetPeriod: 'day', requestsPerMinute: 60, maxInFlight: 4, models: ['gpt-*', 'claude-sonnet-*'] } },
    ]);
    expect(screen.getByTestId('named-token-rules')).toHaveTextContent('$20.00 a day · 60 requests/min · 4 at once · only gpt-*; claude-sonnet-*');
  });

  it('revokes a token after a question whose Cancel has the focus', async () => {
    const user = renderTokens();
    await screen.findByTestId('named-tokens-empty');
    for (const name of ['alice', 'bob']) {
      await user.type(nameInput(), `${name}{Enter}`);
      await user.click(within(await screen.findByRole('dialog')).getByRole('button', { name: 'Done' }));
    }
    await waitFor(() => expect(screen.getAllByTestId('named-token')).toHaveLength(2));
    await user.click(screen.getByRole('button', { name: 'Revoke the token alice' }));
    const ask = await screen.findByRole('alertdialog', { name: 'Revoke alice?' });
    expect(within(ask).getByRole('button', { name: 'Cancel' })).toHaveFocus();
    expect(ask).toHaveTextContent('What it spent stays on the Usage page under its name.');
    await user.click(within(ask).getByRole('button', { name: 'Revoke' }));
    await waitFor(() => expect(screen.getAllByTestId('named-token').map((r) => r.dataset.name)).toEqual(['bob']));
    expect(backend.localApiExtras.namedTokens().map((t) => t.name)).toEqual(['bob']);
  });

  it.each(['zh', 'ja', 'ru'] as const)('speaks %s', async (locale) => {
    const user = renderTokens(locale);
    await screen.findByTestId('named-tokens-empty');
    expect(screen.getByTestId('named-tokens').textContent).not.toMatch(/Named tokens|Make token/);
    await user.type(screen.getByRole('textbox'), 'a b{Enter}');
    await waitFor(() => expect(screen.getByTestId('named-token-name-error').textContent).not.toMatch(/letters/));
  });
});
