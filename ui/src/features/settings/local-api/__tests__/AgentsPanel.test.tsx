import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { Locale } from '../../../../i18n';
import { I18nProvider } from '../../../../i18n/I18nProvider';
import { createFakeBackend, type FakeBackend } from '../../../../test/fakeBackend';

let backend: FakeBackend;
vi.mock('@tauri-apps/api/core', () => ({ invoke: (command: string, args: Record<string, unknown>) => backend.invoke(command, args) }));
vi.mock('@tauri-apps/api/event', () => ({ listen: (event: string, handler: never) => backend.listen(event, handler) }));

const { LocalApiSection } = await import('../LocalApiSection');

type User = ReturnType<typeof userEvent.setup>;

async function renderPanel(locale: Locale = 'en') {
  const user = userEvent.setup();
  render(
    <I18nProvider initial={locale}>
      <LocalApiSection />
    </I18nProvider>,
  );
  await screen.findByTestId('agent-claudeCode');
  return user;
}

/** Turns the local API on from its switch and closes the token dialog: the token it showed. */
async function enable(user: User) {
  await user.click(await screen.findByRole('switch', { name: 'Serve the local API' }));
  const dialog = await screen.findByRole('dialog', { name: 'Your local API token' });
  const token = (within(dialog).getByRole('textbox', { name: 'Token' }) as HTMLTextAreaElement).value;
  await user.click(within(dialog).getByRole('button', { name: 'Done' }));
  return token;
}

const card = (agent: string) => screen.getByTestId(`agent-${agent}`);

/** Connect on `agent`'s card, with `model` and `token` typed when given and asked for. */
async function connect(user: User, agent: string, name: string, { token, model }: { token?: string; model?: string } = {}) {
  await user.click(within(card(agent)).getByRole('button', { name: new RegExp(`^Connect ${name}`) }));
  const dialog = await screen.findByRole('dialog', { name: new RegExp(`^Connect ${name}`) });
  expect(within(dialog).getByLabelText('Model (optional)'), 'the model has the focus').toHaveFocus();
  if (model) await user.keyboard(model);
  if (token !== undefined) await user.type(within(dialog).getByLabelText('Local API token'), token);
  await user.click(within(dialog).getByRole('button', { name: 'Connect' }));
  return dialog;
}

