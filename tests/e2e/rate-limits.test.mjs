// The pool reading the provider's rate limits, in the real window against the fake provider,
// which enforces and announces a real window on key A (2 requests per 30 s, each model its own):
// Settings → General sets the longest wait; after a chat the key table says what key A has left
// ("1/2 req · resets in …", counting down); with the window spent, the next reply waits for it
// ("Waiting for a free key… 0:17") instead of being refused, and Stop ends the wait; the key's own
// limits are set through their dialog; with one request at once, a reply waits for the one in
// flight and then answers. Screenshots in light and dark.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Key } from 'selenium-webdriver';
import { By, launchApp, startFakeProvider } from './harness.mjs';
import { assistantMessages, click, fresh, gone, retype, selectByText, send, textOf, waitFor } from './steps.mjs';

const WAIT = 15_000;
const WINDOW_MS = 30_000;
const KEY_A = 'sk-fake-LIMITEDLIMITED-0001';

/** The text inside key A's row for a test id, read afresh (the row re-renders as it counts down). */
function inKeyRow(app, testId) {
  return fresh(async () => {
    const row = await app.driver.findElement(By.css('[data-testid="key-row"]'));
    return textOf(await row.findElement(By.css(`[data-testid="${testId}"]`)));
  });
}

/** Waits until the conversation shows `count` replies (after coming back to the chat, its history loads). */
function showsReplies(app, count) {
  return waitFor(app, () => assistantMessages(app), (replies) => replies.length === count, `the chat shows its ${count} replies`);
}

/** Sends `text` in a chat showing `before` replies, and waits until its reply is saved complete. */
async function chat(app, text, before) {
  await showsReplies(app, before);
  await send(app, text);
  await waitFor(
    app,
    () => assistantMessages(app),
    (replies) => replies.length === before + 1,
    `the reply to ${text} is saved`,
    WINDOW_MS + WAIT,
  );
  const last = (await assistantMessages(app)).at(-1);
  assert.equal(last.status, 'complete', `the reply to ${text} completes`);
}

async function completions(fake) {
  return (await fake.requests()).filter((r) => r.path.endsWith('/chat/completions'));
}

/** Starts a chat with the fake provider and `model` through the New chat dialog. */
async function newChat(app, model) {
  await click(app, 'chat-new');
  await selectByText(app, 'new-chat-provider-select', 'Limited');
  // The dialog asks the provider for its models; a scripted reply set later is then for the chat.
  await waitFor(app, async () => (await app.find('new-chat-model-status')).getAttribute('data-state'), (s) => s === 'loaded', 'the model list is fetched');
  // The model combobox: a typed name is the model (the list below only helps to find one).
  await retype(await app.find('new-chat-model-input'), model);
  await waitFor(app, async () => (await app.find('new-chat-model-input')).getAttribute('value'), (v) => v === model, `${model} is typed`);
  await click(app, 'new-chat-submit');
  await gone(app, 'new-chat-dialog');
}

/** Settings → Providers → the fake provider's pool. */
async function openPool(app, providerId) {
  await click(app, 'nav-settings');
  await click(app, 'settings-providers');
  await click(app, `provider-${providerId}`);
  await app.find('key-row');
}

