// Settings → Team in the real window: the user fills in a test Redis (a redis-server of this
// test's own, on a free port in a temporary directory), a team name and a generated secret,
// connects, and sees the status; a keypool-server joined to the same team then meets a 429 on a
// key, and the app's key table shows that key cooling, though the app never sent it a request.
// Disconnect leaves. Screenshots in light and dark; axe in both themes.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { By, freePort, launchApp, startFakeProvider } from './harness.mjs';
import { assertAccessible, click, fresh, keepPreferences, keyRow, retype, textOf, waitFor } from './steps.mjs';

const SERVER = process.env.KEYPOOL_SERVER_BINARY ?? resolve(import.meta.dirname, '..', '..', 'target', 'debug', 'keypool-server');
const KEY_X = 'sk-fake-TEAMTEAMXXXXXXXX-0001';
const KEY_Y = 'sk-fake-TEAMTEAMYYYYYYYY-0002';
const MODEL = 'fake-model';
const WAIT = 30_000;

/** Whether a Redis answers PING on `port`. */
function pong(port) {
  return new Promise((ok) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    let seen = '';
    socket.on('data', (chunk) => {
      seen += chunk;
      if (seen.includes('\r\n')) {
        socket.destroy();
        ok(seen.startsWith('+PONG'));
      }
    });
    socket.on('error', () => ok(false));
    socket.on('connect', () => socket.write('PING\r\n'));
  });
}