describe('Settings → Local API → Coding agents', () => {
  beforeEach(() => {
    backend = createFakeBackend();
    localStorage.clear();
  });

  it('lists the three agents, not connected, with their files, their model and where it goes', async () => {
    await renderPanel();
    for (const [agent, name] of [
      ['claudeCode', 'Claude Code'],
      ['codex', 'Codex CLI'],
      ['geminiCli', 'Gemini CLI'],
    ]) {
      expect(within(card(agent)).getByRole('heading', { name })).toBeInTheDocument();
      expect(within(card(agent)).getByTestId('agent-state')).toHaveTextContent('Not connected');
      expect(within(card(agent)).getByRole('button', { name: `Connect ${name}` }), 'the local API is off').toBeDisabled();
    }
    expect(screen.getByText('Turn the local API on to connect an agent.')).toBeInTheDocument();
    expect(within(card('claudeCode')).getByTestId('agent-model')).toHaveTextContent('its own default (claude-opus-5-5)');
    expect(within(card('claudeCode')).getByTestId('agent-files')).toHaveTextContent('/home/user/.claude/settings.json');
    expect(within(card('claudeCode')).getByTestId('agent-resolution')).toHaveTextContent('No provider answers this model yet.');
    expect(within(card('claudeCode')).getByTestId('agent-notices'), 'with what to do about it').toHaveTextContent('Add a route (for example claude-*)');
    expect(within(card('claudeCode')).getByTestId('agent-last-call')).toHaveTextContent('Never');
  });

  it('connects with the token once, then the next agent without it; disconnects', async () => {
    const user = await renderPanel();
    const token = await enable(user);
    await connect(user, 'claudeCode', 'Claude Code', { token, model: 'claude-sonnet-4-5' });
    await waitFor(() => expect(within(card('claudeCode')).getByTestId('agent-state')).toHaveTextContent('Connected'));
    expect(backend.callsOf('localApi:connectAgent')).toEqual([{ agent: 'claudeCode', token, model: 'claude-sonnet-4-5' }]);
    expect(within(card('claudeCode')).getByTestId('agent-model')).toHaveTextContent('claude-sonnet-4-5');
    expect(screen.getByTestId('agents-announcement')).toHaveTextContent('Claude Code connected.');

    // Codex: a connected agent holds the token, so none is asked.
    await user.click(within(card('codex')).getByRole('button', { name: 'Connect Codex CLI' }));
    const dialog = await screen.findByRole('dialog', { name: 'Connect Codex CLI' });
    expect(within(dialog).queryByLabelText('Local API token'), 'no token asked').not.toBeInTheDocument();
    expect(within(dialog).getByText('/home/user/.codex/config.toml'), 'the file Keypool will change is named').toBeInTheDocument();
    await user.click(within(dialog).getByRole('button', { name: 'Connect' }));
    await waitFor(() => expect(within(card('codex')).getByTestId('agent-state')).toHaveTextContent('Connected'));
    expect(backend.callsOf('localApi:connectAgent')[1]).toEqual({ agent: 'codex' });

    await user.click(within(card('claudeCode')).getByRole('button', { name: 'Disconnect Claude Code' }));
    await waitFor(() => expect(within(card('claudeCode')).getByTestId('agent-state')).toHaveTextContent('Not connected'));
    expect(screen.getByTestId('agents-announcement')).toHaveTextContent('Claude Code disconnected: its files are as they were.');
  });

  it('says at the field when the token is not the local API’s, and connects nothing', async () => {
    const user = await renderPanel();
    await enable(user);
    const dialog = await connect(user, 'geminiCli', 'Gemini CLI', { token: 'kp-local-not-it' });
    const field = await within(dialog).findByLabelText('Local API token');
    await waitFor(() => expect(field).toHaveAttribute('aria-invalid', 'true'));
    expect(field).toHaveAccessibleDescription(/This is not the local API’s token/);
    expect(backend.localApiExtras.agent('geminiCli').connection).toBeNull();
  });

  it('names a file it cannot merge, in the panel and when connecting', async () => {
    const user = await renderPanel();
    const token = await enable(user);
    const file = { path: '/home/user/.claude/settings.json', problem: { kind: 'malformed' as const, reason: 'expected `,` or `}` at line 3 column 1' } };
    backend.localApiExtras.setAgent('claudeCode', { malformed: file });
    const dialog = await connect(user, 'claudeCode', 'Claude Code', { token });
    expect(await within(dialog).findByRole('alert')).toHaveTextContent(
      '/home/user/.claude/settings.json cannot be merged, so Keypool left it as it is: expected `,` or `}` at line 3 column 1.',
    );
    await user.keyboard('{Escape}');
    await waitFor(() => expect(within(card('claudeCode')).getByTestId('agent-notices')).toHaveTextContent('cannot be merged'));
  });

  it('asks before putting back files changed since Connect', async () => {
    const user = await renderPanel();
    const token = await enable(user);
    await connect(user, 'codex', 'Codex CLI', { token });
    await waitFor(() => expect(within(card('codex')).getByTestId('agent-state')).toHaveTextContent('Connected'));
    backend.localApiExtras.setAgent('codex', { changed: ['/home/user/.codex/config.toml'] });

    await user.click(within(card('codex')).getByRole('button', { name: 'Disconnect Codex CLI' }));
    const ask = await screen.findByRole('alertdialog', { name: 'Put back Codex CLI’s files anyway?' });
    expect(within(ask).getByText('/home/user/.codex/config.toml')).toBeInTheDocument();
    expect(within(ask).getByRole('button', { name: 'Cancel' }), 'the safe choice has the focus').toHaveFocus();
    await user.keyboard('{Enter}');
    expect(backend.localApiExtras.agent('codex').connection, 'Cancel keeps it connected').not.toBeNull();

    await user.click(within(card('codex')).getByRole('button', { name: 'Disconnect Codex CLI' }));
    await user.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Put them back' }));
    await waitFor(() => expect(within(card('codex')).getByTestId('agent-state')).toHaveTextContent('Not connected'));
    expect(backend.callsOf('localApi:disconnectAgent').at(-1)).toEqual({ agent: 'codex', force: true });
  });

  it('shows where the model goes through a route, and when the agent last called', async () => {
    await backend.invoke('localApi:setRoutes', { routes: [{ model: 'claude-*', provider: 'openai', toModel: 'gpt-4o' }] });
    backend.localApiExtras.setAgent('claudeCode', { lastCall: Date.now() - 5 * 60_000 });
    await renderPanel();
    await waitFor(() => expect(within(card('claudeCode')).getByTestId('agent-resolution')).toHaveTextContent('OpenAI · gpt-4o, through the route claude-*'));
    expect(within(card('claudeCode')).queryByTestId('agent-notices')).not.toBeInTheDocument();
    expect(within(card('claudeCode')).getByTestId('agent-last-call')).toHaveTextContent('5 minutes ago');
  });

  it('gives copy-ready files for doing it by hand, with a placeholder for the token', async () => {
    const user = await renderPanel();
    const manual = within(card('codex')).getByTestId('agent-manual');
    await user.click(within(manual).getByText('Set it up by hand'));
    const code = manual.querySelector('code:not(:empty)');
    expect(manual).toHaveTextContent('base_url = "http://127.0.0.1:4141/v1"');
    expect(manual).toHaveTextContent('experimental_bearer_token = "<your token>"');
    expect(manual).toHaveTextContent('wire_api = "responses"');
    expect(code).not.toBeNull();
    await user.click(within(manual).getByRole('button', { name: 'Copy ~/.codex/config.toml' }));
    expect(await navigator.clipboard.readText()).toContain('model_provider = "keypool"');
  });

  it('speaks the UI’s language', async () => {
    await renderPanel('ru');
    expect(screen.getByRole('heading', { name: 'Агенты для программирования' })).toBeInTheDocument();
    expect(within(card('codex')).getByTestId('agent-state')).toHaveTextContent('Не подключён');
  });
});
