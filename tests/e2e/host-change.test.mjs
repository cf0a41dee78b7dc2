// Where a provider's keys may go, in the real window: a plain http:// base URL to a public host
// is refused at the field with the reason; moving a provider that holds keys to another host asks
// first, names the host and the keys, and saves only on "Send keys to <host>". Screenshots of the
// question in light and dark theme.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Key } from 'selenium-webdriver';
import { By, launchApp, tempDataDir, until } from './harness.mjs';
import { fresh, gone, retype } from './steps.mjs';

const WAIT = 10_000;
const ORIGINAL = 'https://api.openai.com/v1';
const MOVED = 'https://gateway.example/v1';

async function baseUrlOf(app, providerId = 'openai') {
  const result = await app.invoke('llmConfig:getProviders');
  assert.ok(result.ok, `getProviders: ${JSON.stringify(result.error)}`);
  return result.value.find((p) => p.id === providerId).baseUrl;
}

async function focusedTestId(app) {
  return (await app.driver.switchTo().activeElement()).getAttribute('data-testid');
}

/** Settings → Providers → OpenAI → Edit, with `url` typed as its base URL, then Save. */
async function saveBaseUrl(app, url) {
  // WebKitWebDriver may find an element going away while it lists them: look again then.
  if ((await fresh(() => app.driver.findElements(By.css('[data-testid="provider-form"]')))).length === 0) {
    await (await app.find('provider-edit')).click();
  }
  await retype(await app.find('provider-baseurl-input'), url);
  await (await app.find('provider-form-submit')).click();
}

async function openProviders(app) {
  await app.find('app-shell');
  await (await app.find('nav-settings')).click();
  await app.find('api-key-pool');
}

describe('where a provider’s keys may go, in the real window', () => {
  const dataDir = tempDataDir();
  let app;

  before(async () => {
    app = await launchApp({ dataDir });
    await app.find('app-shell');
    for (const [apiKey, label] of [['sk-e2e-host-PPPPPPPPPPPPPPPP1111', 'prod'], ['sk-e2e-host-UUUUUUUUUUUUUUUU2222', undefined]]) {
      const result = await app.invoke('llmConfig:addApiKey', { providerId: 'openai', apiKey, ...(label ? { label } : {}) });
      assert.ok(result.ok, `a pool key is saved: ${JSON.stringify(result.error)}`);
    }
    await openProviders(app);
  });
  after(async () => app?.stop());

  it('says at the field why plain http to a public host is refused, and saves nothing', async () => {
    await saveBaseUrl(app, 'http://api.example.com');
    const error = await app.find('provider-baseurl-error');
    assert.match(await error.getText(), /unencrypted over the internet/, 'the reason is at the field');
    const input = await app.find('provider-baseurl-input');
    assert.equal(await input.getAttribute('aria-invalid'), 'true', 'the field is marked invalid');
    assert.equal(await focusedTestId(app), 'provider-baseurl-input', 'focus goes to it');
    await app.screenshot('settings-provider-plain-http-light');
    assert.equal(await baseUrlOf(app), ORIGINAL, 'nothing was saved');
  });

  it('asks before sending the keys to another host; Cancel leaves the base URL as it was', async () => {
    await saveBaseUrl(app, MOVED);
    const dialog = await app.find('host-change-dialog');
    assert.equal(await dialog.getAttribute('role'), 'alertdialog', 'an alert dialog');
    const title = await app.driver.findElement(By.id(await dialog.getAttribute('aria-labelledby')));
    assert.equal(await title.getText(), 'Send your keys to gateway.example?', 'labelled by its title, naming the host');
    assert.match(await dialog.getText(), /from https:\/\/api\.openai\.com\/v1 to https:\/\/gateway\.example\/v1/, 'from where to where');
    const keys = await (await app.find('host-change-keys')).findElements(By.css('li'));
    assert.deepEqual(await Promise.all(keys.map((k) => k.getText())), ['prod', 'sk-…2222'], 'the keys that would be sent');
    assert.equal(await (await app.find('host-change-confirm')).getText(), 'Send keys to gateway.example');
    assert.equal(await focusedTestId(app), 'host-change-cancel', 'Cancel has the focus');
    assert.equal(await baseUrlOf(app), ORIGINAL, 'nothing is saved while the question is open');
    await app.screenshot('settings-provider-host-change-light');

    await (await app.find('host-change-cancel')).click();
    await gone(app, 'host-change-dialog');
    assert.equal(await baseUrlOf(app), ORIGINAL, 'Cancel saves nothing');
    assert.equal(await (await app.find('provider-baseurl-input')).getAttribute('value'), MOVED, 'the form stays as typed');
  });

  it('answers Escape as Cancel, from the keyboard alone', async () => {
    const input = await app.find('provider-baseurl-input');
    await input.click();
    await input.sendKeys(Key.ENTER);
    await app.find('host-change-dialog');
    await app.driver.wait(async () => (await focusedTestId(app)) === 'host-change-cancel', WAIT, 'focus moves into the dialog');
    await app.driver.switchTo().activeElement().sendKeys(Key.TAB);
    assert.equal(await focusedTestId(app), 'host-change-confirm', 'Tab reaches the send button');
    await app.driver.switchTo().activeElement().sendKeys(Key.TAB);
    assert.equal(await focusedTestId(app), 'host-change-cancel', 'and wraps around inside the dialog');
    await app.driver.switchTo().activeElement().sendKeys(Key.ESCAPE);
    await gone(app, 'host-change-dialog');
    assert.equal(await baseUrlOf(app), ORIGINAL, 'Escape saves nothing');
    await app.driver.wait(async () => (await focusedTestId(app)) === 'provider-baseurl-input', WAIT, 'focus returns to the field');
  });

  it('moves the provider after “Send keys to <host>” (dark theme)', async () => {
    await app.stop();
    app = await launchApp({ dataDir, env: { GTK_THEME: 'Adwaita:dark' } });
    await openProviders(app);
    await saveBaseUrl(app, MOVED);
    await app.find('host-change-dialog');
    const dark = await app.driver.executeScript("return matchMedia('(prefers-color-scheme: dark)').matches");
    assert.equal(dark, true, 'the dark theme is on');
    await app.screenshot('settings-provider-host-change-dark');

    await (await app.find('host-change-confirm')).click();
    await gone(app, 'host-change-dialog');
    await gone(app, 'provider-form');
    assert.equal(await baseUrlOf(app), MOVED, 'the base URL moved');
    const shown = await app.driver.wait(until.elementLocated(By.css('[data-testid="provider-base-url"]')), WAIT);
    assert.equal(await shown.getText(), MOVED, 'and the page shows it');
  });
});
