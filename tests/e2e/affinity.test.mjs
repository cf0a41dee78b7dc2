// A chat keeps its key, so the provider's prompt cache stays warm, in the real window: a chat the
// user leaves for another and comes back to goes on with the key it had, and so does a chat
// after the app restarts. Each reply shows what the cache served ("Cached 5 of 11 input
// tokens"), and Settings shows each key's requests and tokens of today from the usage ledger,
// also after the restart.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { By, launchApp, startFakeProvider, tempDataDir } from './harness.mjs';
import { assistantMessages, click, fresh, gone, openChat, selectByText, send, textOf, waitFor } from './steps.mjs';

const KEY_A = 'sk-fake-AFFINITYAAAA-0001';
const KEY_B = 'sk-fake-AFFINITYBBBB-0002';

async function newChat(app) {
  await click(app, 'chat-new');
  await selectByText(app, 'new-chat-provider-select', 'Fake');
  await click(app, 'new-chat-submit');
  await gone(app, 'new-chat-dialog');
}

/** Sends a message and waits for its reply; returns which key the page says answered. */
async function ask(app, text) {
  const before = (await assistantMessages(app)).length;
  await send(app, text);
  await waitFor(app, () => assistantMessages(app), (r) => r.length === before + 1 && r.at(-1).status === 'complete', `the reply to "${text}"`);
  await gone(app, 'streaming-reply');
  return fresh(async () => textOf((await app.driver.findElements(By.css('[data-testid="message-key"]'))).at(-1)));
}

async function selectedChatId(app) {
  return fresh(async () => (await app.driver.findElement(By.css('[data-testid="chat-item"][aria-current="true"]'))).getAttribute('data-chat-id'));
}

/** Each key row's label and its "today" line, as Settings → Providers shows them. */
async function todayLines(app, providerId) {
  await click(app, 'nav-settings');
  await click(app, `provider-${providerId}`);
  return fresh(async () =>
    Promise.all(
      (await app.driver.findElements(By.css('[data-testid="key-row"]'))).map(async (row) => [
        await textOf(await row.findElement(By.css('[data-testid="key-label"]'))),
        await textOf(await row.findElement(By.css('[data-testid="key-today"]'))),
      ]),
    ),
  );
}

describe('a chat keeps its key when the user leaves it and when the app restarts', () => {
  const dataDir = tempDataDir();
  let app;
  let fake;
  let providerId;
  let first;
  let firstKey;

  before(async () => {
    fake = await startFakeProvider();
    app = await launchApp({ dataDir });
    await app.find('app-shell');
    const added = await app.invoke('llmConfig:addProvider', { name: 'Fake', kind: 'openai', baseUrl: `${fake.url}/v1`, models: ['fake-model'], defaultModel: 'fake-model' });
    providerId = added.value.id;
    await app.invoke('llmConfig:addApiKey', { providerId, apiKey: KEY_A, label: 'key A' });
    await app.invoke('llmConfig:addApiKey', { providerId, apiKey: KEY_B, label: 'key B' });
  });
  after(async () => {
    await app?.stop();
    fake?.stop();
  });

  it('shows what each reply cost and how much of its prompt the cache served', async () => {
    await click(app, 'nav-chat');
    await newChat(app);
    first = await selectedChatId(app);
    firstKey = await ask(app, 'Hello from the first chat');
    assert.match(firstKey, /^Key: key [AB]$/);
    // The fake reports 11 prompt tokens, 5 of them cached, and one output token per piece.
    const usage = await textOf(await app.find('message-usage'));
    assert.match(usage, /^Cached 5 of 11 input tokens, \d+ out$/);
  });

  it('goes on with the same key after the user opened another chat and came back', async () => {
    await newChat(app);
    const second = await selectedChatId(app);
    assert.notEqual(second, first);
    const secondKey = await ask(app, 'Hello from the second chat');
    assert.notEqual(secondKey, firstKey, 'round robin gives the second chat the other key');

    await openChat(app, first);
    assert.equal(await ask(app, 'Back in the first chat'), firstKey, 'coming back keeps the key, and its warm cache');
    await openChat(app, second);
    assert.equal(await ask(app, 'Back in the second chat'), secondKey);

    const keys = (await fake.requests()).filter((r) => r.path.endsWith('/chat/completions')).map((r) => r.key);
    assert.equal(keys.length, 4, 'one request per message, no failover');
    assert.equal(new Set(keys).size, 2);
  });

  it('shows today’s requests and tokens per key in Settings, from the ledger', async () => {
    // Two replies per key, 11 input tokens each plus the output pieces.
    const lines = await waitFor(
      app,
      () => todayLines(app, providerId),
      (rows) => rows.length === 2 && rows.every(([, line]) => /^Today: 2 requests \d+ tokens$/.test(line)),
      'each key shows its two requests of today',
    );
    for (const [, line] of lines) assert.ok(Number(line.match(/(\d+) tokens/)[1]) >= 22, `${line}: at least the 2 × 11 input tokens`);
    await app.screenshot('settings-keys-today-light');
  });

  it('keeps every chat on its key after a restart, and today’s figures with it', async () => {
    await app.stop();
    app = await launchApp({ dataDir });
    await app.find('app-shell');
    const lines = await waitFor(app, () => todayLines(app, providerId), (rows) => rows.length === 2, 'the keys are listed after the restart');
    assert.deepEqual(lines.map(([, line]) => line.replace(/ \d+ tokens$/, '')), ['Today: 2 requests', 'Today: 2 requests'], 'the counts come from the ledger, not from memory');

    await click(app, 'nav-chat');
    await openChat(app, first);
    assert.equal(await ask(app, 'After the restart'), firstKey, 'the binding was kept across the restart');
  });
});
