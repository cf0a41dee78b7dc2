// A chat in the real window against the fake provider: a provider added through Settings, two
// pool keys, a reply streaming in after one failover (429 on key A, answered by key B), Stop on a
// held stream keeping the partial text, a key revoked with 401 shown disabled in Settings, tested
// there (OK) and enabled again, the rate-limited key's cooldown reset there, a retry of the failed
// reply; screenshots in light and dark.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { By, launchApp, startFakeProvider, tempDataDir } from './harness.mjs';
import { assistantMessages, click, fresh, gone, keyRow, retype, selectByText, send, textOf, waitFor } from './steps.mjs';

const WAIT = 15_000;
const KEY_A = 'sk-fake-AAAAAAAAAAAA-0001';
const KEY_B = 'sk-fake-BBBBBBBBBBBB-0002';

/** The text of every element with this test id, read afresh if the page re-renders meanwhile. */
function textsOf(app, testId) {
  return fresh(async () => Promise.all((await app.driver.findElements(By.css(`[data-testid="${testId}"]`))).map(textOf)));
}

async function addKey(app, apiKey, label) {
  await click(app, 'add-key');
  await (await app.find('add-key-apikey-input')).sendKeys(apiKey);
  await (await app.find('add-key-label-input')).sendKeys(label);
  await click(app, 'add-key-submit');
  await gone(app, 'add-key-dialog');
  await keyRow(app, label);
}

