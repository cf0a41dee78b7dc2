import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { I18nProvider } from '../../../i18n/I18nProvider';
import { createFakeBackend, gate, type FakeBackend } from '../../../test/fakeBackend';

let backend: FakeBackend;
vi.mock('@tauri-apps/api/core', () => ({
  invoke: (command: string, args: Record<string, unknown>) => backend.invoke(command, args),
  Channel: class {
    onmessage: (message: unknown) => void = () => {};
  },
}));
vi.mock('@tauri-apps/api/event', () => ({ listen: (event: string, handler: never) => backend.listen(event, handler) }));

const { ChatPage } = await import('../ChatPage');

function renderPage() {
  const user = userEvent.setup();
  render(
    <I18nProvider initial="en">
      <ChatPage />
    </I18nProvider>,
  );
  return user;
}

const sends = () => backend.callsOf('chat:send').map((args) => args.request);
const replies = () => screen.queryAllByTestId('message').filter((m) => m.dataset.role === 'assistant');

/** A chat with one question and its answer. */
function chatWithHistory(fields = {}) {
  const chat = backend.addChat({ title: 'Trip', ...fields });
  backend.saveMessage(chat.id, { role: 'user', content: 'Where to go?' });
  backend.saveMessage(chat.id, { content: 'Try **Lisbon**.', keyLabel: 'key A' });
  return chat;
}

