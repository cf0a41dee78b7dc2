import { act, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Locale } from '../../../../i18n';
import { I18nProvider } from '../../../../i18n/I18nProvider';
import { IpcError } from '../../../../ipc/client';
import { createFakeBackend, type FakeBackend, provider } from '../../../../test/fakeBackend';

let backend: FakeBackend;
vi.mock('@tauri-apps/api/core', () => ({ invoke: (command: string, args: Record<string, unknown>) => backend.invoke(command, args) }));
vi.mock('@tauri-apps/api/event', () => ({ listen: (event: string, handler: never) => backend.listen(event, handler) }));

const { LocalApiSection } = await import('../LocalApiSection');

function renderSection(locale: Locale = 'en', user = userEvent.setup()) {
  render(
    <I18nProvider initial={locale}>
      <LocalApiSection />
    </I18nProvider>,
  );
  return user;
}

const toggle = () => screen.findByRole('switch', { name: 'Serve the local API' });
const portInput = () => screen.getByRole('textbox', { name: 'Port' });
const state = () => screen.getByTestId('local-api-state');

/** Turns the endpoint on from the switch and closes the token dialog; returns the token shown. */
async function enable(user: ReturnType<typeof userEvent.setup>) {
  await user.click(await toggle());
  const dialog = await screen.findByRole('dialog', { name: 'Your local API token' });
  const token = within(dialog).getByRole('textbox', { name: 'Token' }) as HTMLInputElement;
  const value = token.value;
  await user.click(within(dialog).getByRole('button', { name: 'Done' }));
  return value;
}

