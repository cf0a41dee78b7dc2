// Keys lost, told on the desktop, and the local API's named tokens, in the real window. A private
// D-Bus session holds a real notification server (dunst, under this Xvfb), which writes every
// notification it is sent to a file: when a provider refuses both keys of a chat, the window says
// so once per key and once that the provider has no usable key left; switched off in Settings →
// General, a key lost is not told. In Settings → Local API a named token is made (shown once),
// answers through the endpoint, is counted under its name on the Usage page, and once revoked is
// refused. axe finds nothing on either page, in both themes.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startSessionBus } from './desktop.mjs';
import { By, launchApp, startFakeProvider } from './harness.mjs';
import { assertAccessible, click, fresh, gone, keepPreferences, retype, selectByText, send, textOf, waitFor } from './steps.mjs';

const WAIT = 15_000;
/** What the fake answers a revoked key, whatever it asks. */
const REVOKED = { kind: 'status', status: 401, headers: [], message: 'revoked' };

/** A private session bus with dunst on it; `shown()` lists what it was sent: [{ summary, body }]. */
async function startNotificationServer() {
  const home = mkdtempSync(join(tmpdir(), 'keypool-e2e-notify-'));
  mkdirSync(join(home, 'run'), { mode: 0o700 });
  const log = join(home, 'shown.tsv');
  const script = join(home, 'log.sh');
  writeFileSync(script, `#!/bin/sh\nprintf '%s\\t%s\\n' "$DUNST_SUMMARY" "$DUNST_BODY" >> '${log}'\n`);
  chmodSync(script, 0o755);
  const config = join(home, 'dunstrc');
  // Each notification shown and logged, a repeat too (dunst stacks duplicates on screen by default).
  writeFileSync(config, `[global]\n  timeout = 0\n  stack_duplicates = false\n\n[everything]\n  summary = "*"\n  script = ${script}\n`);
  const base = { ...process.env, HOME: home, XDG_RUNTIME_DIR: join(home, 'run') };
  const bus = await startSessionBus(base);
  const env = { ...base, DBUS_SESSION_BUS_ADDRESS: bus.address };
  const dunst = spawn('dunst', ['-config', config], { env, stdio: 'ignore' });
  return {
    env,
    shown() {
      if (!existsSync(log)) return [];
      return readFileSync(log, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => {
          const [summary, body] = line.split('\t');
          return { summary, body };
        });
    },
    stop() {
      dunst.kill('SIGTERM');
      bus.stop();
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** Starts a chat with the provider named `name` through the New chat dialog. */
async function newChat(app, name) {
  await click(app, 'nav-chat');
  await click(app, 'chat-new');
  await selectByText(app, 'new-chat-provider-select', name);
  await waitFor(app, async () => (await app.find('new-chat-model-status')).getAttribute('data-state'), (s) => s === 'loaded' || s === 'failed', 'the model list is asked for');
  await click(app, 'new-chat-submit');
  await gone(app, 'new-chat-dialog');
}

/** The last reply of the open chat, once it is saved. */
async function lastReply(app, count) {
  const replies = await waitFor(
    app,
    () => fresh(async () => app.driver.findElements(By.css('[data-testid="message"][data-role="assistant"]'))),
    (found) => found.length === count,
    `${count} replies`,
  );
  return waitFor(app, () => replies.at(-1).getAttribute('data-status'), (s) => s === 'complete' || s === 'error', 'the reply is saved');
}

describe('keys lost on the desktop, and named tokens, in the real window', () => {
  let app;
  let fake;
  let server;
  let providerId;

  before(async () => {
    fake = await startFakeProvider();
    server = await startNotificationServer();
    app = await launchApp({ env: { DBUS_SESSION_BUS_ADDRESS: server.env.DBUS_SESSION_BUS_ADDRESS } });
    await app.find('app-shell');
    const provider = await app.invoke('llmConfig:addProvider', { name: 'Fake', kind: 'openai', baseUrl: `${fake.url}/v1`, models: ['fake-model'], defaultModel: 'fake-model' });
    assert.ok(provider.ok, JSON.stringify(provider.error));
    providerId = provider.value.id;
    for (const [label, key] of [
      ['work', 'sk-e2e-NOTIFYNOTIFYNOTIFY-0001'],
      ['home', 'sk-e2e-NOTIFYNOTIFYNOTIFY-0002'],
    ]) {
      const added = await app.invoke('llmConfig:addApiKey', { providerId, apiKey: key, label });
      assert.ok(added.ok, JSON.stringify(added.error));
      await fake.script(key, [], REVOKED);
    }
  });
  after(async () => {
    await app?.stop();
    fake?.stop();
    server?.stop();
  });

  it('tells each key refused once, and once that the provider has none left', async () => {
    await newChat(app, 'Fake');
    await send(app, 'hello?');
    assert.equal(await lastReply(app, 1), 'error', 'no key can answer');
    const shown = await waitFor(app, async () => server.shown(), (list) => list.length >= 3, 'three notifications');
    assert.deepEqual(
      shown.map((n) => n.summary).sort(),
      ['Fake has no usable key', 'Fake: a key was refused', 'Fake: a key was refused'],
      `each loss once: ${JSON.stringify(shown)}`,
    );
    const bodies = shown.map((n) => n.body).join('\n');
    assert.match(bodies, /refused the key work \(HTTP 401\)/);
    assert.match(bodies, /refused the key home \(HTTP 401\)/);
    assert.doesNotMatch(bodies, /sk-e2e/, 'never a key');
    await send(app, 'anyone?');
    assert.equal(await lastReply(app, 2), 'error');
    assert.equal(server.shown().length, 3, 'nothing new to tell (checked again below, after a later one)');
  });

  it('tells nothing while Settings → General switches it off', async () => {
    await click(app, 'nav-settings');
    await click(app, 'settings-general');
    const toggle = await app.find('notify-keys-lost');
    assert.equal(await toggle.getAttribute('aria-checked'), 'true', 'on by default');
    await toggle.click();
    await waitFor(app, async () => (await app.find('notify-keys-lost')).getAttribute('aria-checked'), (v) => v === 'false', 'switched off');
    const spare = await app.invoke('llmConfig:addApiKey', { providerId, apiKey: 'sk-e2e-NOTIFYNOTIFYNOTIFY-0003', label: 'spare' });
    assert.ok(spare.ok);
    await fake.script('sk-e2e-NOTIFYNOTIFYNOTIFY-0003', [], REVOKED);
    await newChat(app, 'Fake');
    await send(app, 'spare?');
    assert.equal(await lastReply(app, 1), 'error');
    // Switched on again, the next loss is told: what came before it in order was nothing.
    await click(app, 'nav-settings');
    await click(app, 'settings-general');
    await (await app.find('notify-keys-lost')).click();
    await waitFor(app, async () => (await app.find('notify-keys-lost')).getAttribute('aria-checked'), (v) => v === 'true', 'switched on');
    const last = await app.invoke('llmConfig:addApiKey', { providerId, apiKey: 'sk-e2e-NOTIFYNOTIFYNOTIFY-0004', label: 'last' });
    assert.ok(last.ok);
    await fake.script('sk-e2e-NOTIFYNOTIFYNOTIFY-0004', [], REVOKED);
    await newChat(app, 'Fake');
    await send(app, 'last?');
    assert.equal(await lastReply(app, 1), 'error');
    const shown = await waitFor(app, async () => server.shown(), (list) => list.length >= 5, 'two more');
    assert.deepEqual(
      shown.slice(3).map((n) => n.body.match(/the key (\w+)/)?.[1] ?? n.summary),
      ['last', 'Fake has no usable key'],
      `the spare key, lost while switched off, was never told: ${JSON.stringify(shown)}`,
    );
  });

  it('makes a named token that answers, is counted by name, and stops once revoked', async () => {
    // A key that answers, for the named token's requests.
    await app.invoke('llmConfig:addApiKey', { providerId, apiKey: 'sk-e2e-NOTIFYNOTIFYNOTIFY-0005', label: 'good' });
    await fake.script('sk-e2e-NOTIFYNOTIFYNOTIFY-0005', [], { kind: 'text', chunks: ['fine'] });
    await click(app, 'nav-settings');
    await click(app, 'settings-localApi');
    await (await app.find('local-api-switch')).click();
    await click(app, 'local-api-token-done');
    await gone(app, 'local-api-token-dialog');
    const name = await app.find('named-token-name-input');
    await retype(name, 'two words');
    await click(app, 'named-token-create');
    await waitFor(app, async () => textOf(await app.find('named-token-name-error')), (t) => /^1 to 64 letters/.test(t), 'the name is refused at its field');
    await retype(await app.find('named-token-name-input'), 'ci-bot');
    await click(app, 'named-token-create');
    const token = await waitFor(app, async () => (await app.find('local-api-token')).getAttribute('value'), (v) => v?.startsWith('kp-local-'), 'the token is shown once');
    assert.equal(await textOf(await app.driver.findElement(By.css('[data-testid="local-api-token-dialog"] h2'))), 'The token ci-bot');
    await click(app, 'local-api-token-done');
    await gone(app, 'local-api-token-dialog');
    const row = await app.find('named-token');
    assert.equal(await row.getAttribute('data-name'), 'ci-bot');
    assert.doesNotMatch(await textOf(await app.find('named-tokens')), /kp-local-/, 'the list holds no token');
    for (const theme of ['light', 'dark']) {
      await keepPreferences(app, { theme, page: 'settings/localApi' });
      await app.find('named-token');
      await assertAccessible(app, `named tokens (${theme})`, '[data-testid="named-tokens"]');
    }

    const status = await app.invoke('localApi:getStatus');
    const ask = () =>
      fetch(`${status.value.address}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'fake-model', messages: [{ role: 'user', content: 'hi' }] }),
      });
    const answered = await ask();
    assert.equal(answered.status, 200, await answered.clone().text());
    await answered.text();

    await click(app, 'nav-usage');
    const tokenRow = await waitFor(
      app,
      () => app.driver.findElements(By.css('[data-testid="usage-token-row"][data-token="ci-bot"]')),
      (rows) => rows.length === 1,
      'the Usage page counts ci-bot',
    );
    const cells = await tokenRow[0].findElements(By.css('td'));
    assert.equal(await textOf(cells[0]), '1', 'one request, under its name');
    await assertAccessible(app, 'usage by token', '[data-testid="usage-tokens"]');

    await click(app, 'nav-settings');
    await click(app, 'settings-localApi');
    await click(app, 'named-token-revoke');
    await click(app, 'named-token-revoke-confirm');
    await app.find('named-tokens-empty');
    assert.equal((await ask()).status, 401, 'a revoked token is refused at once');
  });
});