describe('conversation tools', () => {
  beforeEach(() => {
    backend = createFakeBackend();
    localStorage.clear();
  });

  it('edits the last message and sends it again: what followed it is replaced', async () => {
    chatWithHistory();
    backend.onSend(({ emit }) => {
      emit({ type: 'keySelected', keyId: null, keyLabel: 'key A', providerLevel: false, keyless: false, rebound: false, attempt: 1 });
      return { content: 'Then Porto.', keyLabel: 'key A' };
    });
    const user = renderPage();
    await screen.findByText('Lisbon');
    await user.click(screen.getByRole('button', { name: 'Edit' }));
    const editor = screen.getByRole('textbox', { name: 'Edit your message' });
    expect(editor, 'the editor opens with the message, focused').toHaveValue('Where to go?');
    expect(editor).toHaveFocus();
    await user.clear(editor);
    await user.type(editor, 'Where to go in May?{Enter}');
    await waitFor(() => expect(replies().at(-1)).toHaveTextContent('Then Porto.'));
    expect(sends()).toEqual([{ chatId: 'chat-1', content: 'Where to go in May?', edit: true }]);
    expect(replies(), 'the old reply is gone').toHaveLength(1);
    expect(screen.queryByText('Lisbon')).not.toBeInTheDocument();
    const users = screen.getAllByTestId('message').filter((m) => m.dataset.role === 'user');
    expect(users.map((u) => within(u).getByTestId('message-content').textContent)).toEqual(['Where to go in May?']);
    expect(screen.getByRole('button', { name: 'Edit' }), 'focus is back on Edit').toHaveFocus();
  });

  it('cancels an edit with Escape and sends nothing; only the last message can be edited', async () => {
    const chat = chatWithHistory();
    backend.saveMessage(chat.id, { role: 'user', content: 'And in winter?' });
    backend.saveMessage(chat.id, { content: 'Madeira.', keyLabel: 'key A' });
    const user = renderPage();
    await screen.findByText('Madeira.');
    expect(screen.getAllByRole('button', { name: 'Edit' }), 'one Edit, on the last question').toHaveLength(1);
    await user.click(screen.getByRole('button', { name: 'Edit' }));
    await user.type(screen.getByRole('textbox', { name: 'Edit your message' }), ' Really?{Escape}');
    expect(screen.queryByRole('textbox', { name: 'Edit your message' })).not.toBeInTheDocument();
    expect(sends()).toEqual([]);
  });

  it('regenerates the last reply: the same question is answered again and the reply replaced', async () => {
    chatWithHistory();
    const step = gate();
    backend.onSend(async ({ emit }) => {
      emit({ type: 'keySelected', keyId: null, keyLabel: 'key B', providerLevel: false, keyless: false, rebound: false, attempt: 1 });
      await step.opened;
      return { content: 'Maybe Porto.', keyLabel: 'key B' };
    });
    const user = renderPage();
    await screen.findByText('Lisbon');
    await user.click(screen.getByRole('button', { name: 'Regenerate' }));
    expect(sends()).toEqual([{ chatId: 'chat-1' }]);
    await waitFor(() => expect(screen.queryByText('Lisbon'), 'the reply being replaced goes at once').not.toBeInTheDocument());
    expect(screen.queryByRole('button', { name: 'Regenerate' }), 'not while a reply is written').not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Edit' }), 'nor Edit').not.toBeInTheDocument();
    step.open();
    await waitFor(() => expect(replies().at(-1)).toHaveTextContent('Maybe Porto.'));
    expect(replies()).toHaveLength(1);
  });

  it('copies a reply as its Markdown, and the user’s own message', async () => {
    chatWithHistory();
    const user = renderPage();
    await screen.findByText('Lisbon');
    await user.click(screen.getByRole('button', { name: 'Copy the reply' }));
    expect(await navigator.clipboard.readText()).toBe('Try **Lisbon**.');
    expect(screen.getByRole('button', { name: 'Copy the reply' })).toHaveTextContent('Copied');
    await user.click(screen.getByRole('button', { name: 'Copy your message' }));
    expect(await navigator.clipboard.readText()).toBe('Where to go?');
  });

  it('sets and removes a chat’s system prompt in its dialog', async () => {
    chatWithHistory();
    const user = renderPage();
    await screen.findByText('Lisbon');
    await user.click(screen.getByRole('button', { name: 'System prompt' }));
    const dialog = screen.getByRole('dialog', { name: 'System prompt of “Trip”' });
    const area = within(dialog).getByRole('textbox', { name: /System prompt/ });
    expect(area).toHaveFocus();
    await user.type(area, 'Answer in one line.');
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(backend.callsOf('chat:update')).toEqual([{ id: 'chat-1', systemPrompt: 'Answer in one line.' }]);
    expect(await screen.findByTestId('conversation-has-prompt')).toHaveAttribute('title', 'Answer in one line.');
    expect(screen.getByTestId('chat-announcement')).toHaveTextContent('System prompt saved.');

    await user.click(screen.getByRole('button', { name: 'System prompt' }));
    await user.clear(screen.getByRole('textbox', { name: /System prompt/ }));
    await user.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.queryByTestId('conversation-has-prompt')).not.toBeInTheDocument());
    expect(backend.callsOf('chat:update').at(-1), '"" removes it').toEqual({ id: 'chat-1', systemPrompt: '' });
  });

  it('starts a chat with the provider’s default system prompt, or the one typed', async () => {
    backend.providers()[0].systemPrompt = 'Be brief.';
    const user = renderPage();
    await user.click((await screen.findAllByRole('button', { name: 'New chat' }))[0]);
    const dialog = screen.getByRole('dialog', { name: 'Start a new chat' });
    expect(within(dialog).getByRole('textbox', { name: /System prompt/ })).toHaveValue('Be brief.');
    await user.click(within(dialog).getByRole('button', { name: 'Start chat' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(backend.callsOf('chat:create').at(-1), 'the default is the backend’s to apply').toEqual({ providerId: 'openai', model: 'gpt-4o-mini' });

    await user.click(screen.getAllByRole('button', { name: 'New chat' })[0]);
    const prompt = within(screen.getByRole('dialog')).getByRole('textbox', { name: /System prompt/ });
    await user.clear(prompt);
    await user.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Start chat' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(backend.callsOf('chat:create').at(-1), 'emptied: none for this chat').toEqual({ providerId: 'openai', model: 'gpt-4o-mini', systemPrompt: '' });
  });

  it('searches chats by title and content, marks the match, and opens the chat at the message', async () => {
    chatWithHistory();
    const other = backend.addChat({ title: 'Recipes' });
    backend.saveMessage(other.id, { role: 'user', content: 'A soup from Lisbon?' });
    const user = renderPage();
    await screen.findAllByTestId('chat-item');
    await user.type(screen.getByRole('searchbox', { name: 'Search chats' }), 'lisbon');
    await waitFor(() => expect(screen.getAllByTestId('chat-search-result')).toHaveLength(2));
    expect(backend.callsOf('chat:search').at(-1), 'asked once typing paused').toEqual({ query: 'lisbon' });
    expect(screen.getByTestId('chat-search-status')).toHaveTextContent('Chats found: 2');
    const [first] = screen.getAllByTestId('chat-search-snippet');
    expect(first.querySelector('mark')?.textContent, 'the match as the message writes it').toBe('Lisbon');
    await user.click(screen.getAllByTestId('chat-search-result').find((r) => r.dataset.chatId === other.id) as HTMLElement);
    expect(await screen.findByTestId('conversation-title')).toHaveTextContent('Recipes');
    await waitFor(() => expect(screen.getByText('A soup from Lisbon?').closest('[data-message-id]'), 'the message found is marked').toHaveClass('message--found'));
    await user.type(screen.getByRole('searchbox', { name: 'Search chats' }), '{Escape}');
    expect(screen.getByTestId('chat-list'), 'Escape goes back to the chats').toBeInTheDocument();
  });

  it('says when a search finds nothing', async () => {
    chatWithHistory();
    const user = renderPage();
    await user.type(await screen.findByRole('searchbox', { name: 'Search chats' }), 'zebra');
    expect(await screen.findByText('No chat holds “zebra”.')).toBeInTheDocument();
  });

  it('exports a chat as Markdown and says where; says nothing when the save is cancelled; words a failure', async () => {
    chatWithHistory();
    backend.onExport({ path: '/home/me/Trip.md' });
    const user = renderPage();
    await screen.findByText('Lisbon');
    await user.click(screen.getByRole('button', { name: 'Export' }));
    await waitFor(() => expect(screen.getByTestId('chat-announcement')).toHaveTextContent('Saved as /home/me/Trip.md.'));
    expect(backend.exports()).toEqual(['chat-1']);

    backend.onExport({ path: null });
    await user.click(screen.getByRole('button', { name: 'Export' }));
    await waitFor(() => expect(backend.exports()).toHaveLength(2));
    expect(screen.queryByTestId('chat-problem')).not.toBeInTheDocument();

    backend.onExport({ error: { code: 'validation', message: 'path: could not be written', issues: [{ path: 'path', code: 'cannot_write', params: { reason: 'Permission denied' }, message: 'x' }] } });
    await user.click(screen.getByRole('button', { name: 'Export' }));
    expect(await screen.findByTestId('chat-problem')).toHaveTextContent('Could not export the chat: path: The file could not be written (Permission denied).');
  });

  it('offers no export for a chat without messages', async () => {
    backend.addChat();
    renderPage();
    expect(await screen.findByRole('button', { name: 'Export' })).toBeDisabled();
  });
});

describe('choosing a model', () => {
  beforeEach(() => {
    backend = createFakeBackend();
    localStorage.clear();
  });

  async function openDialog() {
    const user = renderPage();
    await user.click((await screen.findAllByRole('button', { name: 'New chat' }))[0]);
    return { user, dialog: screen.getByRole('dialog', { name: 'Start a new chat' }) };
  }

  const options = (dialog: HTMLElement) => within(within(dialog).getByRole('listbox')).queryAllByRole('option').map((o) => o.textContent);

  it('offers the provider’s own models and what its models endpoint lists, and searches them', async () => {
    backend.setModels('openai', { models: ['gpt-4o', 'o3-mini', 'gpt-4.1'] });
    const { user, dialog } = await openDialog();
    await waitFor(() => expect(options(dialog)).toEqual(['gpt-4o-mini', 'gpt-4o', 'o3-mini', 'gpt-4.1']));
    expect(within(dialog).getByTestId('new-chat-model-status')).toHaveTextContent(/^The provider lists 3 models \(as of (\w+ \d+, )?\d\d:\d\d\)\.$/);
    const model = within(dialog).getByRole('combobox', { name: 'Model' });
    expect(model).toHaveValue('gpt-4o-mini');
    expect(within(dialog).getByRole('option', { name: 'gpt-4o-mini' })).toHaveAttribute('aria-selected', 'true');

    await user.clear(model);
    await user.type(model, '4');
    expect(options(dialog)).toEqual(['gpt-4o-mini', 'gpt-4o', 'gpt-4.1']);
    await user.type(model, 'o mini');
    expect(options(dialog), 'every word must match').toEqual(['gpt-4o-mini']);
    await user.keyboard('{ArrowDown}');
    expect(model).toHaveAttribute('aria-activedescendant', within(dialog).getByRole('option', { name: 'gpt-4o-mini' }).id);
    await user.keyboard('{Enter}');
    expect(model, 'Enter picks the option, it does not submit').toHaveValue('gpt-4o-mini');
    expect(screen.getByRole('dialog'), 'still open').toBeInTheDocument();
    expect(options(dialog), 'all models again').toHaveLength(4);
    await user.click(within(dialog).getByRole('option', { name: 'o3-mini' }));
    await user.click(within(dialog).getByRole('button', { name: 'Start chat' }));
    await waitFor(() => expect(backend.callsOf('chat:create')).toEqual([{ providerId: 'openai', model: 'o3-mini' }]));
  });

  it('takes a model the provider does not list, typed', async () => {
    const { user, dialog } = await openDialog();
    const model = within(dialog).getByRole('combobox', { name: 'Model' });
    await user.clear(model);
    await user.type(model, 'my-finetune-7');
    expect(within(dialog).getByTestId('new-chat-model-status')).toHaveTextContent('“my-finetune-7” is not listed; it will be used as typed.');
    await user.keyboard('{Enter}');
    await waitFor(() => expect(backend.callsOf('chat:create')).toEqual([{ providerId: 'openai', model: 'my-finetune-7' }]));
  });

  it('says in place why the list could not be fetched, in the UI’s words, and refreshes on request', async () => {
    backend.setModels('openai', {
      error: { code: 'provider', message: 'the provider answered: nope', details: { kind: 'upstream', status: 401, problem: { kind: 'refused' }, message: 'Incorrect API key provided' } },
    });
    const { user, dialog } = await openDialog();
    const status = within(dialog).getByTestId('new-chat-model-status');
    await waitFor(() =>
      expect(status).toHaveTextContent('Could not list the provider’s models: The provider refused (HTTP 401). The provider said: “Incorrect API key provided”'),
    );
    expect(status).toHaveAttribute('role', 'alert');
    expect(status).not.toHaveTextContent('the provider answered: nope');
    expect(options(dialog), 'the provider’s own models are still offered').toEqual(['gpt-4o-mini', 'gpt-4o']);

    backend.setModels('openai', { models: ['gpt-5'] });
    await user.click(within(dialog).getByRole('button', { name: 'Ask the provider for its models again' }));
    await waitFor(() => expect(options(dialog)).toContain('gpt-5'));
    expect(backend.callsOf('llmConfig:listModels').at(-1)).toEqual({ providerId: 'openai', refresh: true });
  });

  it('says when the provider lists nothing, so the model is typed', async () => {
    backend.setModels('anthropic', { models: [] });
    const { user, dialog } = await openDialog();
    await user.selectOptions(within(dialog).getByLabelText('Provider'), 'anthropic');
    await waitFor(() => expect(within(dialog).getByTestId('new-chat-model-status')).toHaveTextContent('The provider lists no models: type the model’s name.'));
  });
});