describe('Settings → Local API', () => {
  beforeEach(() => {
    backend = createFakeBackend();
    localStorage.clear();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('is off at first: says so, shows the default port, zero counts and examples without a token', async () => {
    renderSection();
    expect(await toggle()).toHaveAttribute('aria-checked', 'false');
    expect(state()).toHaveTextContent('Off');
    expect(state(), 'a change of state is announced').toHaveAttribute('role', 'status');
    expect(portInput()).toHaveValue('4141');
    expect(portInput()).toHaveAccessibleDescription(/From 1024 to 65535 \(4141 by default\)/);
    expect(screen.getByTestId('local-api-requests')).toHaveTextContent('0');
    expect(screen.queryByTestId('local-api-address'), 'no address while nothing listens').not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Regenerate token' }), 'no token to replace yet').not.toBeInTheDocument();
    expect(screen.getByText('These examples work once the endpoint is running.')).toBeInTheDocument();
    const code = screen.getByTestId('local-api-snippet-code');
    expect(code).toHaveTextContent('OpenAI(base_url="http://127.0.0.1:4141/v1", api_key="<your token>")');
    expect(code, 'a model the OpenAI provider lists').toHaveTextContent('model="gpt-4o-mini"');
  });

  it('turning it on shows the token once, in a dialog with a warning and Copy; it is never shown again', async () => {
    const user = renderSection();
    const on = await toggle();
    await user.click(on);
    const dialog = await screen.findByRole('dialog', { name: 'Your local API token' });
    expect(backend.callsOf('localApi:configure')).toEqual([{ enabled: true }]);
    const token = within(dialog).getByRole('textbox', { name: 'Token' });
    expect(token).toHaveValue('kp-local-fake-1');
    expect(token, 'the token has the focus, selected for copying').toHaveFocus();
    expect(token).toHaveAttribute('readonly');
    expect(dialog).toHaveAccessibleDescription('Copy it now: it will not be shown again. Keypool keeps only a fingerprint of it; if you lose it, regenerate it.');

    await user.click(within(dialog).getByRole('button', { name: 'Copy the token' }));
    expect(await navigator.clipboard.readText()).toBe('kp-local-fake-1');
    expect(within(dialog).getByRole('button', { name: 'Copy the token' })).toHaveTextContent('Copied');

    await user.keyboard('{Escape}');
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
    await waitFor(() => expect(on, 'focus goes back to the switch').toHaveFocus());
    expect(document.body, 'the token is nowhere on the page once closed').not.toHaveTextContent('kp-local-fake-1');
    expect(state()).toHaveTextContent('Running');
    expect(on).toHaveAttribute('aria-checked', 'true');
    expect(screen.getByTestId('local-api-address')).toHaveTextContent('http://127.0.0.1:4141');

    await user.click(on);
    await waitFor(() => expect(state()).toHaveTextContent('Off'));
    await user.click(on);
    await waitFor(() => expect(state()).toHaveTextContent('Running'));
    expect(screen.queryByRole('dialog'), 'enabling again shows no token').not.toBeInTheDocument();
    expect(backend.localTokens(), 'one token made').toEqual(['kp-local-fake-1']);
  });

  it('saves a port on Enter, and refuses a wrong one in words without sending it', async () => {
    const user = renderSection();
    await toggle();
    const input = portInput();
    await user.clear(input);
    await user.type(input, '80{Enter}');
    expect(input).toHaveAttribute('aria-invalid', 'true');
    expect(input).toHaveAccessibleDescription(/Choose a port from 1024 to 65535\./);
    expect(screen.getByRole('alert')).toHaveTextContent('Choose a port from 1024 to 65535.');
    await user.clear(input);
    await user.type(input, 'http{Enter}');
    expect(screen.getByRole('alert')).toHaveTextContent('Choose a port from 1024 to 65535.');
    expect(backend.callsOf('localApi:configure'), 'nothing sent').toEqual([]);

    await user.keyboard('{Escape}');
    expect(input, 'Escape puts the stored port back').toHaveValue('4141');
    expect(input).not.toHaveAttribute('aria-invalid');

    await user.clear(input);
    await user.type(input, '5000{Enter}');
    await waitFor(() => expect(screen.getByTestId('local-api-port-status')).toHaveTextContent('Saved.'));
    expect(backend.callsOf('localApi:configure'), 'kept while off').toEqual([{ enabled: false, port: 5000 }]);
    expect(screen.getByTestId('local-api-snippet-code'), 'the examples follow the port').toHaveTextContent('http://127.0.0.1:5000/v1');
  });

  it('words the backend’s refusal of a port from its issue code', async () => {
    backend.rejectNext('localApi:configure', { code: 'validation', message: 'port: must be at most 65535', issues: [{ path: 'port', code: 'too_large', params: { max: 65535 }, message: 'refused by the backend' }] });
    const user = renderSection('ru');
    const input = await screen.findByRole('textbox', { name: 'Порт' });
    await user.clear(input);
    await user.type(input, '6000{Enter}');
    expect(await screen.findByTestId('local-api-port-error')).toHaveTextContent('Выберите порт от 1024 до 65535.');
    expect(input).toHaveValue('6000');
  });

  it('reports a port another program holds in place, and recovers on another port', async () => {
    backend.occupyPort(4141);
    const user = renderSection();
    await enable(user);
    expect(state()).toHaveTextContent('Not running');
    const input = portInput();
    const error = screen.getByTestId('local-api-port-error');
    expect(error).toHaveTextContent('Port 4141 is in use by another program: choose another port.');
    expect(error).toHaveAttribute('role', 'alert');
    expect(input).toHaveAttribute('aria-invalid', 'true');
    expect(input).toHaveAccessibleDescription(/Port 4141 is in use by another program/);
    expect(screen.queryByTestId('local-api-address')).not.toBeInTheDocument();

    // Another port that is taken: saved, but never "Saved." beside the red "in use".
    backend.occupyPort(4143);
    await user.clear(input);
    await user.type(input, '4143{Enter}');
    await waitFor(() => expect(screen.getByTestId('local-api-port-error')).toHaveTextContent('Port 4143 is in use'));
    expect(screen.getByTestId('local-api-port-status'), 'no green word beside the red one').toHaveTextContent(/^$/);

    await user.clear(input);
    await user.type(input, '4142{Enter}');
    await waitFor(() => expect(state()).toHaveTextContent('Running'));
    expect(backend.callsOf('localApi:configure').at(-1)).toEqual({ enabled: true, port: 4142 });
    expect(screen.queryByTestId('local-api-port-error')).not.toBeInTheDocument();
    expect(screen.getByTestId('local-api-address')).toHaveTextContent('http://127.0.0.1:4142');
    expect(screen.getByTestId('local-api-port-status'), 'a port it listens on is saved').toHaveTextContent('Saved.');
  });

  it('regenerates the token only after asking: Cancel keeps it, confirming shows the new one once', async () => {
    const user = renderSection();
    const first = await enable(user);
    const regenerate = screen.getByRole('button', { name: 'Regenerate token' });
    await user.click(regenerate);
    const ask = screen.getByRole('alertdialog', { name: 'Make a new token?' });
    expect(ask).toHaveAccessibleDescription('The current token stops working at once: every tool that uses it must be given the new one.');
    expect(within(ask).getByRole('button', { name: 'Cancel' }), 'Enter never replaces it by accident').toHaveFocus();
    await user.keyboard('{Enter}');
    expect(screen.queryByRole('alertdialog')).not.toBeInTheDocument();
    expect(backend.localTokens()).toEqual([first]);

    await user.click(regenerate);
    await user.click(screen.getByRole('button', { name: 'Make a new token' }));
    const shown = await screen.findByRole('dialog', { name: 'Your local API token' });
    const token = within(shown).getByRole('textbox', { name: 'Token' });
    expect(token).toHaveValue('kp-local-fake-2');
    await waitFor(() => expect(token, 'the new token takes the focus').toHaveFocus());
    await user.click(within(shown).getByRole('button', { name: 'Done' }));
    await waitFor(() => expect(regenerate).toHaveFocus());
    expect(document.body).not.toHaveTextContent('kp-local-fake-2');
  });

  it('says in the dialog when a new token could not be made', async () => {
    const user = renderSection();
    await enable(user);
    backend.rejectNext('localApi:regenerateToken', { code: 'storage', message: 'database is locked' });
    await user.click(screen.getByRole('button', { name: 'Regenerate token' }));
    await user.click(screen.getByRole('button', { name: 'Make a new token' }));
    const ask = screen.getByRole('alertdialog');
    expect(await within(ask).findByRole('alert')).toHaveTextContent('Could not make a new token: The database could not be read or written.');
  });

  it('keeps the counts live: read again every two seconds and when the window comes back', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    backend.setLocalApi({ enabled: true, running: true, address: 'http://127.0.0.1:4141' });
    renderSection('en', userEvent.setup({ advanceTimers: vi.advanceTimersByTime }));
    expect(await screen.findByTestId('local-api-requests')).toHaveTextContent('0');
    const reads = backend.callsOf('localApi:getStatus').length;

    backend.setLocalApi({ requests: 12_345, inFlight: 2, failed: 1 });
    await act(() => vi.advanceTimersByTimeAsync(2000));
    expect(screen.getByTestId('local-api-requests')).toHaveTextContent('12,345');
    expect(screen.getByTestId('local-api-in-flight')).toHaveTextContent('2');
    expect(screen.getByTestId('local-api-failed')).toHaveTextContent('1');
    expect(backend.callsOf('localApi:getStatus').length).toBe(reads + 1);

    backend.setLocalApi({ requests: 12_346 });
    await act(async () => {
      window.dispatchEvent(new Event('focus'));
    });
    expect(screen.getByTestId('local-api-requests')).toHaveTextContent('12,346');
  });

  it('asks in the examples for a model the pool can answer now, or says why there is none yet', async () => {
    // OpenAI answers with its own key; Anthropic and Google Gemini have no keys.
    const user = renderSection();
    const lines = await screen.findAllByTestId('local-api-example-model');
    expect(lines.map((l) => l.textContent)).toEqual([
      'OpenAI-compatible: gpt-4o-mini (OpenAI)',
      'Anthropic: no provider can answer yet. Add a key to one in Settings → Providers, and the examples will ask for one of its models.',
      'Google Gemini: no provider can answer yet. Add a key to one in Settings → Providers, and the examples will ask for one of its models.',
    ]);
    await user.click(screen.getByRole('tab', { name: 'Anthropic SDK · Python' }));
    expect(screen.getByRole('tabpanel'), 'no model the pool would refuse (503): the placeholder').toHaveTextContent('model="<model>"');
  });

  it('says, before a port is saved, that a running endpoint stays where it is on a port another program holds', async () => {
    renderSection();
    await toggle();
    // The backend binds the new port before it lets the old one go: a typo cannot take it down.
    expect(portInput()).toHaveAccessibleDescription(/moves to it at once, or stays where it is if another program holds it/);
    expect(portInput()).not.toHaveAccessibleDescription(/stops/);
  });

  it('keeps a running endpoint on its port when the new one is taken, and says so at the field', async () => {
    const user = renderSection();
    await enable(user);
    await waitFor(() => expect(state()).toHaveTextContent('Running'));
    backend.occupyPort(4143);
    const input = portInput();
    await user.clear(input);
    await user.type(input, '4143{Enter}');
    const error = await screen.findByTestId('local-api-port-error');
    expect(error).toHaveTextContent('Port 4143 is in use by another program: the local API goes on serving on port 4141. Choose another port to move it.');
    expect(error).toHaveAttribute('role', 'alert');
    expect(state(), 'the typo did not stop it').toHaveTextContent('Running');
    expect(screen.getByTestId('local-api-address'), 'it serves where it was').toHaveTextContent('http://127.0.0.1:4141');
    expect(input, 'the field shows the port it serves on').toHaveValue('4141');
    expect(input).toHaveAttribute('aria-invalid', 'true');
    expect(input).toHaveAccessibleDescription(/Port 4143 is in use/);
    expect(screen.getByTestId('local-api-port-status'), 'no green word beside the red one').toHaveTextContent(/^$/);

    await user.clear(input);
    await user.type(input, '4142{Enter}');
    await waitFor(() => expect(screen.getByTestId('local-api-address')).toHaveTextContent('http://127.0.0.1:4142'));
    expect(screen.queryByTestId('local-api-port-error')).not.toBeInTheDocument();
  });

  it('asks a provider with keys, not a keyless server that does not answer, and says which', async () => {
    // Local (Ollama, not running) comes first; Gateway has a working key.
    backend = createFakeBackend(undefined, {
      providers: [
        provider('local', 'Local', { baseUrl: 'http://127.0.0.1:11434/v1', sortOrder: 0, models: ['llama3.2'], defaultModel: 'llama3.2' }),
        provider('gw', 'Gateway', { builtin: false, sortOrder: 1, models: ['gpt-y'], defaultModel: 'gpt-y' }),
      ],
    });
    backend.add('gw', 'sk-gateway-example-1111');
    backend.setModels('local', { error: new IpcError('provider', 'Could not connect to the provider') });
    renderSection();
    await waitFor(() => expect(screen.getByTestId('local-api-snippet-code')).toHaveTextContent('model="gpt-y"'));
    const [openai] = await screen.findAllByTestId('local-api-example-model');
    expect(openai).toHaveTextContent('OpenAI-compatible: gpt-y (Gateway)');
    expect(openai).toHaveAttribute('data-route', 'keys');
  });

  it('says which provider a model name two providers list goes to, and how to ask for the other', async () => {
    backend = createFakeBackend(undefined, {
      providers: [
        provider('local', 'Local', { baseUrl: 'http://127.0.0.1:11434/v1', sortOrder: 0, models: ['llama3.2'], defaultModel: 'llama3.2' }),
        provider('gw', 'Gateway', { builtin: false, sortOrder: 1, models: ['gpt-y', 'llama3.2'], defaultModel: 'gpt-y' }),
      ],
    });
    backend.add('gw', 'sk-gateway-example-1111');
    renderSection();
    const shared = await screen.findByTestId('local-api-shared-models');
    expect(shared).toHaveTextContent('A model name more than one provider lists goes to the first of them, unless one of your routes sends it elsewhere');
    expect(within(shared).getAllByTestId('local-api-shared-model').map((li) => li.textContent)).toEqual([
      'llama3.2 goes to Local; Gateway lists it too (ask for Gateway/llama3.2).',
    ]);
  });

  it('says so too for a model only a provider’s models endpoint listed, as the backend routes it', async () => {
    backend = createFakeBackend(undefined, {
      providers: [
        provider('local', 'Local', { baseUrl: 'http://127.0.0.1:11434/v1', sortOrder: 0, models: ['llama3.2'], defaultModel: 'llama3.2' }),
        provider('gw', 'Gateway', { builtin: false, sortOrder: 1, models: ['gpt-y'], defaultModel: 'gpt-y' }),
      ],
    });
    backend.add('gw', 'sk-gateway-example-1111');
    // Gateway's own list does not name llama3.2; its models endpoint did, when it was asked.
    backend.setModels('gw', { models: ['gpt-y', 'llama3.2'] });
    await backend.invoke('llmConfig:listModels', { providerId: 'gw' });
    renderSection();
    const shared = await screen.findByTestId('local-api-shared-models');
    expect(within(shared).getAllByTestId('local-api-shared-model').map((li) => li.textContent)).toEqual([
      'llama3.2 goes to Local; Gateway lists it too (ask for Gateway/llama3.2).',
    ]);
  });

  it('names a keyless server that did not answer, and where, when it is the only one', async () => {
    backend = createFakeBackend(undefined, {
      providers: [provider('local', 'Local', { baseUrl: 'http://127.0.0.1:11434/v1', models: ['llama3.2'] })],
    });
    backend.setModels('local', { error: new IpcError('provider', 'Could not connect to the provider') });
    renderSection();
    const [openai] = await screen.findAllByTestId('local-api-example-model');
    await waitFor(() =>
      expect(openai).toHaveTextContent(
        'OpenAI-compatible: llama3.2 (Local), but its server at http://127.0.0.1:11434/v1 did not answer: start it, or add a key to another provider in Settings → Providers.',
      ),
    );
  });

  it('shows examples for each SDK and the environment, as keyboard-operable tabs with Copy', async () => {
    backend.setLocalApi({ enabled: true, running: true, address: 'http://127.0.0.1:4141' });
    backend.add('anthropic', 'sk-ant-example-1111');
    const user = renderSection();
    const first = await screen.findByRole('tab', { name: 'OpenAI SDK · Python' });
    expect(first).toHaveAttribute('aria-selected', 'true');
    expect(screen.getAllByRole('tab').map((tab) => tab.textContent)).toEqual([
      'OpenAI SDK · Python',
      'OpenAI SDK · JavaScript',
      'Anthropic SDK · Python',
      'Anthropic SDK · JavaScript',
      'Google Gen AI SDK · Python',
      'Google Gen AI SDK · JavaScript',
      'curl',
      'Environment variables',
    ]);
    await user.click(first);
    await user.keyboard('{ArrowRight}');
    expect(screen.getByRole('tab', { name: 'OpenAI SDK · JavaScript' })).toHaveFocus();
    expect(screen.getByRole('tabpanel', { name: 'OpenAI SDK · JavaScript' })).toHaveTextContent("baseURL: \"http://127.0.0.1:4141/v1\", apiKey: \"<your token>\"");
    await user.keyboard('{ArrowRight}');
    expect(screen.getByRole('tabpanel')).toHaveTextContent('Anthropic(base_url="http://127.0.0.1:4141", api_key="<your token>")');
    expect(screen.getByRole('tabpanel'), 'a model the Anthropic provider lists, now that it has a key').toHaveTextContent('model="claude-sonnet-4-5"');
    await user.keyboard('{End}{ArrowLeft}');
    expect(screen.getByRole('tabpanel', { name: 'curl' }), 'no SDK: the request itself').toHaveTextContent(
      "curl http://127.0.0.1:4141/v1/chat/completions \\ -H 'Authorization: Bearer <your token>'",
    );
    await user.keyboard('{End}');
    const env = screen.getByRole('tabpanel', { name: 'Environment variables' });
    expect(screen.getByTestId('local-api-snippet-code').textContent).toBe(
      [
        'export OPENAI_BASE_URL=http://127.0.0.1:4141/v1',
        "export OPENAI_API_KEY='<your token>'",
        'export ANTHROPIC_BASE_URL=http://127.0.0.1:4141',
        "export ANTHROPIC_API_KEY='<your token>'",
        'export GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:4141',
        "export GEMINI_API_KEY='<your token>'",
      ].join('\n'),
    );
    await user.click(within(env).getByRole('button', { name: 'Copy the example: Environment variables' }));
    expect(await navigator.clipboard.readText()).toContain('export ANTHROPIC_BASE_URL=http://127.0.0.1:4141\n');
    await user.click(screen.getByRole('tab', { name: 'Environment variables' }));
    await user.keyboard('{Home}');
    expect(first).toHaveFocus();
    expect(first).toHaveAttribute('tabindex', '0');
    expect(screen.getByRole('tab', { name: 'Environment variables' }), 'only the chosen tab is in the Tab order').toHaveAttribute('tabindex', '-1');
  });

  it('says when the state could not be read, and reads it again on request', async () => {
    backend.rejectNext('localApi:getStatus', { code: 'internal', message: 'boom' });
    const user = renderSection();
    expect(await screen.findByTestId('local-api-load-error')).toHaveTextContent('Could not read the local API’s state: Something went wrong inside Keypool.');
    await user.click(screen.getByRole('button', { name: 'Try again' }));
    expect(await toggle()).toHaveAttribute('aria-checked', 'false');
  });

  it.each([
    ['zh', '启用本地 API', '端口 4141 已被其他程序占用：请选择其他端口。'],
    ['ja', 'ローカル API を有効にする', 'ポート 4141 は別のプログラムが使用中です。別のポートを選んでください。'],
    ['ru', 'Включить локальный API', 'Порт 4141 занят другой программой: выберите другой порт.'],
  ] as const)('%s: is labelled and reports a busy port in the UI language', async (locale, name, busy) => {
    backend.occupyPort(4141);
    backend.setLocalApi({ enabled: true, error: { kind: 'portInUse', port: 4141 } });
    renderSection(locale);
    expect(await screen.findByRole('switch', { name })).toHaveAttribute('aria-checked', 'true');
    expect(screen.getByTestId('local-api-port-error')).toHaveTextContent(busy);
  });
});
