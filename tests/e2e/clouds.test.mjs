// A cloud's keys in the real window: an Azure OpenAI provider added through the dialog by its
// name, refused at the base URL until RESOURCE is a resource's address (here the fake, standing
// in for the resource on loopback, under Azure's /openai/v1), its deployment as the model, and a
// chat answered through it with the resource's key.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { launchApp, startFakeProvider } from './harness.mjs';
import { assertAccessible, assistantMessages, click, gone, keyRow, retype, selectByText, send, textOf, waitFor } from './steps.mjs';

const KEY = 'azure-e2e-key-0123456789abcdef0123456789abcdef';

/** Clicks `testId` once it can be clicked (the page settles after a dialog closes). */
async function clickWhenReady(app, testId) {
  await waitFor(
    app,
    async () => {
      try {
        const element = await app.find(testId);
        await app.driver.executeScript('arguments[0].scrollIntoView({ block: "center" })', element);
        await element.click();
        return true;
      } catch {
        return false;
      }
    },
    (clicked) => clicked,
    `${testId} can be clicked`,
  );
}
const DEPLOYMENT = 'gpt-4o-prod';

describe('an Azure OpenAI provider in the real window', () => {
  let app;
  let fake;

  before(async () => {
    fake = await startFakeProvider();
    await fake.models([DEPLOYMENT]);
    app = await launchApp();
    await app.find('app-shell');
  });
  after(async () => {
    await app?.stop();
    fake?.stop();
  });

  it('is added by its name, and its base URL must name the resource', async () => {
    await click(app, 'nav-settings');
    await click(app, 'settings-providers');
    await click(app, 'add-provider');
    await (await app.find('provider-name-input')).sendKeys('Contoso Azure');
    await selectByText(app, 'provider-kind-select', 'Azure OpenAI');
    const baseUrl = await app.find('provider-baseurl-input');
    assert.equal(await baseUrl.getAttribute('value'), 'https://RESOURCE.openai.azure.com/openai/v1', 'the shape, to fill in');
    await (await app.find('provider-models-input')).sendKeys(DEPLOYMENT);
    await click(app, 'add-provider-form-submit');
    const error = await app.find('provider-baseurl-error');
    assert.match(await textOf(error), /Azure OpenAI resource’s address: https:\/\/RESOURCE\.openai\.azure\.com\/openai\/v1/);
    assert.equal(await (await app.find('provider-baseurl-input')).getAttribute('aria-invalid'), 'true');
    await assertAccessible(app, 'the dialog with the base URL refused', '[data-testid="add-provider-dialog"]');
    await retype(await app.find('provider-baseurl-input'), `${fake.url}/openai/v1`);
    await clickWhenReady(app, 'add-provider-form-submit');
    await gone(app, 'add-provider-dialog');
    const stored = (await app.invoke('llmConfig:getProviders')).value.find((p) => p.name === 'Contoso Azure');
    assert.deepEqual([stored.kind, stored.models], ['azure', [DEPLOYMENT]]);
    await clickWhenReady(app, 'add-key');
    await (await app.find('add-key-apikey-input')).sendKeys(KEY);
    await (await app.find('add-key-label-input')).sendKeys('resource key');
    await click(app, 'add-key-submit');
    await gone(app, 'add-key-dialog');
    await keyRow(app, 'resource key');
  });

  it('chats with the deployment, the resource key as a bearer', async () => {
    await clickWhenReady(app, 'nav-chat');
    await clickWhenReady(app, 'chat-new');
    await selectByText(app, 'new-chat-provider-select', 'Contoso Azure');
    await waitFor(app, async () => (await app.find('new-chat-model-status')).getAttribute('data-state'), (s) => s === 'loaded', 'the deployments are listed');
    await click(app, 'new-chat-submit');
    await gone(app, 'new-chat-dialog');
    await send(app, 'Hello Azure');
    await gone(app, 'streaming-reply');
    const [reply] = await assistantMessages(app);
    assert.equal(reply.status, 'complete');
    assert.equal(await textOf(await app.find('message-key')), 'Key: resource key');
    const seen = await fake.requests();
    const chat = seen.find((s) => s.path.endsWith('chat/completions'));
    assert.deepEqual([chat.key, chat.model], [KEY, DEPLOYMENT], 'the deployment as the model, the key as a bearer');
    assert.ok(!(await app.driver.getPageSource()).includes(KEY), 'the key is not in the page');
  });
});
