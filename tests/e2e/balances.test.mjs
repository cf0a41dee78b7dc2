// Prepaid keys in the real window: a DeepSeek provider added through the dialog by its name (its
// base URL comes with the kind), pointed at the fake, which answers DeepSeek's balance read; each
// key's Test reads its balance, the row shows it in its currency, a key with nothing left rests as
// out of credit; the table is clean under axe-core in both themes; no key reaches the page.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { By, launchApp, startFakeProvider } from './harness.mjs';
import { assertAccessible, click, fresh, gone, keepPreferences, keyRow, retype, selectByText, textOf, waitFor } from './steps.mjs';

const EMPTY = 'sk-e2e0000000000000000000000000001';
const FULL = 'sk-e2e0000000000000000000000000002';

function inRow(app, label, testId) {
  return fresh(async () => {
    const found = await (await keyRow(app, label)).findElements(By.css(`[data-testid="${testId}"]`));
    return found.length === 0 ? '' : textOf(found[0]);
  });
}

async function addKey(app, apiKey, label) {
  await click(app, 'add-key');
  await (await app.find('add-key-apikey-input')).sendKeys(apiKey);
  await (await app.find('add-key-label-input')).sendKeys(label);
  await click(app, 'add-key-submit');
  await gone(app, 'add-key-dialog');
  await keyRow(app, label);
}

describe('a prepaid vendor’s keys show what they have left, in the real window', () => {
  let app;
  let fake;
  let providerId;

  before(async () => {
    fake = await startFakeProvider();
    await fake.balance(EMPTY, 0, 'USD');
    await fake.balance(FULL, 42.5, 'CNY');
    app = await launchApp();
    await app.find('app-shell');
  });
  after(async () => {
    await app?.stop();
    fake?.stop();
  });

  it('adds DeepSeek by its name: the base URL comes with the kind', async () => {
    await click(app, 'nav-settings');
    await click(app, 'settings-providers');
    await click(app, 'add-provider');
    await (await app.find('provider-name-input')).sendKeys('Fake DeepSeek');
    await selectByText(app, 'provider-kind-select', 'DeepSeek');
    const baseUrl = await app.find('provider-baseurl-input');
    assert.equal(await baseUrl.getAttribute('value'), 'https://api.deepseek.com', 'DeepSeek’s own base URL, filled in');
    await retype(baseUrl, fake.url);
    await (await app.find('provider-models-input')).sendKeys('deepseek-chat');
    await click(app, 'add-provider-form-submit');
    await gone(app, 'add-provider-dialog');
    const stored = (await app.invoke('llmConfig:getProviders')).value.find((p) => p.name === 'Fake DeepSeek');
    assert.equal(stored.kind, 'deepseek');
    providerId = stored.id;
    await addKey(app, FULL, 'full');
    await addKey(app, EMPTY, 'empty');
  });

  it('a key’s Test reads its balance: the row shows it in its currency', async () => {
    await fresh(async () => (await (await keyRow(app, 'full')).findElement(By.css('[data-testid="key-test"]'))).click());
    await waitFor(app, () => inRow(app, 'full', 'key-balance'), (t) => /^Balance CN¥42\.50$/.test(t), 'the balance in yuan');
    assert.match(await inRow(app, 'full', 'key-state'), /Active/i);
  });

  it('a key with nothing left rests as out of credit, and says so', async () => {
    await fresh(async () => (await (await keyRow(app, 'empty')).findElement(By.css('[data-testid="key-test"]'))).click());
    await waitFor(app, () => inRow(app, 'empty', 'key-balance'), (t) => t === 'Balance $0.00 · out of credit', 'nothing left');
    await waitFor(app, () => inRow(app, 'empty', 'key-state'), (t) => /out of credit/i.test(t), 'the state says it rests');
    const status = (await app.invoke('llmConfig:getPoolStatus', { providerId })).value;
    assert.deepEqual(
      status.keys.map((k) => [k.label, k.state, k.balance?.amount]),
      [['full', 'active', 42.5], ['empty', 'exhausted', 0]],
    );
    const html = await app.driver.getPageSource();
    assert.ok(!html.includes(EMPTY) && !html.includes(FULL), 'no key in the page');
  });

  it('is clean under axe-core in both themes', async () => {
    await assertAccessible(app, 'the key table with balances (light)', '[data-testid="api-key-pool"]');
    await keepPreferences(app, { theme: 'dark' });
    await click(app, 'nav-settings');
    await click(app, 'settings-providers');
    await click(app, `provider-${providerId}`);
    await waitFor(app, () => inRow(app, 'empty', 'key-balance'), (t) => t.includes('out of credit'), 'the reading survives a reload');
    await assertAccessible(app, 'the key table with balances (dark)', '[data-testid="api-key-pool"]');
    await keepPreferences(app, { theme: 'light' });
  });
});
