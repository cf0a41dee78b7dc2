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

/** Connect on `agent`'s card, with `model` typed and the options checked when given. */
async function connect(user: User, agent: string, name: string, { model, keyHelper, again }: { model?: string; keyHelper?: boolean; again?: boolean } = {}) {
  const label = again ? `Connect ${name} again` : `Connect ${name}`;
  await user.click(within(card(agent)).getByRole('button', { name: label }));
  const dialog = await screen.findByRole('dialog', { name: label });
  expect(within(dialog).getByLabelText('Model (optional)'), 'the model has the focus').toHaveFocus();
  if (model) await user.keyboard(model);
  if (keyHelper) await user.click(within(dialog).getByRole('checkbox', { name: 'Keep the token out of its settings file' }));
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

  it('connects each agent with a token of its own, listed by its agent, and Disconnect revokes it', async () => {
    const user = await renderPanel();
    const mainToken = await enable(user);
    const dialog = await (async () => {
      await user.click(within(card('claudeCode')).getByRole('button', { name: 'Connect Claude Code' }));
      return screen.findByRole('dialog', { name: 'Connect Claude Code' });
    })();
    expect(within(dialog).queryByLabelText('Local API token'), 'no token is asked: Connect makes one').not.toBeInTheDocument();
    expect(within(dialog).queryByRole('checkbox', { name: 'Give it a new token' }), 'nothing to renew yet').not.toBeInTheDocument();
    await user.keyboard('claude-sonnet-4-5');
    await user.click(within(dialog).getByRole('button', { name: 'Connect' }));
    await waitFor(() => expect(within(card('claudeCode')).getByTestId('agent-state')).toHaveTextContent('Connected'));
    expect(backend.callsOf('localApi:connectAgent')).toEqual([{ agent: 'claudeCode', model: 'claude-sonnet-4-5' }]);
    expect(within(card('claudeCode')).getByTestId('agent-model')).toHaveTextContent('claude-sonnet-4-5');
    expect(within(card('claudeCode')).getByTestId('agent-token')).toHaveTextContent('claude-code');
    expect(screen.getByTestId('agents-announcement')).toHaveTextContent('Claude Code connected.');
    const [own] = backend.localApiExtras.tokenValues('claude-code');
    expect(own, 'a token of its own, not the main one').not.toBe(mainToken);

    const codex = await connect(user, 'codex', 'Codex CLI');
    expect(within(codex).queryByRole('checkbox', { name: 'Keep the token out of its settings file' }), 'only Claude Code runs a key helper').not.toBeInTheDocument();
    await waitFor(() => expect(within(card('codex')).getByTestId('agent-state')).toHaveTextContent('Connected'));
    expect(backend.localApiExtras.namedTokens().map((t) => [t.name, t.agent])).toEqual([
      ['claude-code', 'claude-code'],
      ['codex', 'codex'],
    ]);

    // Again: it keeps its token; with a new token, the old value stops and the name stays.
    await connect(user, 'claudeCode', 'Claude Code', { again: true });
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(backend.localApiExtras.tokenValues('claude-code'), 'kept').toHaveLength(1);
    await user.click(within(card('claudeCode')).getByRole('button', { name: 'Connect Claude Code again' }));
    const renew = await screen.findByRole('dialog', { name: 'Connect Claude Code again' });
    await user.click(within(renew).getByRole('checkbox', { name: 'Give it a new token' }));
    await user.click(within(renew).getByRole('button', { name: 'Connect' }));
    await waitFor(() => expect(backend.localApiExtras.tokenValues('claude-code')).toHaveLength(2));
    expect(backend.callsOf('localApi:connectAgent').at(-1)).toEqual({ agent: 'claudeCode', model: 'claude-sonnet-4-5', newToken: true });

    await user.click(within(card('claudeCode')).getByRole('button', { name: 'Disconnect Claude Code' }));
    await waitFor(() => expect(within(card('claudeCode')).getByTestId('agent-state')).toHaveTextContent('Not connected'));
    expect(screen.getByTestId('agents-announcement')).toHaveTextContent('Claude Code disconnected: its files are as they were.');
    expect(backend.localApiExtras.namedTokens().map((t) => t.name), 'its token is revoked').toEqual(['codex']);
  });

  it('says when it made a settings file private, and offers the key helper to Claude Code', async () => {
    const user = await renderPanel();
    await enable(user);
    backend.localApiExtras.setAgent('codex', { readable: { path: '/home/user/.codex/config.toml', mode: 0o644 } });
    const dialog = await connect(user, 'codex', 'Codex CLI');
    const notice = await within(dialog).findByTestId('agent-tightened');
    expect(notice).toHaveTextContent('/home/user/.codex/config.toml holds the token now, so Keypool made it readable by you only (it was 0644)');
    expect(within(dialog).getByRole('button', { name: 'Done' }), 'the notice has the focus’s way out').toBeInTheDocument();
    await user.click(within(dialog).getByRole('button', { name: 'Done' }));
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();

    await connect(user, 'claudeCode', 'Claude Code', { keyHelper: true });
    await waitFor(() => expect(within(card('claudeCode')).getByTestId('agent-token')).toHaveTextContent('claude-code · read through the key helper'));
    expect(backend.callsOf('localApi:connectAgent').at(-1)).toEqual({ agent: 'claudeCode', keyHelper: true });
    expect(screen.queryByRole('dialog'), 'nothing tightened: the dialog closes').not.toBeInTheDocument();
  });

  it('takes a context window for Codex and Claude Code, digits only, and leaves it out when blank', async () => {
    const user = await renderPanel();
    await enable(user);
    await user.click(within(card('codex')).getByRole('button', { name: 'Connect Codex CLI' }));
    let dialog = await screen.findByRole('dialog', { name: 'Connect Codex CLI' });
    const field = within(dialog).getByLabelText('Context window (tokens)');
    expect(field).toHaveAccessibleDescription(/Where Codex CLI compacts the conversation/);
    await user.type(field, '1,048,576k');
    expect(field).toHaveValue('1048576');
    await user.click(within(dialog).getByRole('button', { name: 'Connect' }));
    await waitFor(() => expect(backend.callsOf('localApi:connectAgent').at(-1)).toEqual({ agent: 'codex', contextWindow: 1048576 }));

    await user.click(await within(card('claudeCode')).findByRole('button', { name: 'Connect Claude Code' }));
    dialog = await screen.findByRole('dialog', { name: 'Connect Claude Code' });
    await user.click(within(dialog).getByRole('button', { name: 'Connect' }));
    await waitFor(() => expect(backend.callsOf('localApi:connectAgent').at(-1)).toEqual({ agent: 'claudeCode' }));

    await user.click(within(card('geminiCli')).getByRole('button', { name: 'Connect Gemini CLI' }));
    dialog = await screen.findByRole('dialog', { name: 'Connect Gemini CLI' });
    expect(within(dialog).queryByLabelText('Context window (tokens)'), 'Gemini CLI reads none').not.toBeInTheDocument();
  });

  it('names a file it cannot merge, in the panel and when connecting', async () => {
    const user = await renderPanel();
    await enable(user);
    const file = { path: '/home/user/.claude/settings.json', problem: { kind: 'malformed' as const, reason: 'expected `,` or `}` at line 3 column 1' } };
    backend.localApiExtras.setAgent('claudeCode', { malformed: file });
    const dialog = await connect(user, 'claudeCode', 'Claude Code');
    expect(await within(dialog).findByRole('alert')).toHaveTextContent(
      '/home/user/.claude/settings.json cannot be merged, so Keypool left it as it is: expected `,` or `}` at line 3 column 1.',
    );
    await user.keyboard('{Escape}');
    await waitFor(() => expect(within(card('claudeCode')).getByTestId('agent-notices')).toHaveTextContent('cannot be merged'));
  });

  it('asks before putting back files changed since Connect', async () => {
    const user = await renderPanel();
    await enable(user);
    await connect(user, 'codex', 'Codex CLI');
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

  it('says Gemini CLI reads its .env only in trusted folders, and Connect can turn that off', async () => {
    const user = await renderPanel();
    await enable(user);
    await connect(user, 'geminiCli', 'Gemini CLI');
    await waitFor(() => expect(within(card('geminiCli')).getByTestId('agent-state')).toHaveTextContent('Connected'));
    const notice = within(card('geminiCli')).getByTestId('agent-notices');
    expect(notice, 'connected, yet it asks for a key in any other folder').toHaveTextContent('reads /home/user/.gemini/.env only in folders you trusted');
    expect(within(notice).getByTestId('agent-env-line')).toHaveTextContent('set -a; . /home/user/.gemini/.env; set +a');
    await user.click(within(notice).getByRole('button', { name: 'Copy the shell line' }));
    expect(await navigator.clipboard.readText(), 'the line, never the token').toBe('set -a; . /home/user/.gemini/.env; set +a');

    await user.click(within(card('geminiCli')).getByRole('button', { name: 'Connect Gemini CLI again' }));
    const dialog = await screen.findByRole('dialog', { name: 'Connect Gemini CLI again' });
    await user.click(within(dialog).getByRole('checkbox', { name: 'Read it in every folder' }));
    await user.click(within(dialog).getByRole('button', { name: 'Connect' }));
    expect(backend.callsOf('localApi:connectAgent').at(-1)).toEqual({ agent: 'geminiCli', trustAllFolders: true });
    await waitFor(() =>
      expect(card('geminiCli').querySelector('[data-kind="trustedFoldersOnly"]'), 'its folder trust is off: it reads the file everywhere').toBeNull(),
    );
  });

  it('says at Connect that a model of a provider with another API needs a route, and adds it in one click', async () => {
    const user = await renderPanel();
    await enable(user);
    await user.click(within(card('geminiCli')).getByRole('button', { name: 'Connect Gemini CLI' }));
    const dialog = await screen.findByRole('dialog', { name: 'Connect Gemini CLI' });
    expect(within(dialog).queryByTestId('agent-model-other-api'), 'nothing typed yet').not.toBeInTheDocument();
    await user.keyboard('gpt-4o');
    const warning = within(dialog).getByTestId('agent-model-other-api');
    expect(warning).toHaveTextContent('Only OpenAI lists gpt-4o, and it speaks another API: without a route Gemini CLI gets HTTP 400 for it.');
    await user.click(within(warning).getByRole('button', { name: 'Add a route to OpenAI' }));
    await waitFor(() => expect(within(dialog).getByTestId('agent-route-made')).toHaveTextContent('Route added: gpt-4o goes to OpenAI, translated.'));
    expect(backend.callsOf('localApi:setRoutes').at(-1)).toEqual({ routes: [{ model: 'gpt-4o', provider: 'openai', toModel: 'gpt-4o' }] });
    expect(within(dialog).queryByTestId('agent-model-other-api'), 'routed now').not.toBeInTheDocument();
    await waitFor(() => expect(screen.getByTestId('routes-list'), 'the Routes list shows it at once').toHaveTextContent('gpt-4o'));
  });

  it('speaks the UI’s language', async () => {
    await renderPanel('ru');
    expect(screen.getByRole('heading', { name: 'Агенты для программирования' })).toBeInTheDocument();
    expect(within(card('codex')).getByTestId('agent-state')).toHaveTextContent('Не подключён');
  });
});