describe('a chat in the real window against the fake provider', () => {
  const dataDir = tempDataDir();
  let app;
  let fake;
  let providerId;

  before(async () => {
    fake = await startFakeProvider();
    app = await launchApp({ dataDir });
    await app.find('app-shell');
  });
  after(async () => {
    await app?.stop();
    fake?.stop();
  });

  it('adds a provider pointing at the fake, through Settings', async () => {
    await click(app, 'nav-settings');
    await click(app, 'add-provider');
    await (await app.find('provider-name-input')).sendKeys('Fake');
    await (await app.find('provider-baseurl-input')).sendKeys(`${fake.url}/v1`);
    await (await app.find('provider-models-input')).sendKeys('fake-model, fake-large');
    await selectByText(app, 'provider-default-model-select', 'fake-model');
    await app.screenshot('settings-provider-add-light');
    await click(app, 'add-provider-form-submit');
    await gone(app, 'add-provider-dialog');

    await waitFor(app, async () => textOf(await app.find('provider-base-url')), (t) => t === `${fake.url}/v1`, 'the new provider is shown');
    const providers = await app.invoke('llmConfig:getProviders');
    const stored = providers.value.find((p) => p.name === 'Fake');
    assert.ok(stored, 'the provider is stored');
    assert.deepEqual([stored.kind, stored.models, stored.defaultModel], ['openai', ['fake-model', 'fake-large'], 'fake-model']);
    providerId = stored.id;
  });

  it('adds two keys to its pool', async () => {
    await addKey(app, KEY_A, 'key A');
    await addKey(app, KEY_B, 'key B');
    const keys = await app.invoke('llmConfig:getApiKeys', { providerId });
    assert.deepEqual(keys.value.map((k) => k.label), ['key A', 'key B']);
  });

  it('streams a reply after key A is rate-limited, says so, and shows that key B answered', async () => {
    await click(app, 'nav-chat');
    await click(app, 'chat-new');
    await selectByText(app, 'new-chat-provider-select', 'Fake');
    assert.equal(await (await app.find('new-chat-model-input')).getAttribute('value'), 'fake-model', 'the default model is chosen');
    // The dialog asks the provider for its models (with key A): let that finish before scripting replies.
    await waitFor(app, async () => (await app.find('new-chat-model-status')).getAttribute('data-state'), (s) => s === 'loaded', 'the model list is fetched');
    await app.screenshot('chat-new-light');
    await click(app, 'new-chat-submit');
    await gone(app, 'new-chat-dialog');

    // A long announced wait, so key A is still cooling when Settings is checked below.
    await fake.script(KEY_A, [{ kind: 'status', status: 429, headers: [['retry-after', '600']], message: 'Rate limit reached for key A' }]);
    await fake.script(KEY_B, [{ kind: 'slow', chunks: ['Hello', ' from', ' key', ' B', ' through', ' the', ' pool.'], delay_ms: 120 }]);

    await send(app, 'Hello fake');
    // Streaming: part of the reply is on the page while it is still being written.
    const partial = await waitFor(
      app,
      async () => textOf(await app.driver.findElement(By.css('[data-testid="streaming-content"]'))),
      (t) => t.startsWith('Hello') && t !== 'Hello from key B through the pool.',
      'the reply streams in piece by piece',
    );
    assert.ok(partial.length > 0);
    const notice = await waitFor(app, async () => textOf(await app.find('chat-notice')), (t) => /retried on/.test(t), 'the failover notice');
    assert.match(notice, /^key A was rate-limited \(429\), retried on key B$/, 'a key is named by its label alone');

    await gone(app, 'streaming-reply');
    const [reply] = await assistantMessages(app);
    assert.match(reply.text, /Hello from key B through the pool\./, 'the whole reply is kept');
    assert.equal(await textOf(await app.find('message-key')), 'Key: key B', 'key B answered');
    assert.match(await textOf(await app.find('chat-notice')), /rate-limited \(429\)/, 'the notice stays with the reply');

    const requests = (await fake.requests()).filter((r) => r.path.endsWith('/chat/completions'));
    assert.deepEqual(requests.map((r) => [r.key, r.model, r.stream]), [[KEY_A, 'fake-model', true], [KEY_B, 'fake-model', true]], 'A was tried first, then B');
    assert.match(await textOf(await app.find('chat-item-title')), /Hello fake/, 'the chat is titled after its first message');
    await app.screenshot('chat-light');
  });

  it('stops a held reply with the Stop button and keeps the partial text', async () => {
    await fake.script(KEY_B, [{ kind: 'hold', chunks_before: ['Partial ', 'answer'], gate: 'stop-me', chunks_after: [' never seen'] }]);
    await send(app, 'Tell me a long story');
    await waitFor(
      app,
      async () => textOf(await app.driver.findElement(By.css('[data-testid="streaming-content"]'))),
      (t) => t === 'Partial answer',
      'the held reply shows what came so far',
    );
    await app.screenshot('chat-streaming-light');
    await click(app, 'chat-stop');
    await app.find('message-stopped');
    const replies = await assistantMessages(app);
    const last = replies.at(-1);
    assert.equal(last.status, 'stopped');
    assert.match(last.text, /Partial answer/, 'the partial text is kept');
    assert.doesNotMatch(last.text, /never seen/);
    await fake.release('stop-me');
    const stored = await app.invoke('chat:getMessages', { chatId: await (await app.find('chat-item')).getAttribute('data-chat-id') });
    assert.deepEqual(stored.value.at(-1).content, 'Partial answer', 'saved as stopped with its partial text');
    assert.equal(stored.value.at(-1).status, 'stopped');
  });

  it('shows a reply that failed because key B was revoked (401), with a way to Settings', async () => {
    // Revoked: refused whatever it asks, its model list included (asked before it is disabled).
    await fake.script(KEY_B, [], { kind: 'status', status: 401, message: 'Incorrect API key provided' });
    await fake.script(KEY_A, [], { kind: 'status', status: 429, message: 'still rate-limited' });
    await send(app, 'Are you there?');
    const error = await app.find('message-error');
    assert.match(await textOf(error), /The reply failed:/, 'the error is shown in place');
    const notices = await textsOf(app, 'chat-notice');
    assert.ok(notices.some((n) => /^key B was rejected \(401\) and disabled/.test(n)), `the revoked key is named: ${notices}`);
    await app.find('chat-retry');
    await app.screenshot('chat-error-light');
    await click(app, 'chat-open-settings');
    await app.find('providers-section');
  });

  it('shows the revoked key disabled in Settings; Test says OK and offers Enable', async () => {
    await click(app, `provider-${providerId}`);
    const row = await keyRow(app, 'key B');
    await waitFor(
      app,
      async () => textOf(await (await keyRow(app, 'key B')).findElement(By.css('[data-testid="key-state"]'))),
      (t) => /^Disabled after 401 at \d\d:\d\d$/.test(t),
      'key B is shown disabled after the 401',
    );
    assert.equal(await row.findElement(By.css('[data-testid="key-enabled"]')).getAttribute('aria-checked'), 'false');

    // The user replaced the key at the provider: it answers again.
    await fake.script(KEY_B, [], { kind: 'text', chunks: ['Hello', ' again'] });
    const probesBefore = (await fake.requests()).filter((r) => r.path.endsWith('/models')).length;
    await (await keyRow(app, 'key B')).findElement(By.css('[data-testid="key-test"]')).click();
    const result = await waitFor(
      app,
      async () => textOf(await (await keyRow(app, 'key B')).findElement(By.css('[data-testid="key-test-result"]'))),
      (t) => /^OK · \d+ ms$/.test(t),
      'the test reports OK with its latency',
    );
    assert.match(result, /^OK · \d+ ms$/);
    await app.screenshot('settings-key-test-light');
    await (await keyRow(app, 'key B')).findElement(By.css('[data-testid="key-enable"]')).click();
    await waitFor(
      app,
      async () => (await app.invoke('llmConfig:getApiKeys', { providerId })).value.find((k) => k.label === 'key B').enabled,
      (enabled) => enabled === true,
      'key B is enabled again',
    );
    // (The new-chat dialog asked for the model list before, with key A: only what Test sent counts.)
    const probes = (await fake.requests()).filter((r) => r.path.endsWith('/models')).slice(probesBefore);
    assert.deepEqual(probes.map((r) => r.key), [KEY_B], 'the test asked the provider with key B only');
  });

  it('shows key A cooling down after its 429, with a countdown, and resets its cooldown', async () => {
    const stateOfA = async () => (await keyRow(app, 'key A')).findElement(By.css('[data-testid="key-state"]'));
    await waitFor(app, async () => (await stateOfA()).getAttribute('data-state'), (s) => s === 'cooling', 'key A is cooling');
    assert.match(await textOf(await stateOfA()), /\d+:\d\d/, 'the badge counts down the time left');
    await (await keyRow(app, 'key A')).findElement(By.css('[data-testid="key-reset-cooldown"]')).click();
    await waitFor(app, async () => (await stateOfA()).getAttribute('data-state'), (s) => s === 'active', 'key A is active again');
    const status = await app.invoke('llmConfig:getPoolStatus', { providerId });
    assert.equal(status.value.keys.find((k) => k.label === 'key A').state, 'active', 'the pool agrees');
  });

  it('retries the failed reply, now answered by key B', async () => {
    await click(app, 'nav-chat');
    await click(app, 'chat-retry');
    await gone(app, 'message-error');
    await waitFor(app, async () => (await assistantMessages(app)).at(-1), (m) => m?.status === 'complete', 'the retried reply completes');
    const keys = await textsOf(app, 'message-key');
    assert.equal(keys.at(-1), 'Key: key B');
  });

  it('follows the OS dark theme', async () => {
    await app.stop();
    app = await launchApp({ dataDir, env: { GTK_THEME: 'Adwaita:dark' } });
    await app.find('chat-page');
    await waitFor(app, async () => (await assistantMessages(app)).length, (n) => n >= 3, 'the saved conversation loads');
    const dark = await app.driver.executeScript("return matchMedia('(prefers-color-scheme: dark)').matches");
    assert.equal(dark, true, 'GTK dark preference reaches the page');
    await app.screenshot('chat-dark');
  });
});
