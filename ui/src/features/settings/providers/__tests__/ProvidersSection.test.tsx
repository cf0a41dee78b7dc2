import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { I18nProvider } from '../../../../i18n/I18nProvider';
import { createFakeBackend, type FakeBackend, provider } from '../../../../test/fakeBackend';

let backend: FakeBackend;
vi.mock('@tauri-apps/api/core', () => ({ invoke: (command: string, args: Record<string, unknown>) => backend.invoke(command, args) }));
vi.mock('@tauri-apps/api/event', () => ({ listen: (event: string, handler: never) => backend.listen(event, handler) }));

const { ProvidersSection } = await import('../ProvidersSection');

function renderSection() {
  const user = userEvent.setup();
  render(
    <I18nProvider initial="en">
      <ProvidersSection />
    </I18nProvider>,
  );
  return user;
}

const row = (label: string) => {
  const found = screen.queryAllByTestId('key-row').find((r) => within(r).queryByText(label));
  if (!found) throw new Error(`no row ${label}`);
  return found;
};

describe('provider settings', () => {
  beforeEach(() => {
    backend = createFakeBackend();
    localStorage.clear();
  });

  it('follows what a local server answered a request without a key, not only its address', async () => {
    // An address the backend takes for a local server (the base-urls transcript's).
    const local = { baseUrl: 'http://127.0.0.1:11434/v1', local: true };
    backend = createFakeBackend(undefined, { providers: [provider('lm', 'LM Studio', { ...local, keylessRefused: 401 })] });
    renderSection();
    const key = await screen.findByTestId('provider-key');
    expect(key, 'it refused a keyless request: it needs a key after all').toHaveTextContent('Needed after all: this server refused the last request sent without a key (HTTP 401).');
    expect(key).not.toHaveTextContent('None needed');
    expect(await screen.findByTestId('pool-fallback'), 'the empty pool says the same').toHaveTextContent('This server refused the last request sent without a key (HTTP 401): it needs one.');
  });

  it('says a local server that answers without a key needs none', async () => {
    backend = createFakeBackend(undefined, { providers: [provider('lm', 'LM Studio', { baseUrl: 'http://127.0.0.1:11434/v1', local: true })] });
    renderSection();
    expect(await screen.findByTestId('provider-key')).toHaveTextContent('None needed');
  });

  it('shows the provider’s models with its default', async () => {
    renderSection();
    const models = await screen.findByTestId('provider-models');
    expect(models).toHaveTextContent('gpt-4o-mini · default');
    expect(models).toHaveTextContent('gpt-4o');
  });

  it('edits a provider in place and sends only what changed, never the old key', async () => {
    const user = renderSection();
    await user.click(await screen.findByRole('button', { name: 'Edit' }));
    const form = screen.getByTestId('provider-form');
    const keyField = within(form).getByLabelText(/Provider-level key/);
    expect(keyField, 'the key is a password field').toHaveAttribute('type', 'password');
    expect(keyField, 'the stored key is not in the form').toHaveValue('');
    expect(keyField).toHaveAccessibleDescription(/Saved as sk-…prov\. Leave empty to keep it/);

    await user.clear(within(form).getByLabelText('Name'));
    await user.type(within(form).getByLabelText('Name'), 'OpenAI (team)');
    await user.type(within(form).getByLabelText('Models'), ', o3');
    await user.selectOptions(within(form).getByLabelText('Default model'), 'o3');
    await user.click(within(form).getByRole('button', { name: 'Save' }));

    await waitFor(() => expect(screen.queryByTestId('provider-form')).not.toBeInTheDocument());
    expect(backend.callsOf('llmConfig:updateProvider')).toEqual([
      { id: 'openai', name: 'OpenAI (team)', models: ['gpt-4o-mini', 'gpt-4o', 'o3'], defaultModel: 'o3' },
    ]);
    expect(await screen.findByRole('heading', { name: 'OpenAI (team)' })).toBeInTheDocument();
    expect(screen.getByTestId('provider-models')).toHaveTextContent('o3 · default');
  });

  it('keeps a default system prompt for new chats, and removes it with ""', async () => {
    const user = renderSection();
    expect(await screen.findByTestId('provider-system-prompt')).toHaveTextContent('None');
    await user.click(screen.getByRole('button', { name: 'Edit' }));
    const form = screen.getByTestId('provider-form');
    await user.type(within(form).getByRole('textbox', { name: /System prompt/ }), 'Answer briefly.');
    expect(within(form).getByRole('textbox', { name: /System prompt/ })).toHaveAccessibleDescription(/New chats with this provider start with it/);
    await user.click(within(form).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.getByTestId('provider-system-prompt')).toHaveTextContent('Answer briefly.'));
    expect(backend.callsOf('llmConfig:updateProvider')).toEqual([{ id: 'openai', systemPrompt: 'Answer briefly.' }]);

    await user.click(screen.getByRole('button', { name: 'Edit' }));
    await user.clear(within(screen.getByTestId('provider-form')).getByRole('textbox', { name: /System prompt/ }));
    await user.click(within(screen.getByTestId('provider-form')).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.getByTestId('provider-system-prompt')).toHaveTextContent('None'));
    expect(backend.callsOf('llmConfig:updateProvider').at(-1)).toEqual({ id: 'openai', systemPrompt: '' });
  });

  it('lists the models the provider’s endpoint offers, searchable, and ticks them into the provider’s list', async () => {
    backend.setModels('openai', { models: ['gpt-4o-mini', 'gpt-4o', 'o3', 'o3-mini', 'gpt-4.1'] });
    const user = renderSection();
    await user.click(await screen.findByRole('button', { name: 'Edit' }));
    const form = screen.getByTestId('provider-form');
    expect(backend.callsOf('llmConfig:listModels'), 'nothing is asked until the user asks').toEqual([]);
    await user.click(within(form).getByRole('button', { name: 'List the provider’s models' }));
    const panel = within(form).getByRole('region', { name: 'Models from the provider' });
    await waitFor(() => expect(within(panel).getAllByRole('checkbox')).toHaveLength(5));
    expect(within(panel).getByRole('checkbox', { name: 'gpt-4o' }), 'a model already offered is ticked').toBeChecked();
    await user.type(within(panel).getByRole('searchbox', { name: 'Search the models' }), 'o3');
    expect(within(panel).getAllByRole('checkbox').map((c) => c.closest('label')?.textContent)).toEqual(['o3', 'o3-mini']);
    await user.click(within(panel).getByRole('checkbox', { name: 'o3-mini' }));
    expect(within(form).getByLabelText('Models'), 'ticking adds it to the list field').toHaveValue('gpt-4o-mini\ngpt-4o\no3-mini');
    await user.click(within(form).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(backend.callsOf('llmConfig:updateProvider')).toEqual([{ id: 'openai', models: ['gpt-4o-mini', 'gpt-4o', 'o3-mini'] }]));
  });

  it('says in place why the provider’s models could not be listed', async () => {
    backend.setModels('openai', { error: { code: 'provider', message: 'English', details: { kind: 'upstream', status: null, problem: { kind: 'unreachable', breakage: 'connect' }, message: 'English' } } });
    const user = renderSection();
    await user.click(await screen.findByRole('button', { name: 'Edit' }));
    await user.click(screen.getByRole('button', { name: 'List the provider’s models' }));
    const status = await screen.findByTestId('provider-models-status');
    await waitFor(() => expect(status).toHaveTextContent('Could not list the provider’s models: Could not connect to the provider.'));
    expect(status).toHaveAttribute('role', 'alert');
  });

  it('removes the provider-level key with "" and replaces it with a new one', async () => {
    const user = renderSection();
    await user.click(await screen.findByRole('button', { name: 'Edit' }));
    await user.click(screen.getByRole('button', { name: 'Remove' }));
    expect(screen.getByLabelText(/Provider-level key/)).toHaveAccessibleDescription('The provider-level key will be removed when you save.');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.getByTestId('provider-key')).toHaveTextContent('Not set'));
    expect(backend.callsOf('llmConfig:updateProvider')).toEqual([{ id: 'openai', apiKey: '' }]);

    await user.click(screen.getByRole('button', { name: 'Edit' }));
    await user.type(screen.getByLabelText(/Provider-level key/), 'sk-provider-new-7777');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.getByTestId('provider-key')).toHaveTextContent('sk-…7777'));
    expect(document.body.innerHTML, 'the secret is not kept in the page').not.toContain('provider-new');
  });

  it('shows the backend’s issues at their fields, a model by its position', async () => {
    backend.rejectNext('llmConfig:updateProvider', {
      code: 'validation',
      message: 'invalid',
      issues: [
        { path: 'baseUrl', code: 'bad_url', message: 'must be an http(s) URL the backend can reach' },
        { path: 'models[1]', code: 'blank', message: 'must not be blank' },
      ],
    });
    const user = renderSection();
    await user.click(await screen.findByRole('button', { name: 'Edit' }));
    await user.type(screen.getByLabelText('Models'), ', x');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    expect(await screen.findByTestId('provider-baseurl-error')).toHaveTextContent('Enter a URL such as https://api.openai.com/v1.');
    expect(screen.getByTestId('provider-models-error')).toHaveTextContent('Model 2: Enter something here.');
    expect(screen.getByLabelText('Base URL'), 'focus goes to the first field in error').toHaveFocus();
  });

  it('checks a provider before sending it, shows the backend’s verdict on its URL, and adds a valid one, then shows it', async () => {
    const user = renderSection();
    await user.click(await screen.findByRole('button', { name: 'Add provider' }));
    const dialog = screen.getByRole('dialog', { name: 'Add a provider' });
    await user.type(within(dialog).getByLabelText('Base URL'), 'not a url');
    await user.click(within(dialog).getByRole('button', { name: 'Add provider' }));
    expect(within(dialog).getByTestId('provider-name-error')).toHaveTextContent('Enter a name.');
    expect(backend.callsOf('llmConfig:addProvider'), 'nothing was sent').toEqual([]);

    await user.type(within(dialog).getByLabelText('Name'), 'Claude proxy');
    await user.selectOptions(within(dialog).getByLabelText('Kind'), 'anthropic');
    await user.click(within(dialog).getByRole('button', { name: 'Add provider' }));
    expect(await within(dialog).findByTestId('provider-baseurl-error'), 'the backend judges URLs').toHaveTextContent(
      'Enter a URL such as https://api.openai.com/v1.',
    );
    await user.clear(within(dialog).getByLabelText('Base URL'));
    await user.type(within(dialog).getByLabelText('Base URL'), 'https://proxy.example');
    await user.type(within(dialog).getByLabelText('Models'), 'claude-a{Enter}claude-b');
    await user.click(within(dialog).getByRole('button', { name: 'Add provider' }));

    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(backend.callsOf('llmConfig:addProvider').at(-1)).toEqual({
      name: 'Claude proxy',
      kind: 'anthropic',
      baseUrl: 'https://proxy.example',
      models: ['claude-a', 'claude-b'],
    });
    expect(await screen.findByRole('heading', { name: 'Claude proxy' }), 'the new provider is shown').toBeInTheDocument();
    expect(screen.getByTestId('pool-empty')).toBeInTheDocument();
  });

  it('adds a Google Gemini provider at the host root, and names its kind', async () => {
    const user = renderSection();
    await user.click(await screen.findByRole('button', { name: 'Add provider' }));
    const dialog = screen.getByRole('dialog', { name: 'Add a provider' });
    await user.type(within(dialog).getByLabelText('Name'), 'Gemini proxy');
    await user.selectOptions(within(dialog).getByLabelText('Kind'), 'Google Gemini');
    const baseUrl = within(dialog).getByLabelText('Base URL');
    expect(baseUrl, 'the example is the host root').toHaveAttribute('placeholder', 'https://generativelanguage.googleapis.com');
    expect(baseUrl).toHaveAccessibleDescription(/Google Gemini: the host root, https:\/\/generativelanguage\.googleapis\.com \(Keypool adds \/v1beta\/…\)/);
    expect(baseUrl, 'choosing the kind filled in its default').toHaveValue('https://generativelanguage.googleapis.com');
    await user.clear(baseUrl);
    await user.type(baseUrl, 'https://proxy.example');
    await user.type(within(dialog).getByLabelText('Models'), 'gemini-2.5-flash');
    await user.click(within(dialog).getByRole('button', { name: 'Add provider' }));

    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(backend.callsOf('llmConfig:addProvider').at(-1)).toEqual({ name: 'Gemini proxy', kind: 'gemini', baseUrl: 'https://proxy.example', models: ['gemini-2.5-flash'] });
    expect(await screen.findByRole('heading', { name: 'Gemini proxy' })).toBeInTheDocument();
    expect(screen.getByTestId('provider-settings'), 'its kind, in words').toHaveTextContent('Google Gemini');
  });

  it('offers every kind of the backend table, OpenRouter with its own base URL', async () => {
    const user = renderSection();
    await user.click(await screen.findByRole('button', { name: 'Add provider' }));
    const dialog = screen.getByRole('dialog', { name: 'Add a provider' });
    const kinds = within(within(dialog).getByLabelText('Kind')).getAllByRole('option').map((option) => option.textContent);
    expect(kinds).toEqual(['OpenAI-compatible', 'Anthropic', 'Google Gemini', 'OpenRouter', 'DeepSeek', 'Moonshot (Kimi)', 'SiliconFlow', 'Groq', 'xAI', 'Z.ai GLM Coding Plan', 'MiniMax Coding Plan', 'Kimi Code', 'Mistral', 'Together AI', 'Fireworks AI', 'Ollama (Anthropic API)', 'LM Studio', 'Azure OpenAI', 'Amazon Bedrock']);
    await user.type(within(dialog).getByLabelText('Name'), 'Router');
    const baseUrl = within(dialog).getByLabelText('Base URL');
    await user.selectOptions(within(dialog).getByLabelText('Kind'), 'DeepSeek');
    expect(baseUrl, 'a vendor is picked by name: its base URL comes with it').toHaveValue('https://api.deepseek.com');
    await user.selectOptions(within(dialog).getByLabelText('Kind'), 'OpenRouter');
    expect(baseUrl, 'the example is its API root').toHaveAttribute('placeholder', 'https://openrouter.ai/api/v1');
    expect(baseUrl, "another kind's default gives way to this one's").toHaveValue('https://openrouter.ai/api/v1');
    await user.clear(baseUrl);
    await user.type(baseUrl, 'https://gateway.example/v1');
    await user.selectOptions(within(dialog).getByLabelText('Kind'), 'Groq');
    expect(baseUrl, 'a URL the user wrote stays').toHaveValue('https://gateway.example/v1');
    await user.selectOptions(within(dialog).getByLabelText('Kind'), 'OpenRouter');
    await user.clear(baseUrl);
    await user.type(baseUrl, 'https://openrouter.ai/api/v1');
    await user.click(within(dialog).getByRole('button', { name: 'Add provider' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(backend.callsOf('llmConfig:addProvider').at(-1)).toMatchObject({ name: 'Router', kind: 'openrouter' });
    expect(screen.getByTestId('provider-settings'), 'its kind, in words').toHaveTextContent('OpenRouter');
  });

  it('deletes a provider after saying how many keys go with it', async () => {
    backend.add('openai', 'sk-one-0001');
    backend.add('openai', 'sk-two-0002');
    const user = renderSection();
    await screen.findByText('sk-…0002');
    await user.click(screen.getByRole('button', { name: 'Delete provider' }));
    const confirm = screen.getByRole('alertdialog', { name: 'Delete OpenAI?' });
    expect(confirm).toHaveAccessibleDescription(/“OpenAI” and the 2 keys in its pool will be deleted with it\. This cannot be undone\./);
    expect(within(confirm).getByRole('button', { name: 'Cancel' })).toHaveFocus();
    await user.click(within(confirm).getByRole('button', { name: 'Delete provider' }));

    await waitFor(() => expect(screen.queryByRole('alertdialog')).not.toBeInTheDocument());
    expect(backend.callsOf('llmConfig:deleteProvider')).toEqual([{ id: 'openai' }]);
    expect(await screen.findByRole('heading', { name: 'Anthropic' }), 'the next provider is shown').toBeInTheDocument();
    expect(screen.queryByRole('button', { name: /^OpenAI/ })).not.toBeInTheDocument();
    expect(screen.getByTestId('providers-announcement')).toHaveTextContent('OpenAI deleted, with 2 keys.');
  });
});

describe('testing a key', () => {
  beforeEach(() => {
    backend = createFakeBackend();
    localStorage.clear();
  });

  it('shows OK with the latency in the row', async () => {
    const key = backend.add('openai', 'sk-good-0001', { label: 'good' });
    backend.setKeyTest(key.id, { ok: true, status: 200, problem: null, message: 'ok', latencyMs: 123 });
    const user = renderSection();
    await user.click(await screen.findByRole('button', { name: 'Test good' }));
    expect(await within(row('good')).findByTestId('key-test-result')).toHaveTextContent('OK · 123 ms');
    expect(backend.callsOf('llmConfig:testApiKey')).toEqual([{ id: key.id }]);
    expect(within(row('good')).queryByRole('button', { name: 'Enable good' }), 'an enabled key needs no Enable').not.toBeInTheDocument();
  });

  it('shows the status and the provider’s message when the key is refused', async () => {
    const key = backend.add('openai', 'sk-bad-0001', { label: 'bad' });
    backend.setKeyTest(key.id, { ok: false, status: 401, problem: { kind: 'refused' }, message: 'Incorrect API key provided', latencyMs: 80 });
    const user = renderSection();
    await user.click(await screen.findByRole('button', { name: 'Test bad' }));
    expect(await within(row('bad')).findByTestId('key-test-result')).toHaveTextContent('The provider refused (HTTP 401). The provider said: “Incorrect API key provided”');
  });

  it('says which variable is not set when a $NAME key has none', async () => {
    const key = backend.add('openai', '$MISSING_KEY', { label: 'env' });
    backend.setKeyTest(key.id, { ok: false, status: null, problem: { kind: 'envUnset', var: 'MISSING_KEY' }, message: 'environment variable MISSING_KEY has no usable value', latencyMs: 0 });
    const user = renderSection();
    await user.click(await screen.findByRole('button', { name: 'Test env' }));
    expect(await within(row('env')).findByTestId('key-test-result')).toHaveTextContent('The environment variable MISSING_KEY is not set.');
  });

  it('offers Enable for a disabled key that tests fine', async () => {
    const key = backend.add('openai', 'sk-fixed-0001', { label: 'fixed', enabled: false, disabledReason: 'HTTP 401', disabledAt: Date.UTC(2026, 0, 15, 14, 2) });
    const user = renderSection();
    await user.click(await screen.findByRole('button', { name: 'Test fixed' }));
    await user.click(await within(row('fixed')).findByRole('button', { name: 'Enable fixed' }));
    await waitFor(() => expect(within(row('fixed')).getByTestId('key-state')).toHaveTextContent('Active'));
    expect(backend.callsOf('llmConfig:toggleApiKey')).toEqual([{ id: key.id, enabled: true }]);
    expect(within(row('fixed')).queryByRole('button', { name: 'Enable fixed' })).not.toBeInTheDocument();
  });
});

describe('the base URL’s plain http rule', () => {
  beforeEach(() => {
    backend = createFakeBackend();
    localStorage.clear();
  });

  const PLAIN_HTTP = /^Plain http:\/\/ would send your API keys unencrypted over the internet\. Use https:\/\//;

  it('says why at the field when editing, focuses it, and saves nothing', async () => {
    const user = renderSection();
    await user.click(await screen.findByRole('button', { name: /^Anthropic/ })); // no keys: no host-change question
    await user.click(await screen.findByRole('button', { name: 'Edit' }));
    const url = screen.getByLabelText('Base URL');
    await user.clear(url);
    await user.type(url, 'http://api.example.com/v1');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    expect(await screen.findByTestId('provider-baseurl-error')).toHaveTextContent(PLAIN_HTTP);
    expect(url, 'the field is marked invalid and described by the message').toHaveAttribute('aria-invalid', 'true');
    expect(url).toHaveAccessibleDescription(PLAIN_HTTP);
    expect(url, 'focus goes to it').toHaveFocus();
    expect(backend.providers().find((p) => p.id === 'anthropic')?.baseUrl, 'the backend refused it: nothing was saved').toBe('https://anthropic.example/v1');

    await user.clear(url);
    await user.type(url, 'http://192.168.1.9:8000/v1');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    // Plain http to a machine on the network: only with the user's word that it is theirs.
    const consent = await screen.findByRole('checkbox', { name: 'This host is on my own network' });
    expect(consent, 'the question comes with what it means').toHaveAccessibleDescription(/unencrypted/);
    expect(consent, 'and focus goes to it').toHaveFocus();
    expect(backend.providers().find((p) => p.id === 'anthropic')?.baseUrl, 'nothing saved before the answer').toBe('https://anthropic.example/v1');
    await user.click(consent);
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.getByTestId('provider-base-url')).toHaveTextContent('http://192.168.1.9:8000/v1'));
  });

  it('lists the models of a provider being added, with the form’s address and key, and saves those ticked', async () => {
    backend.setUnsavedModels('https://gw.example/v1', { models: ['gw-large', 'gw-small'] });
    const user = renderSection();
    await user.click(await screen.findByRole('button', { name: 'Add provider' }));
    const dialog = screen.getByRole('dialog', { name: 'Add a provider' });
    await user.type(within(dialog).getByLabelText('Name'), 'Gateway');
    await user.type(within(dialog).getByLabelText('Base URL'), 'https://gw.example/v1');
    await user.type(within(dialog).getByLabelText(/Provider-level key/), 'sk-gw-unsaved-1111');
    expect(within(dialog).getByTestId('provider-models-panel'), 'the panel says nothing is saved by asking').toHaveTextContent('Nothing is saved until you add the provider');
    await user.click(within(dialog).getByRole('button', { name: 'List the provider’s models' }));
    expect(await within(dialog).findByTestId('provider-models-status'), 'the count, in the singular or plural').toHaveTextContent('The provider lists 2 models');
    expect(backend.callsOf('llmConfig:listModelsFor'), 'asked at the form’s address with its key').toEqual([{ kind: 'openai', baseUrl: 'https://gw.example/v1', apiKey: 'sk-gw-unsaved-1111' }]);
    expect(backend.providers().some((p) => p.name === 'Gateway'), 'asking saved nothing').toBe(false);
    await user.click(within(dialog).getByRole('checkbox', { name: 'gw-small' }));
    await user.click(within(dialog).getByRole('button', { name: 'Add provider' }));
    await waitFor(() => expect(backend.providers().find((p) => p.name === 'Gateway')?.models, 'the ticked model is the new provider’s').toEqual(['gw-small']));
  });

  it('adds a provider on the local network only once the user says the host is theirs', async () => {
    const user = renderSection();
    await user.click(await screen.findByRole('button', { name: 'Add provider' }));
    const dialog = screen.getByRole('dialog', { name: 'Add a provider' });
    await user.type(within(dialog).getByLabelText('Name'), 'GPU box');
    await user.type(within(dialog).getByLabelText('Base URL'), 'http://gpu-box.local/v1');
    expect(within(dialog).queryByRole('checkbox', { name: 'This host is on my own network' }), 'nothing asked before the backend does').toBeNull();
    await user.click(within(dialog).getByRole('button', { name: 'Add provider' }));
    const consent = await within(dialog).findByRole('checkbox', { name: 'This host is on my own network' });
    expect(backend.providers().some((p) => p.name === 'GPU box'), 'not saved without it').toBe(false);
    await user.click(consent);
    await user.click(within(dialog).getByRole('button', { name: 'Add provider' }));
    await waitFor(() => expect(backend.providers().some((p) => p.name === 'GPU box'), 'saved with it').toBe(true));
  });

  it('says why at the field when adding', async () => {
    const user = renderSection();
    await user.click(await screen.findByRole('button', { name: 'Add provider' }));
    const dialog = screen.getByRole('dialog', { name: 'Add a provider' });
    await user.type(within(dialog).getByLabelText('Name'), 'Gateway');
    await user.type(within(dialog).getByLabelText('Base URL'), 'http://api.example.com');
    await user.click(within(dialog).getByRole('button', { name: 'Add provider' }));
    expect(await within(dialog).findByTestId('provider-baseurl-error')).toHaveTextContent(PLAIN_HTTP);
    expect(backend.providers().some((p) => p.name === 'Gateway'), 'the backend refused it: nothing was saved').toBe(false);
  });

  it('is the fake backend’s rule too, as it is the real one’s', async () => {
    await expect(backend.invoke('llmConfig:addProvider', { name: 'x', kind: 'openai', baseUrl: 'http://api.example.com' })).rejects.toMatchObject({
      code: 'validation',
      issues: [{ path: 'baseUrl', message: expect.stringContaining('unencrypted') }],
    });
    await expect(backend.invoke('llmConfig:updateProvider', { id: 'anthropic', baseUrl: 'http://8.8.8.8/v1' })).rejects.toMatchObject({ code: 'validation' });
    expect(backend.providers().map((p) => p.baseUrl), 'nothing was written').toEqual(['https://openai.example/v1', 'https://anthropic.example/v1']);
  });
});