describe('rate limits read from the provider, in the real window', () => {
  let app;
  let fake;
  let providerId;

  before(async () => {
    fake = await startFakeProvider();
    await fake.limit(KEY_A, 2, WINDOW_MS);
    app = await launchApp();
    await app.find('app-shell');
    const provider = await app.invoke('llmConfig:addProvider', {
      name: 'Limited',
      kind: 'openai',
      baseUrl: `${fake.url}/v1`,
      models: ['fake-model', 'fake-large'],
      defaultModel: 'fake-model',
    });
    assert.ok(provider.ok, `addProvider: ${JSON.stringify(provider.error)}`);
    providerId = provider.value.id;
    const key = await app.invoke('llmConfig:addApiKey', { providerId, apiKey: KEY_A, label: 'key A' });
    assert.ok(key.ok, `addApiKey: ${JSON.stringify(key.error)}`);
  });
  after(async () => {
    await app?.stop();
    fake?.stop();
  });

  it('sets the longest wait for a free key in Settings → General', async () => {
    await click(app, 'nav-settings');
    await click(app, 'settings-general');
    const input = await app.find('max-wait-input');
    assert.equal(await input.getAttribute('value'), '20', 'the backend’s default');
    await retype(input, '40');
    await input.sendKeys(Key.ENTER);
    await waitFor(app, async () => textOf(await app.find('max-wait-status')), (t) => t === 'Saved.', 'the field says it saved');
    const settings = await app.invoke('settings:get');
    assert.equal(settings.value.maxWaitSeconds, 40, 'the backend keeps it');
    await app.screenshot('settings-general-max-wait-light');
  });

  it('shows what key A has left after a chat, counting down to the reset', async () => {
    await click(app, 'nav-chat');
    await newChat(app, 'fake-model');
    await chat(app, 'one', 0);

    await openPool(app, providerId);
    const line = await waitFor(
      app,
      () => inKeyRow(app, 'key-budget-line'),
      (t) => /^1\/2 req · resets in \d+ s$/.test(t),
      'key A shows 1 of 2 requests left',
    );
    const seconds = (text) => Number(/(\d+) s$/.exec(text)[1]);
    await waitFor(app, () => inKeyRow(app, 'key-budget-line'), (t) => seconds(t) < seconds(line), 'the reset counts down');
    await app.screenshot('settings-key-budget-light');
  });

  it('waits for key A’s spent window instead of being refused, and Stop ends the wait', async () => {
    await click(app, 'nav-chat');
    await chat(app, 'two', 1); // the window's last request
    await send(app, 'three');
    const waiting = await waitFor(
      app,
      async () => textOf(await app.find('chat-waiting')),
      (t) => /^Waiting for a free key… 0:\d\d$/.test(t),
      'the reply waits for the window to reset, counting down',
    );
    assert.ok(Number(waiting.slice(-2)) <= WINDOW_MS / 1000, `never longer than the window: ${waiting}`);
    const line = await app.find('chat-waiting');
    assert.equal(await line.getAttribute('role'), 'timer');
    assert.equal(await line.getAttribute('data-until'), 'known', 'the window’s reset is known');
    await app.screenshot('chat-waiting-light');

    await click(app, 'chat-stop');
    await gone(app, 'streaming-reply');
    const last = (await assistantMessages(app)).at(-1);
    assert.equal(last.status, 'stopped', 'Stop ends the wait');
    assert.equal((await completions(fake)).length, 2, 'the waiting reply was never sent upstream');
    assert.equal(await fake.refused(), 0, 'the pool waited: the provider refused nothing');
  });

  it('sets key A’s own limits through its dialog, and shows them in the row', async () => {
    await openPool(app, providerId);
    await click(app, 'key-edit');
    const dialog = await app.find('edit-key-dialog');
    await (await dialog.findElement(By.css('[data-testid="edit-key-rpm-input"]'))).sendKeys('120');
    await (await dialog.findElement(By.css('[data-testid="edit-key-concurrent-input"]'))).sendKeys('1');
    await app.screenshot('settings-key-limits-light');
    await click(app, 'edit-key-submit');
    await gone(app, 'edit-key-dialog');
    const keys = await app.invoke('llmConfig:getApiKeys', { providerId });
    assert.deepEqual([keys.value[0].rpmLimit, keys.value[0].maxConcurrent], [120, 1], 'the backend keeps both');
    await waitFor(app, () => inKeyRow(app, 'key-limits'), (t) => t === 'Your limits: 120/min · 1 at once', 'the row shows them');
  });

  it('in the dark theme, a reply waits for the key in use (one at once), then answers', async () => {
    await click(app, 'settings-general');
    await selectByText(app, 'theme-select', 'Dark');
    await app.screenshot('settings-general-max-wait-dark');
    await openPool(app, providerId);
    await app.screenshot('settings-key-budget-dark');

    // Another model, so its own window has room: only the one-at-once limit can hold a reply back.
    await click(app, 'nav-chat');
    await newChat(app, 'fake-large');
    await fake.script(KEY_A, [{ kind: 'hold', chunks_before: ['Partial'], gate: 'long-reply', chunks_after: [' and the rest.'] }]);
    await send(app, 'long');
    await waitFor(app, async () => textOf(await app.find('streaming-content')), (t) => t === 'Partial', 'the first reply is held on key A');

    await newChat(app, 'fake-large');
    await send(app, 'short');
    const waiting = await waitFor(
      app,
      async () => textOf(await app.find('chat-waiting')),
      (t) => /^Waiting for a key in use to free up… at most 0:\d\d$/.test(t),
      'the second reply waits for key A to be free',
    );
    assert.equal(await (await app.find('chat-waiting')).getAttribute('data-until'), 'busy', `no time is known: ${waiting}`);
    await app.screenshot('chat-waiting-dark');

    await fake.release('long-reply');
    await gone(app, 'streaming-reply', WAIT);
    const last = (await assistantMessages(app)).at(-1);
    assert.equal(last.status, 'complete', 'the waiting reply went once key A was free');
    assert.match(last.text, /Hello from the fake provider\./);
    const large = (await completions(fake)).filter((r) => r.model === 'fake-large');
    assert.equal(large.length, 2, 'one request each, none refused and retried');
    assert.equal(await fake.refused(), 0, 'still nothing refused');
    await app.screenshot('chat-waited-dark');
  });
});
