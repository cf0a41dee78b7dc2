// Providers with no key, in the real window (issue 45, points 4, 10 and 11): a built-in provider
// with no key at all is not asked, and the reply says it has none with a way to add one (not
// "Could not connect"); Local (Ollama, keyless by design) that does not answer is named with its
// address; a request Local answered without a key is "Without a key" on the Usage page, not the
// provider-level key it does not have; a model name two providers list says on the Local API
// page which of them answers it, and `GET /v1/models` says so in `owned_by`. Axe-clean, in light.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { By, freePort, launchApp, startFakeProvider } from './harness.mjs';
import { assertAccessible, assistantMessages, click, fresh, openChat, send, textOf, waitFor } from './steps.mjs';

const GATEWAY_KEY = 'sk-fake-GATEWAY00000-0001';

/** Opens the chat `chatId` from the list (reloaded by leaving Chat and coming back). */
async function reopenChat(app, chatId) {
  await click(app, 'nav-settings');
  await click(app, 'nav-chat');
  await openChat(app, chatId);
  await app.find('composer-input');
}

async function newChat(app, providerId, model) {
  const chat = await app.invoke('chat:create', { providerId, model, title: `On ${providerId}` });
  assert.ok(chat.ok, JSON.stringify(chat.error));
  await reopenChat(app, chat.value.id);
  return chat.value.id;
}

const errorText = (app) => waitFor(app, async () => textOf(await app.find('message-error-text')), (t) => t.length > 0, 'the reply fails');

describe('providers with no key, in the real window', () => {
  let app;
  let fake;

  before(async () => {
    fake = await startFakeProvider();
    app = await launchApp();
    await app.find('app-shell');
  });
  after(async () => {
    await app?.stop();
    fake?.stop();
  });

  it('says OpenAI has no API keys, with a way to add one, instead of sending a request without one', async () => {
    const before = (await fake.requests()).length;
    await newChat(app, 'openai');
    await send(app, 'Hello OpenAI');
    assert.equal(await errorText(app), 'OpenAI has no API keys: add one in Settings → Providers.');
    assert.equal((await fake.requests()).length, before, 'nothing went anywhere');
    await app.find('chat-open-settings');
    await assertAccessible(app, 'the chat with the no-keys reply', '[data-testid="chat-page"]');
    await app.screenshot('chat-no-keys-light');
    await click(app, 'chat-open-settings');
    await app.find('providers-section');
    const current = await fresh(async () => (await app.find('provider-openai')).getAttribute('aria-current'));
    assert.equal(current, 'true', 'Settings → Providers opens on OpenAI, where its key goes');
    await app.screenshot('settings-providers-openai-no-keys-light');
  });

  it('names Ollama and its address when Local, which needs no key, does not answer', async () => {
    const port = await freePort();
    const address = `http://127.0.0.1:${port}/v1`;
    const moved = await app.invoke('llmConfig:updateProvider', { id: 'local', baseUrl: address });
    assert.ok(moved.ok, JSON.stringify(moved.error));
    await newChat(app, 'local', 'llama3.2');
    await send(app, 'Hello Ollama');
    assert.equal(
      await errorText(app),
      `Ollama does not answer at ${address}: Local needs no key, but its server must be running. Start it, or choose another provider.`,
    );
    assert.deepEqual(await app.driver.findElements(By.css('[data-testid="chat-open-settings"]')), [], 'no key to add');
    await app.screenshot('chat-ollama-down-light');
  });

  it('shows what Local answered without a key as "Without a key" on the Usage page', async () => {
    const moved = await app.invoke('llmConfig:updateProvider', { id: 'local', baseUrl: `${fake.url}/v1` });
    assert.ok(moved.ok, JSON.stringify(moved.error));
    await fake.script('', [], { kind: 'text', chunks: ['Hello', ' without a key'] });
    await newChat(app, 'local', 'llama3.2');
    await send(app, 'Hello again');
    await waitFor(app, () => assistantMessages(app), (r) => r.at(-1)?.status === 'complete', 'Local answers');
    await click(app, 'nav-usage');
    const table = await app.find('usage-key-table');
    const rows = await waitFor(
      app,
      () => fresh(async () => Promise.all((await table.findElements(By.css('[data-testid="usage-key-row"]'))).map(async (row) => (await Promise.all((await row.findElements(By.css('th, td'))).slice(0, 3).map(textOf))).join(' | ')))),
      (r) => r.length > 0,
      'the keys table lists what was sent',
    );
    assert.ok(rows.some((r) => r.startsWith('Local | Without a key | ')), `Local's requests went without a key: ${rows}`);
    assert.ok(!rows.some((r) => r.startsWith('Local | Provider key')), `not under a provider key Local does not have: ${rows}`);
    await assertAccessible(app, 'the Usage page', '[data-testid="usage-page"]');
    await app.screenshot('usage-without-a-key-light');
  });

  it('says on the Local API page and in GET /v1/models which provider answers a model two list', async () => {
    const gateway = await app.invoke('llmConfig:addProvider', { name: 'Gateway', kind: 'openai', baseUrl: `${fake.url}/v1`, models: ['llama3.2'] });
    assert.ok(gateway.ok, JSON.stringify(gateway.error));
    const key = await app.invoke('llmConfig:addApiKey', { providerId: gateway.value.id, apiKey: GATEWAY_KEY });
    assert.ok(key.ok, JSON.stringify(key.error));
    const port = await freePort();
    const on = await app.invoke('localApi:configure', { enabled: true, port });
    assert.ok(on.ok, JSON.stringify(on.error));
    await click(app, 'nav-settings');
    await click(app, 'settings-localApi');
    const shared = await waitFor(app, async () => textOf(await app.find('local-api-shared-models')), (t) => t.length > 0, 'the shared models are listed');
    assert.match(shared, /llama3\.2 goes to Local; Gateway lists it too \(ask for Gateway\/llama3\.2\)\./);
    await app.driver.executeScript('document.querySelector(\'[data-testid="local-api-shared-models"]\').scrollIntoView({ block: "center" })');
    await assertAccessible(app, 'the Local API page', '[data-testid="local-api-section"]');
    await app.screenshot('settings-local-api-shared-models-light');

    const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: on.value.token, maxRetries: 0 });
    const listed = (await client.models.list()).data.filter((m) => m.id.endsWith('llama3.2')).map((m) => `${m.id} by ${m.owned_by}`);
    assert.deepEqual(listed, ['llama3.2 by Local', 'Gateway/llama3.2 by Gateway'], 'owned_by names who answers; the other is listed as it is asked for');
  });
});
