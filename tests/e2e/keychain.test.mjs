// Keys at rest in the system keychain, in the real window. With a Secret Service (gnome-keyring
// in a private D-Bus session, unlocked with a throwaway password) Settings says keys are kept in
// the keychain, a key added there answers a chat, and neither the database nor its WAL holds it
// while `secret-tool` finds it. With no session bus, Settings shows the notice that keys stay in
// the database, and why.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Key } from 'selenium-webdriver';
import { startSessionBus } from './desktop.mjs';
import { By, launchApp, startFakeProvider } from './harness.mjs';
import { textOf } from './steps.mjs';

const WAIT = 15_000;
const KEY = 'sk-e2e-KEYCHAINKEYCHAINKEYCHAIN-0001';

/** A private session bus with an unlocked gnome-keyring on it. Returns { env, stop }. */
async function startKeyring() {
  const home = mkdtempSync(join(tmpdir(), 'keypool-e2e-keyring-'));
  mkdirSync(join(home, 'run'), { mode: 0o700 });
  const base = { ...process.env, HOME: home, XDG_RUNTIME_DIR: join(home, 'run'), XDG_DATA_HOME: join(home, 'data') };
  const bus = await startSessionBus(base);
  const env = { ...base, DBUS_SESSION_BUS_ADDRESS: bus.address };
  // --unlock reads the password from stdin and creates the login keyring with it; the daemon forks.
  execFileSync('gnome-keyring-daemon', ['--unlock', '--components=secrets'], { env, input: 'keypool-e2e-password', stdio: ['pipe', 'ignore', 'ignore'] });
  execFileSync('gnome-keyring-daemon', ['--start', '--components=secrets'], { env, stdio: 'ignore' });
  return {
    env,
    secretToolUsers() {
      // secret-tool prints an item's secret on stdout and its attributes on stderr.
      const found = spawnSync('secret-tool', ['search', '--all', 'service', 'dev.keypool.desktop'], { env, encoding: 'utf8' });
      return [...`${found.stdout}${found.stderr}`.matchAll(/^attribute\.username = (.*)$/gm)].map((m) => m[1]);
    },
    stop() {
      // The keyring daemon leaves with its bus.
      bus.stop();
      rmSync(home, { recursive: true, force: true });
    },
  };
}

async function openProviders(app) {
  await (await app.find('nav-settings')).click();
  await (await app.find('settings-providers')).click();
  return app.find('keychain-status');
}

function filesAtRest(dataDir) {
  return readdirSync(dataDir)
    .filter((name) => name.startsWith('keypool.sqlite3'))
    .map((name) => ({ name, bytes: readFileSync(join(dataDir, name)) }));
}

describe('keys in the system keychain, in the real window', () => {
  let keyring;
  let fake;
  let app;

  before(async () => {
    keyring = await startKeyring();
    fake = await startFakeProvider();
    app = await launchApp({ env: { DBUS_SESSION_BUS_ADDRESS: keyring.env.DBUS_SESSION_BUS_ADDRESS } });
    await app.find('app-shell');
  });
  after(async () => {
    await app?.stop();
    fake?.stop();
    keyring?.stop();
  });

  it('says keys are kept in the keychain, and a key kept there answers a chat', async () => {
    const status = await openProviders(app);
    assert.equal(await status.getAttribute('data-state'), 'available', 'the app found the Secret Service');
    assert.match(await textOf(status), /kept in the system keychain/);

    const provider = await app.invoke('llmConfig:addProvider', { name: 'Fake', kind: 'openai', baseUrl: `${fake.url}/v1`, models: ['fake-model'], defaultModel: 'fake-model' });
    assert.ok(provider.ok, JSON.stringify(provider.error));
    const key = await app.invoke('llmConfig:addApiKey', { providerId: provider.value.id, apiKey: KEY, label: 'from the keychain' });
    assert.ok(key.ok, JSON.stringify(key.error));
    assert.deepEqual(keyring.secretToolUsers(), [key.value.id], 'the Secret Service holds the key under its id');
    for (const { name, bytes } of filesAtRest(app.dataDir)) {
      assert.ok(!bytes.includes(KEY), `${name} holds no copy of the key`);
    }
    await app.screenshot('settings-keychain-available-light');

    // Standing, not queued: the New chat dialog lists the provider's models with the key first.
    await fake.script(KEY, [], { kind: 'text', chunks: ['Answered ', 'with the keychain key'] });
    await (await app.find('nav-chat')).click();
    await (await app.find('chat-new')).click();
    const providerSelect = await app.find('new-chat-provider-select');
    await providerSelect.findElement(By.xpath('.//option[normalize-space(.)="Fake"]')).click();
    await (await app.find('new-chat-submit')).click();
    const box = await app.find('composer-input');
    await box.sendKeys('Hello');
    await box.sendKeys(Key.ENTER);
    await app.driver.wait(async () => {
      const replies = await app.driver.findElements(By.css('[data-testid="message"][data-role="assistant"][data-status="complete"]'));
      return replies.length === 1 && /with the keychain key/.test(await textOf(replies[0]));
    }, WAIT, 'the reply arrives');
    const sent = (await fake.requests()).filter((r) => r.path.endsWith('/chat/completions'));
    assert.deepEqual(sent.map((r) => r.key), [KEY], 'sent with the value read from the keychain');
  });
});

describe('without a keychain, in the real window', () => {
  let app;

  before(async () => {
    app = await launchApp(); // the harness gives the app no session bus
    await app.find('app-shell');
  });
  after(async () => {
    await app?.stop();
  });

  it('shows a notice that keys stay in the database, and why', async () => {
    const status = await openProviders(app);
    assert.equal(await status.getAttribute('data-state'), 'unavailable');
    assert.equal(await status.getAttribute('role'), 'status', 'announced to screen readers');
    const text = await textOf(status);
    assert.match(text, /kept in Keypool’s database, not in the system keychain/);
    assert.match(text, /No keychain service is reachable/);
    await app.screenshot('settings-keychain-notice-light');
  });
});