describe('moving a provider’s keys to another host', () => {
  beforeEach(() => {
    backend = createFakeBackend();
    localStorage.clear();
    backend.add('openai', 'sk-move-AAAAAAAA1111', { label: 'prod' });
    backend.add('openai', 'sk-move-BBBBBBBB2222');
  });

  /** Opens the edit form of the provider shown and types `url` as its base URL. */
  async function editBaseUrl(user: ReturnType<typeof renderSection>, url: string) {
    await user.click(await screen.findByRole('button', { name: 'Edit' }));
    const field = screen.getByLabelText('Base URL');
    await user.clear(field);
    await user.type(field, url);
    return field;
  }

  const keysListed = (dialog: HTMLElement, host: string) =>
    within(within(dialog).getByRole('list', { name: `Keys that will be sent to ${host}` }))
      .getAllByRole('listitem')
      .map((item) => item.textContent);

  it('asks nothing about plain http to a public host: the backend refuses it, and says why at the field', async () => {
    const user = renderSection();
    await screen.findByText('sk-…2222');
    const field = await editBaseUrl(user, 'http://api.example.com');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    expect(await screen.findByTestId('provider-baseurl-error')).toHaveTextContent(/unencrypted over the internet/);
    expect(screen.queryByRole('alertdialog'), 'no question about keys the backend would not send anyway').not.toBeInTheDocument();
    expect(field, 'focus goes to the field').toHaveFocus();
    expect(backend.providers()[0].baseUrl, 'nothing was saved').toBe('https://openai.example/v1');
  });

  it('asks before the first send, naming the host and the keys; Cancel saves nothing and keeps the form', async () => {
    const user = renderSection();
    await screen.findByText('sk-…2222');
    await editBaseUrl(user, 'https://gateway.example:8443/v1');
    const save = screen.getByRole('button', { name: 'Save' });
    await user.click(save);

    const dialog = await screen.findByRole('alertdialog', { name: 'Send your keys to gateway.example:8443?' });
    expect(dialog).toHaveAccessibleDescription(/moves from https:\/\/openai\.example\/v1 to https:\/\/gateway\.example:8443\/v1\./);
    expect(keysListed(dialog, 'gateway.example:8443'), 'the pool keys by label or preview, and the provider-level key').toEqual([
      'prod',
      'sk-…2222',
      'Provider-level key sk-…prov',
    ]);
    expect(backend.callsOf('llmConfig:updateProvider'), 'nothing was sent before the user answered').toEqual([]);
    expect(within(dialog).getByRole('button', { name: 'Cancel' }), 'Cancel has the focus: Enter never sends keys by accident').toHaveFocus();
    expect(within(dialog).getByRole('button', { name: 'Send keys to gateway.example:8443' })).toBeInTheDocument();

    await user.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('alertdialog')).not.toBeInTheDocument();
    expect(backend.callsOf('llmConfig:updateProvider'), 'Cancel saves nothing').toEqual([]);
    expect(backend.providers()[0].baseUrl).toBe('https://openai.example/v1');
    expect(screen.getByLabelText('Base URL'), 'the form stays as typed').toHaveValue('https://gateway.example:8443/v1');
    expect(screen.queryByTestId('provider-baseurl-error'), 'no error is shown: nothing went wrong').not.toBeInTheDocument();
    expect(save).toHaveTextContent('Save');
    await waitFor(() => expect(save, 'focus returns to what opened the dialog').toHaveFocus());
  });

  it('sends the update with confirmHostChange only after “Send keys to <host>”', async () => {
    const user = renderSection();
    await screen.findByText('sk-…2222');
    await editBaseUrl(user, 'https://gateway.example/v1');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await user.click(await screen.findByRole('button', { name: 'Send keys to gateway.example' }));

    await waitFor(() => expect(screen.queryByTestId('provider-form')).not.toBeInTheDocument());
    expect(backend.callsOf('llmConfig:updateProvider')).toEqual([{ id: 'openai', baseUrl: 'https://gateway.example/v1', confirmHostChange: true }]);
    expect(await screen.findByTestId('provider-base-url')).toHaveTextContent('https://gateway.example/v1');
    expect(screen.getByTestId('providers-announcement')).toHaveTextContent('Provider saved.');
  });

  it('asks from the backend’s refusal when the UI could not tell, and resends only on yes', async () => {
    const user = renderSection();
    await user.click(await screen.findByRole('button', { name: /^Anthropic/ }));
    await screen.findByTestId('pool-empty');
    // A key the UI has not heard of yet: the provider looks keyless here, the backend knows better.
    backend.add('anthropic', 'sk-late-CCCCCCCC3333', { label: 'late' });
    await editBaseUrl(user, 'https://claude-proxy.example');
    await user.click(screen.getByRole('button', { name: 'Save' }));

    const dialog = await screen.findByRole('alertdialog', { name: 'Send your keys to claude-proxy.example?' });
    expect(keysListed(dialog, 'claude-proxy.example'), 'the keys the backend named').toEqual(['late']);
    expect(backend.callsOf('llmConfig:updateProvider'), 'the backend refused the unconfirmed move').toEqual([
      { id: 'anthropic', baseUrl: 'https://claude-proxy.example' },
    ]);
    await user.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(backend.callsOf('llmConfig:updateProvider'), 'Cancel resends nothing').toHaveLength(1);
    expect(backend.providers()[1].baseUrl).toBe('https://anthropic.example/v1');
    expect(screen.queryByTestId('provider-baseurl-error'), 'the refusal is a question, not an error at the field').not.toBeInTheDocument();

    await user.click(screen.getByRole('button', { name: 'Save' }));
    await user.click(await screen.findByRole('button', { name: 'Send keys to claude-proxy.example' }));
    await waitFor(() => expect(screen.queryByTestId('provider-form')).not.toBeInTheDocument());
    expect(backend.callsOf('llmConfig:updateProvider').slice(1)).toEqual([
      { id: 'anthropic', baseUrl: 'https://claude-proxy.example' },
      { id: 'anthropic', baseUrl: 'https://claude-proxy.example', confirmHostChange: true },
    ]);
    expect(backend.providers()[1].baseUrl).toBe('https://claude-proxy.example');
  });

  it('does not ask when no key would go: a keyless provider, or another path on the same host', async () => {
    const user = renderSection();
    await screen.findByText('sk-…2222');
    await editBaseUrl(user, 'https://openai.example/proxy/v1');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.getByTestId('provider-base-url')).toHaveTextContent('https://openai.example/proxy/v1'));

    await user.click(screen.getByRole('button', { name: /^Anthropic/ }));
    await screen.findByTestId('pool-empty');
    await editBaseUrl(user, 'https://claude-proxy.example');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.getByTestId('provider-base-url')).toHaveTextContent('https://claude-proxy.example'));
    expect(screen.queryByRole('alertdialog'), 'never asked').not.toBeInTheDocument();
    expect(backend.callsOf('llmConfig:updateProvider')).toEqual([
      { id: 'openai', baseUrl: 'https://openai.example/proxy/v1' },
      { id: 'anthropic', baseUrl: 'https://claude-proxy.example' },
    ]);
  });

  it('is operable from the keyboard: Tab stays inside, Escape cancels, Enter on the send button sends', async () => {
    const user = renderSection();
    await screen.findByText('sk-…2222');
    const field = await editBaseUrl(user, 'https://gateway.example/v1{Enter}');

    let dialog = await screen.findByRole('alertdialog', { name: 'Send your keys to gateway.example?' });
    const cancel = within(dialog).getByRole('button', { name: 'Cancel' });
    const send = within(dialog).getByRole('button', { name: 'Send keys to gateway.example' });
    expect(cancel).toHaveFocus();
    await user.tab();
    expect(send).toHaveFocus();
    await user.tab();
    expect(cancel, 'Tab wraps around inside the dialog').toHaveFocus();
    await user.tab({ shift: true });
    expect(send, 'and Shift+Tab too').toHaveFocus();
    await user.keyboard('{Escape}');
    expect(screen.queryByRole('alertdialog'), 'Escape closes it').not.toBeInTheDocument();
    expect(backend.callsOf('llmConfig:updateProvider'), 'Escape is Cancel: nothing is saved').toEqual([]);
    expect(screen.getByTestId('provider-form'), 'the edit form is still open').toBeInTheDocument();
    await waitFor(() => expect(field, 'focus returns to the field the user pressed Enter in').toHaveFocus());

    await user.keyboard('{Enter}');
    dialog = await screen.findByRole('alertdialog', { name: 'Send your keys to gateway.example?' });
    await user.tab();
    expect(within(dialog).getByRole('button', { name: 'Send keys to gateway.example' })).toHaveFocus();
    await user.keyboard('{Enter}');
    await waitFor(() => expect(screen.queryByTestId('provider-form')).not.toBeInTheDocument());
    expect(backend.callsOf('llmConfig:updateProvider')).toEqual([{ id: 'openai', baseUrl: 'https://gateway.example/v1', confirmHostChange: true }]);
  });
});