/** Polls `check` until it holds: waiting for a process to answer, bounded by `timeout`. */
async function eventually(check, message, timeout = WAIT) {
  const deadline = Date.now() + timeout;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(message);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A redis-server of this test's own: a free loopback port, a temporary directory, nothing saved. */
async function startRedis() {
  const dir = mkdtempSync(join(tmpdir(), 'keypool-e2e-redis-'));
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
  await eventually(() => pong(port), `redis-server answers on ${port}`);
  return {
    url: `redis://127.0.0.1:${port}`,
    stop() {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** keypool-server joined to `team` at `redisUrl` with `secret`, serving keys X and Y of the fake. */
async function startServer(fakeUrl, redisUrl, team, secret) {
  const dir = mkdtempSync(join(tmpdir(), 'keypool-e2e-server-'));
  const config = join(dir, 'config.toml');
  writeFileSync(
    config,
    `[[providers]]\nname = "fake"\nkind = "openai"\nbase_url = "${fakeUrl}/v1"\nmodels = ["${MODEL}"]\n` +
      `[[providers.keys]]\nkey = "${KEY_X}"\nlabel = "x"\n[[providers.keys]]\nkey = "${KEY_Y}"\nlabel = "y"\n`,
  );
  const secretFile = join(dir, 'team.secret');
  writeFileSync(secretFile, secret, { mode: 0o600 });
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, 'kp-e2e-server-token-0123456789abcdef', { mode: 0o600 });
  const port = await freePort();
  const args = ['serve', '--data-dir', join(dir, 'data'), '--config', config, '--listen', `127.0.0.1:${port}`, '--token-file', tokenFile];
  const child = spawn(SERVER, [...args, '--redis', redisUrl, '--team', team, '--team-secret-file', secretFile], { stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  const health = async () => {
    try {
      return await (await fetch(`${url}/healthz`)).json();
    } catch {
      return null;
    }
  };
  await eventually(async () => (await health())?.team === 'connected', 'keypool-server joins the team');
  return {
    async chat(content) {
      const response = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: 'Bearer kp-e2e-server-token-0123456789abcdef', 'content-type': 'application/json' },
        body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content }] }),
      });
      return response.status;
    },
    stop() {
      child.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const teamState = (app) => fresh(async () => (await app.find('team-state')).getAttribute('data-state'));

/** The theme as Settings → General keeps it, the page reloaded, back on Settings → Team. */
async function showTeamIn(app, theme) {
  await keepPreferences(app, { theme });
  await click(app, 'nav-settings');
  await click(app, 'settings-team');
  await app.find('team-state');
}

describe('Settings → Team, with a test Redis and a keypool-server of the same team', () => {
  let app;
  let fake;
  let redis;
  let server;
  let providerId;
  let secret;

  before(async () => {
    redis = await startRedis();
    fake = await startFakeProvider();
    app = await launchApp();
    await app.find('app-shell');
    const provider = await app.invoke('llmConfig:addProvider', { name: 'Fake', kind: 'openai', baseUrl: `${fake.url}/v1`, models: [MODEL], defaultModel: MODEL });
    assert.ok(provider.ok, `addProvider: ${JSON.stringify(provider.error)}`);
    providerId = provider.value.id;
    for (const [apiKey, label] of [
      [KEY_X, 'x'],
      [KEY_Y, 'y'],
    ]) {
      const key = await app.invoke('llmConfig:addApiKey', { providerId, apiKey, label });
      assert.ok(key.ok, `addApiKey: ${JSON.stringify(key.error)}`);
    }
  });
  after(async () => {
    await app?.stop();
    server?.stop();
    fake?.stop();
    redis?.stop();
  });

  it('connects from the form: URL, team name, a generated secret shown once', async () => {
    await click(app, 'nav-settings');
    await click(app, 'settings-team');
    assert.equal(await teamState(app), 'off', 'no team at first');
    await retype(await app.find('team-redis-url'), 'ftp://nowhere');
    await retype(await app.find('team-name'), 'e2e-crew');
    await click(app, 'team-generate');
    secret = await fresh(async () => (await app.find('team-generated-secret')).getAttribute('value'));
    assert.match(secret, /^[0-9a-f]{64}$/, 'a new secret of 64 hex digits is shown to copy');
    assert.equal(await (await app.find('team-secret')).getAttribute('type'), 'password', 'the field holds it masked');
    await click(app, 'team-connect');
    const urlError = await waitFor(app, async () => textOf(await app.find('team-redis-url-field-error')), (t) => t.length > 0, 'a bad URL is refused at its field');
    assert.match(urlError, /redis:\/\//, `the error says what a Redis URL looks like: ${urlError}`);
    assert.equal(await teamState(app), 'off', 'a refused connect changes nothing');

    await retype(await app.find('team-redis-url'), redis.url);
    await click(app, 'team-connect');
    await waitFor(app, () => teamState(app), (s) => s === 'connected', 'the app connects to the test Redis', WAIT);
    assert.equal((await app.driver.findElements(By.css('[data-testid="team-generated"]'))).length, 0, 'the secret is not shown again once kept');
    assert.equal(await (await app.find('team-secret')).getAttribute('value'), '', 'the secret field is emptied');
    const status = await app.invoke('team:getStatus');
    assert.equal(status.value.team, 'e2e-crew', 'the backend keeps the team joined');
    assert.ok(!JSON.stringify(status.value).includes(secret), 'no status holds the secret');
    for (const theme of ['light', 'dark']) {
      await showTeamIn(app, theme);
      await waitFor(app, () => teamState(app), (s) => s === 'connected', `connected, shown in the ${theme} theme`);
      await assertAccessible(app, `Settings → Team, connected (${theme})`);
      await app.screenshot(`settings-team-connected-${theme}`);
    }
    await showTeamIn(app, 'light');
  });

  it('shows in the key table a cooldown the keypool-server met, and counts it as a member', async () => {
    await fake.script(KEY_X, [], { kind: 'status', status: 429, headers: [['retry-after', '300']], message: 'slow down' });
    await fake.script(KEY_Y, [], { kind: 'text', chunks: ['from y'] });
    const completions = async () => (await fake.requests()).filter((r) => r.path.endsWith('/chat/completions'));
    assert.equal((await completions()).length, 0, 'the app has sent the provider nothing: it has no chat');
    server = await startServer(fake.url, redis.url, 'e2e-crew', secret);
    await waitFor(app, async () => textOf(await app.find('team-members')), (t) => t === '2', 'the app sees the server as a member', WAIT);
    // The server's rotation reaches x within two requests; each answers (failing over to y).
    for (const content of ['one', 'two']) assert.equal(await server.chat(content), 200, 'the server answers through y');
    const sentToX = (await completions()).filter((r) => r.key === KEY_X);
    assert.ok(sentToX.length >= 1, 'the server sent x a request, which the fake refused with a 429');

    await click(app, 'settings-providers');
    await click(app, `provider-${providerId}`);
    const stateOf = (label) => fresh(async () => textOf(await (await keyRow(app, label)).findElement(By.css('[data-testid="key-state"]'))));
    await waitFor(app, () => stateOf('x'), (s) => /cool/i.test(s), 'the app’s key table shows x cooling', WAIT);
    assert.doesNotMatch(await stateOf('y'), /cool/i, 'y, which answered, is not cooling');
    assert.equal((await completions()).length, sentToX.length + (await completions()).filter((r) => r.key === KEY_Y).length, 'only the server’s requests reached the provider');
    await app.screenshot('settings-team-cooldown-from-server');
  });

  it('disconnects, and the team is off', async () => {
    await click(app, 'settings-team');
    await click(app, 'team-disconnect');
    await waitFor(app, () => teamState(app), (s) => s === 'off', 'the app leaves the team');
    const status = await app.invoke('team:getStatus');
    assert.equal(status.value.state, 'off', 'the backend says off');
  });
});
