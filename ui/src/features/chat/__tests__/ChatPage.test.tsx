import { act, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { I18nProvider } from '../../../i18n/I18nProvider';
import { adoptPreferences, NO_PREFERENCES, preferences } from '../../../preferences';
import { createFakeBackend, gate, type FakeBackend, provider } from '../../../test/fakeBackend';

let backend: FakeBackend;
vi.mock('@tauri-apps/api/core', () => ({
  invoke: (command: string, args: Record<string, unknown>) => backend.invoke(command, args),
  /** Like Tauri's: the page sets `onmessage`, the (fake) backend calls it. */
  Channel: class {
    onmessage: (message: unknown) => void = () => {};
  },
}));
vi.mock('@tauri-apps/api/event', () => ({ listen: (event: string, handler: never) => backend.listen(event, handler) }));

const { ChatPage } = await import('../ChatPage');

function renderPage(onOpenSettings = vi.fn()) {
  const user = userEvent.setup();
  render(
    <I18nProvider initial="en">
      <ChatPage onOpenSettings={onOpenSettings} />
    </I18nProvider>,
  );
  return user;
}

const composer = () => screen.getByRole('textbox', { name: 'Message' });
const sends = () => backend.callsOf('chat:send').map((args) => args.request);

describe('the chat page', () => {
  beforeEach(() => {
    backend = createFakeBackend();
    localStorage.clear();
  });

  it('starts a chat with a provider and one of its models, the default chosen first', async () => {
    const user = renderPage();
    expect(await screen.findByTestId('chat-empty')).toHaveTextContent('No conversations yet');
    await user.click(screen.getAllByRole('button', { name: 'New chat' })[0]);
    const dialog = screen.getByRole('dialog', { name: 'Start a new chat' });
    expect(within(dialog).getByLabelText('Model'), 'the provider’s default model is preselected').toHaveValue('gpt-4o-mini');
    await user.selectOptions(within(dialog).getByLabelText('Provider'), 'anthropic');
    expect(within(dialog).getByLabelText('Model'), 'another provider brings its own default').toHaveValue('claude-sonnet-4-5');
    await user.click(within(dialog).getByRole('option', { name: 'claude-haiku-4-5' }));
    await user.click(within(dialog).getByRole('button', { name: 'Start chat' }));

    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(backend.callsOf('chat:create')).toEqual([{ providerId: 'anthropic', model: 'claude-haiku-4-5' }]);
    expect(screen.getByTestId('conversation-model')).toHaveTextContent('Anthropic · claude-haiku-4-5');
    expect(screen.getByTestId('chat-item-title')).toHaveTextContent('New chat');
  });

  it('fills Model with the first model the provider lists when none is configured', async () => {
    // Local lists llama3.2 but has no models of its own in Settings.
    await backend.invoke('llmConfig:addProvider', { name: 'Local', kind: 'openai', baseUrl: 'http://127.0.0.1:11434/v1', models: [] });
    const local = backend.providers().find((p) => p.name === 'Local');
    backend.setModels(local?.id ?? '', { models: ['llama3.2'] });
    const user = renderPage();
    await user.click((await screen.findAllByRole('button', { name: 'New chat' }))[0]);
    const dialog = screen.getByRole('dialog', { name: 'Start a new chat' });
    await user.selectOptions(within(dialog).getByLabelText('Provider'), local?.id ?? '');
    await within(dialog).findByText(/The provider lists 1 model/);
    expect(within(dialog).getByLabelText('Model'), 'the model it lists, not an empty field').toHaveValue('llama3.2');

    // Emptied by the user, it stays empty.
    await user.clear(within(dialog).getByLabelText('Model'));
    expect(within(dialog).getByLabelText('Model')).toHaveValue('');
  });

  it('preselects the provider last chatted with when its pool can answer, else one that can', async () => {
    // The latest chat is Anthropic's, whose pool is empty: OpenAI (its own key) can answer.
    backend.addChat({ providerId: 'openai', updatedAt: 1 });
    backend.addChat({ providerId: 'anthropic', model: 'claude-sonnet-4-5', updatedAt: 2 });
    const user = renderPage();
    await user.click((await screen.findAllByRole('button', { name: 'New chat' }))[0]);
    let dialog = screen.getByRole('dialog', { name: 'Start a new chat' });
    expect(within(dialog).getByLabelText('Provider'), 'a provider with no keys is not offered first').toHaveValue('openai');
    await user.click(within(dialog).getByRole('button', { name: 'Cancel' }));

    // A key added (as Settings adds it): the page hears of the change.
    await act(() => backend.invoke('llmConfig:addApiKey', { providerId: 'anthropic', apiKey: 'sk-ant-answers-1111' }));
    await user.click(screen.getAllByRole('button', { name: 'New chat' })[0]);
    dialog = screen.getByRole('dialog', { name: 'Start a new chat' });
    await waitFor(() => expect(within(dialog).getByLabelText('Provider'), 'once it can answer, the last one used').toHaveValue('anthropic'));
    expect(within(dialog).getByLabelText('Model'), 'with its default').toHaveValue('claude-sonnet-4-5');
  });

  it('streams the reply in as deltas arrive and says which key answered', async () => {
    backend.addChat();
    const step = gate();
    backend.onSend(async ({ emit }) => {
      emit({ type: 'keySelected', keyId: null, keyLabel: 'prod', providerLevel: false, keyless: false, rebound: false, attempt: 1 });
      emit({ type: 'delta', text: 'Hel' });
      await step.opened;
      emit({ type: 'delta', text: 'lo!' });
      return { content: 'Hello!', keyLabel: 'prod' };
    });
    const user = renderPage();
    await user.type(await screen.findByRole('textbox', { name: 'Message' }), 'Hi there{Enter}');

    // Deltas are drawn once per animation frame.
    await waitFor(() => expect(screen.getByTestId('streaming-content')).toHaveTextContent('Hel'));
    expect(screen.getByTestId('streaming-key')).toHaveTextContent('Writing with prod…');
    expect(screen.getAllByTestId('message-content')[0], 'the user message shows at once').toHaveTextContent('Hi there');
    expect(composer(), 'the box is emptied once sent').toHaveValue('');
    expect(sends()).toEqual([{ chatId: 'chat-1', content: 'Hi there' }]);
    expect(screen.getByRole('button', { name: 'Stop' }), 'Stop replaces Send while a reply is written').toBeInTheDocument();

    step.open();
    await waitFor(() => expect(screen.queryByTestId('streaming-reply')).not.toBeInTheDocument());
    const [reply] = screen.getAllByTestId('message').slice(-1);
    expect(reply).toHaveTextContent('Hello!');
    expect(within(reply).getByTestId('message-key')).toHaveTextContent('Key: prod');
    await waitFor(() => expect(screen.getByTestId('chat-item-title'), 'the list follows the automatic title').toHaveTextContent('Hi there'));
  });

  it('adds a line with Shift+Enter and sends nothing blank', async () => {
    backend.addChat();
    const user = renderPage();
    const box = await screen.findByRole('textbox', { name: 'Message' });
    await user.type(box, 'one{Shift>}{Enter}{/Shift}two');
    expect(box).toHaveValue('one\ntwo');
    expect(sends()).toEqual([]);
    await user.clear(box);
    await user.type(box, '   {Enter}');
    expect(sends(), 'whitespace is not a message').toEqual([]);
  });

  it('stops a reply with the Stop button and keeps the text written so far', async () => {
    backend.addChat();
    backend.onSend(async ({ emit, stopped }) => {
      emit({ type: 'keySelected', keyId: null, keyLabel: 'prod', providerLevel: false, keyless: false, rebound: false, attempt: 1 });
      emit({ type: 'delta', text: 'The first half' });
      await stopped;
      return { content: 'The first half', status: 'stopped', keyLabel: 'prod' };
    });
    const user = renderPage();
    await user.type(await screen.findByRole('textbox', { name: 'Message' }), 'Tell a story{Enter}');
    await screen.findByText('The first half');
    await user.click(screen.getByRole('button', { name: 'Stop' }));

    expect(backend.callsOf('chat:stop')).toEqual([{ chatId: 'chat-1' }]);
    const reply = await screen.findByTestId('message-stopped');
    expect(reply).toHaveTextContent('Stopped');
    expect(screen.getAllByTestId('message').at(-1)).toHaveTextContent('The first half');
    expect(screen.getByRole('button', { name: 'Send' }), 'Send is back').toBeInTheDocument();
  });

  it('says quietly when a key was rate-limited and the reply moved to another key', async () => {
    backend.addChat();
    backend.onSend(({ emit }) => {
      emit({ type: 'keySelected', keyId: null, keyLabel: 'key A', providerLevel: false, keyless: false, rebound: false, attempt: 1 });
      emit({ type: 'failover', keyLabel: 'key A', status: 429, reason: 'rate_limited', message: 'slow down' });
      emit({ type: 'keySelected', keyId: null, keyLabel: 'key B', providerLevel: false, keyless: false, rebound: true, attempt: 2 });
      emit({ type: 'delta', text: 'Answer' });
      return { content: 'Answer', keyLabel: 'key B' };
    });
    const user = renderPage();
    await user.type(await screen.findByRole('textbox', { name: 'Message' }), 'Q{Enter}');
    const notice = await screen.findByTestId('chat-notice');
    expect(notice, 'a key is named by its label alone').toHaveTextContent(/^key A was rate-limited \(429\), retried on key B$/);
    expect(notice, 'the provider’s words are at hand').toHaveAttribute('title', 'The provider said: “slow down”');
    expect(notice).toHaveAttribute('data-kind', 'failover');
    await waitFor(() => expect(screen.getByTestId('message-key')).toHaveTextContent('Key: key B'));
    expect(screen.getAllByTestId('chat-notice'), 'one notice, not one per event').toHaveLength(1);
  });

  it('says a key is out of credit and the reply moved to another key', async () => {
    backend.addChat();
    backend.onSend(({ emit }) => {
      emit({ type: 'keySelected', keyId: null, keyLabel: 'key A', providerLevel: false, keyless: false, rebound: false, attempt: 1 });
      emit({ type: 'failover', keyLabel: 'key A', status: 402, reason: 'quota_exhausted', message: 'insufficient_quota' });
      emit({ type: 'keySelected', keyId: null, keyLabel: 'key B', providerLevel: false, keyless: false, rebound: true, attempt: 2 });
      return { content: 'Answer', keyLabel: 'key B' };
    });
    const user = renderPage();
    await user.type(await screen.findByRole('textbox', { name: 'Message' }), 'Q{Enter}');
    const notice = await screen.findByTestId('chat-notice');
    expect(notice, 'out of credit is not called a rate limit').toHaveTextContent(/^key A is out of credit \(402\), retried on key B$/);
  });

  it('shows a reply waiting for a free key, counting down by the backend clock, and Stop ends the wait', async () => {
    backend.addChat();
    const backendNow = Date.UTC(2026, 0, 15, 14, 10);
    backend.onSend(async ({ emit, stopped }) => {
      emit({ type: 'waiting', until: backendNow + 4_000, deadline: backendNow + 20_000, now: backendNow, seconds: 4 });
      await stopped;
      return { content: '', status: 'stopped' };
    });
    const user = renderPage();
    await user.type(await screen.findByRole('textbox', { name: 'Message' }), 'Q{Enter}');
    const waiting = await screen.findByRole('timer');
    expect(waiting, 'the UI clock is months off; the backend clock counts').toHaveTextContent('Waiting for a free key… 0:04');
    expect(within(screen.getByTestId('streaming-reply')).getByTestId('chat-waiting')).toBe(waiting);
    await waitFor(() => expect(waiting).toHaveTextContent('Waiting for a free key… 0:03'), { timeout: 2500 });

    await user.click(screen.getByRole('button', { name: 'Stop' }));
    expect(backend.callsOf('chat:stop'), 'Stop works while waiting').toEqual([{ chatId: 'chat-1' }]);
    expect(await screen.findByTestId('message-stopped')).toHaveTextContent('Stopped');
    expect(screen.queryByTestId('chat-waiting')).not.toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Send' })).toBeInTheDocument();
  });

  it('waits for a request in flight to end, then writes the reply', async () => {
    backend.addChat();
    const backendNow = Date.UTC(2026, 0, 15, 14, 10);
    const freed = gate();
    backend.onSend(async ({ emit }) => {
      emit({ type: 'waiting', until: null, deadline: backendNow + 20_000, now: backendNow, seconds: 20 });
      await freed.opened;
      emit({ type: 'keySelected', keyId: null, keyLabel: 'key A', providerLevel: false, keyless: false, rebound: false, attempt: 1 });
      emit({ type: 'delta', text: 'Finally' });
      return { content: 'Finally', keyLabel: 'key A' };
    });
    const user = renderPage();
    await user.type(await screen.findByRole('textbox', { name: 'Message' }), 'Q{Enter}');
    expect(await screen.findByTestId('chat-waiting'), 'no time is known: the most it waits').toHaveTextContent(
      'Waiting for a key in use to free up… at most 0:20',
    );
    freed.open();
    await waitFor(() => expect(screen.queryByTestId('chat-waiting')).not.toBeInTheDocument());
    await waitFor(() => expect(screen.getAllByTestId('message').at(-1)).toHaveTextContent('Finally'));
    expect(screen.getByTestId('message-key')).toHaveTextContent('Key: key A');
  });

  it('says when the chat moved to another key and its prompt cache starts cold', async () => {
    backend.addChat();
    backend.onSend(({ emit }) => {
      emit({ type: 'keySelected', keyId: null, keyLabel: 'spare', providerLevel: false, keyless: false, rebound: true, attempt: 1 });
      return { content: 'Hi', keyLabel: 'spare' };
    });
    const user = renderPage();
    await user.type(await screen.findByRole('textbox', { name: 'Message' }), 'Q{Enter}');
    expect(await screen.findByTestId('chat-notice')).toHaveTextContent('Moved to spare — prompt cache reset');
  });

  it('names the provider-level key when it answered', async () => {
    backend.addChat();
    backend.onSend(({ emit }) => {
      emit({ type: 'keySelected', keyId: null, keyLabel: 'provider key', providerLevel: true, keyless: false, rebound: false, attempt: 1 });
      return { content: 'Hi', keyLabel: 'provider key', providerKey: true };
    });
    const user = renderPage();
    await user.type(await screen.findByRole('textbox', { name: 'Message' }), 'Q{Enter}');
    expect(await screen.findByTestId('message-key')).toHaveTextContent('Key: the provider key');
  });

  it('shows a failed reply in place, links to the key settings, and retries it', async () => {
    backend.addChat();
    backend.onSend(({ emit }) => {
      emit({ type: 'keySelected', keyId: null, keyLabel: 'only', providerLevel: false, keyless: false, rebound: false, attempt: 1 });
      emit({ type: 'failover', keyLabel: 'only', status: 401, reason: 'auth_rejected', message: 'invalid key' });
      return {
        status: 'error',
        error: 'no key of OpenAI is available: 1 disabled',
        errorCode: 'no_available_key',
        errorDetails: { kind: 'allBlocked', provider: 'OpenAI', keys: [{ name: 'only', state: 'disabled', until: null, status: 401, tried: true }], firstFreeAt: null, last: { status: 401, message: 'invalid key' } },
        keyLabel: 'only',
      };
    });
    const openSettings = vi.fn();
    const user = renderPage(openSettings);
    await user.type(await screen.findByRole('textbox', { name: 'Message' }), 'Q{Enter}');

    const error = await screen.findByTestId('message-error');
    expect(error).toHaveTextContent('The reply failed: Every key of OpenAI is disabled: only was disabled after a 401. Test them, replace them or turn them on in Settings → Providers. Its provider-level key was not tried: it is used only while the pool holds no keys. The last answer was HTTP 401. The provider said: “invalid key”');
    expect(error, 'the backend’s English is not shown').not.toHaveTextContent('no key of OpenAI is available');
    expect(screen.getByTestId('chat-notice')).toHaveTextContent('only was rejected (401) and disabled');
    await user.click(within(error).getByRole('button', { name: 'Open Settings → Providers' }));
    expect(openSettings).toHaveBeenCalled();

    backend.onSend(({ emit }) => {
      emit({ type: 'keySelected', keyId: null, keyLabel: 'fixed', providerLevel: false, keyless: false, rebound: false, attempt: 1 });
      return { content: 'Now it works', keyLabel: 'fixed' };
    });
    await user.click(within(error).getByRole('button', { name: 'Retry' }));
    expect(await screen.findByText('Now it works')).toBeInTheDocument();
    expect(sends().at(-1), 'a retry sends no content').toEqual({ chatId: 'chat-1' });
    expect(screen.queryByTestId('message-error'), 'the failed reply is replaced').not.toBeInTheDocument();
  });

  it('says what to do when a chat has no key to go with: start Ollama, or add a key', async () => {
    // Local (Ollama, not running) needs no key; OpenAI has none at all here.
    backend = createFakeBackend(undefined, {
      providers: [
        provider('local', 'Local', { baseUrl: 'http://127.0.0.1:11434/v1', models: ['llama3.2'], defaultModel: 'llama3.2', local: true }),
        provider('openai', 'OpenAI', { sortOrder: 1, models: ['gpt-4o-mini'], defaultModel: 'gpt-4o-mini' }),
      ],
    });
    backend.addChat({ providerId: 'local', model: 'llama3.2' });
    adoptPreferences({ ...NO_PREFERENCES, provider: 'local' });
    const opened = vi.fn();
    // Like the backend: Local is asked without a key and does not answer; OpenAI, with no key,
    // is not asked at all and the reply says why (no_available_key, noKeys).
    backend.onSend(({ chatId }) => {
      const chat = backend.chats().find((c) => c.id === chatId);
      if (chat?.providerId === 'openai') {
        return { status: 'error', error: 'OpenAI has no API keys', errorCode: 'no_available_key', errorDetails: { kind: 'noKeys', provider: 'OpenAI' } };
      }
      return { status: 'error', error: 'could not connect', errorCode: 'provider', errorDetails: { kind: 'unreachable', breakage: 'connect' } };
    });
    const user = renderPage(opened);
    await user.type(await screen.findByRole('textbox', { name: 'Message' }), 'Q{Enter}');
    let error = await screen.findByTestId('message-error');
    await waitFor(() =>
      expect(error).toHaveTextContent(
        'Ollama does not answer at http://127.0.0.1:11434/v1: Local needs no key, but its server must be running. Start it, or choose another provider.',
      ),
    );
    expect(within(error).queryByRole('button', { name: 'Open Settings → Providers' }), 'no key to add').not.toBeInTheDocument();

    await act(() => backend.invoke('chat:update', { id: 'chat-1', providerId: 'openai', model: 'gpt-4o-mini' }));
    await user.click(within(error).getByRole('button', { name: 'Retry' }));
    error = await screen.findByTestId('message-error');
    await waitFor(() => expect(error).toHaveTextContent('OpenAI has no API keys: add one in Settings → Providers.'));
    expect(error, 'not a connection failure').not.toHaveTextContent(/connect/);
    const open = within(error).getByRole('button', { name: 'Open Settings → Providers' });
    open.focus();
    expect(open, 'the way to add one is a keyboard stop').toHaveFocus();
    await user.keyboard('{Enter}');
    expect(opened, 'the link opens Settings').toHaveBeenCalledTimes(1);
    expect(preferences.provider(), 'Settings → Providers opens on OpenAI, where its key goes').toBe('openai');
  });

  it('keeps the text and says why when a send is refused', async () => {
    backend.addChat();
    backend.rejectNext('chat:send', { code: 'conflict', message: 'a reply is already being written in this chat', details: { kind: 'conflict', conflict: 'reply_in_progress' } });
    const user = renderPage();
    await user.type(await screen.findByRole('textbox', { name: 'Message' }), 'Q{Enter}');
    expect(await screen.findByTestId('chat-problem')).toHaveTextContent('Could not send: A reply is already being written in this chat: wait for it, or stop it.');
    expect(composer()).toHaveValue('Q');
  });

  it('loads a chat’s messages when switching, and leaves the chat switched away from on its key', async () => {
    const first = backend.addChat({ title: 'First' });
    const second = backend.addChat({ title: 'Second' });
    backend.saveMessage(first.id, { role: 'user', content: 'old question' });
    backend.saveMessage(first.id, { content: 'old answer', keyLabel: 'prod' });
    const user = renderPage();
    const items = await screen.findAllByTestId('chat-item');
    expect(items.map((i) => i.textContent), 'most recently active first').toEqual(['First', 'Second']);
    expect(await screen.findByText('old answer')).toBeInTheDocument();

    await user.click(screen.getByRole('button', { name: 'Second' }));
    // A binding ends only on delete, idle time or an unavailable key: switching away keeps the cache warm.
    expect(backend.callsOf('chat:close'), 'switching chats releases no key').toEqual([]);
    expect(await screen.findByTestId('conversation-title')).toHaveTextContent('Second');
    expect(screen.queryByText('old answer')).not.toBeInTheDocument();
    expect(backend.callsOf('chat:getMessages')).toContainEqual({ chatId: second.id });
  });

  it('renames a chat in place: Enter saves, Escape cancels', async () => {
    backend.addChat({ title: 'Draft' });
    const user = renderPage();
    await user.click(await screen.findByRole('button', { name: 'Rename Draft' }));
    const input = screen.getByRole('textbox', { name: 'Chat title' });
    expect(input).toHaveFocus();
    await user.clear(input);
    await user.type(input, 'Ignored{Escape}');
    expect(backend.callsOf('chat:update'), 'Escape saves nothing').toEqual([]);

    await user.click(screen.getByRole('button', { name: 'Rename Draft' }));
    await user.clear(screen.getByRole('textbox', { name: 'Chat title' }));
    await user.type(screen.getByRole('textbox', { name: 'Chat title' }), 'Trip plans{Enter}');
    await waitFor(() => expect(screen.getByTestId('chat-item-title')).toHaveTextContent('Trip plans'));
    expect(backend.callsOf('chat:update')).toEqual([{ id: 'chat-1', title: 'Trip plans' }]);
  });

  it('deletes a chat only after a confirmation that says it cannot be undone', async () => {
    backend.addChat({ title: 'Doomed' });
    backend.addChat({ title: 'Kept' });
    const user = renderPage();
    await user.click(await screen.findByRole('button', { name: 'Delete Doomed' }));
    const confirm = screen.getByRole('alertdialog', { name: 'Delete this chat?' });
    expect(confirm).toHaveAccessibleDescription(/cannot be undone/);
    expect(within(confirm).getByRole('button', { name: 'Cancel' })).toHaveFocus();
    await user.click(within(confirm).getByRole('button', { name: 'Cancel' }));
    expect(backend.callsOf('chat:delete')).toEqual([]);

    await user.click(screen.getByRole('button', { name: 'Delete Doomed' }));
    await user.click(within(screen.getByRole('alertdialog')).getByRole('button', { name: 'Delete chat' }));
    await waitFor(() => expect(screen.queryByText('Doomed')).not.toBeInTheDocument());
    expect(backend.callsOf('chat:delete')).toEqual([{ id: 'chat-1' }]);
    expect(await screen.findByTestId('conversation-title'), 'the next chat is shown').toHaveTextContent('Kept');
  });

  it('asks for another provider when the chat’s provider was deleted', async () => {
    backend.addChat({ title: 'Orphan', providerId: null, model: 'gpt-4o' });
    const user = renderPage();
    const choose = await screen.findByTestId('choose-provider');
    expect(choose).toHaveTextContent('The provider of this chat was deleted');
    expect(composer(), 'nothing can be sent until then').toBeDisabled();
    await waitFor(() => expect(within(choose).getByLabelText('Model'), 'the chat’s model is kept when the provider has it').toHaveValue('gpt-4o'));
    await user.click(within(choose).getByRole('button', { name: 'Use this provider' }));
    await waitFor(() => expect(screen.queryByTestId('choose-provider')).not.toBeInTheDocument());
    expect(backend.callsOf('chat:update')).toEqual([{ id: 'chat-1', providerId: 'openai', model: 'gpt-4o' }]);
    expect(composer()).toBeEnabled();
  });

  it('speaks the chosen language', async () => {
    backend.addChat();
    const user = userEvent.setup();
    render(
      <I18nProvider initial="ru">
        <ChatPage />
      </I18nProvider>,
    );
    expect(await screen.findByRole('button', { name: 'Отправить' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Новый чат' })).toBeInTheDocument();
    await user.type(screen.getByRole('textbox', { name: 'Сообщение' }), 'Привет{Enter}');
    expect(await screen.findByTestId('message-key')).toHaveTextContent('Ключ: key A');
  });
});
