// Settings → Local API in the real window, with the agents' home folder a temporary one: a route
// added there is tried through the pool against the fake provider, and Connect then Disconnect of
// Claude Code, Codex CLI and Gemini CLI leaves their files exactly as they were (a file with the
// user's own settings, one that did not exist, with its folder). Screenshots in light and dark.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Key } from 'selenium-webdriver';
import { By, freePort, launchApp, startFakeProvider } from './harness.mjs';
import { click, fresh, gone, keepPreferences, retype, selectByText, textOf, waitFor } from './steps.mjs';

const KEY = 'sk-fake-AGENTS-AAAAAAAAAAAA-0001';

/** The user's own files, before Keypool: Claude Code's and Gemini CLI's exist, Codex's does not. */
const BEFORE = {
  '.claude/settings.json': '{\n  "permissions": { "allow": ["Bash(ls:*)"] },\n  "env": { "DISABLE_TELEMETRY": "1" }\n}\n',
  '.gemini/settings.json': '{"ui":{"theme":"GitHub"}}',
  '.gemini/.env': '# mine\nOTHER_TOOL_KEY=abc\n',
};

/** Within `agent`'s card, the element with `testId`. */
const inCard = (app, agent, testId) => fresh(async () => (await app.find(`agent-${agent}`)).findElement(By.css(`[data-testid="${testId}"]`)));
const stateOf = (app, agent) => fresh(async () => (await app.find(`agent-${agent}`)).getAttribute('data-state'));

describe('routes and coding agents, in the real window', () => {
  let app;
  let fake;
  let home;
  let token;
  let port;

  before(async () => {
    fake = await startFakeProvider();
    home = mkdtempSync(join(tmpdir(), 'keypool-e2e-home-'));
    for (const [path, text] of Object.entries(BEFORE)) {
      mkdirSync(join(home, path, '..'), { recursive: true });
      writeFileSync(join(home, path), text);
      chmodSync(join(home, path), 0o644);
    }
    // The agents' files go in this home, never the user's (nor where CLAUDE_CONFIG_DIR or
    // CODEX_HOME would point).
    app = await launchApp({ env: { HOME: home, CLAUDE_CONFIG_DIR: '', CODEX_HOME: '' } });
    await app.find('app-shell');
    const provider = await app.invoke('llmConfig:addProvider', { name: 'Fake OpenAI', kind: 'openai', baseUrl: `${fake.url}/v1`, models: ['gpt-fake'] });
    assert.ok(provider.ok, JSON.stringify(provider.error));
    const key = await app.invoke('llmConfig:addApiKey', { providerId: provider.value.id, apiKey: KEY, label: 'Agents key' });
    assert.ok(key.ok, JSON.stringify(key.error));
    await fake.script(KEY, [], { kind: 'text', chunks: ['O', 'K'] });

    await click(app, 'nav-settings');
    await click(app, 'settings-localApi');
    port = await freePort();
    const portInput = await app.find('local-api-port-input');
    await retype(portInput, String(port));
    await portInput.sendKeys(Key.ENTER);
    await waitFor(app, () => fresh(async () => textOf(await app.find('local-api-port-status'))), (t) => t === 'Saved.', 'the port is saved');
    await click(app, 'local-api-switch');
    token = await (await app.find('local-api-token')).getAttribute('value');
    await click(app, 'local-api-token-done');
    await gone(app, 'local-api-token-dialog');
  });
  after(async () => {
    await app?.stop();
    fake?.stop();
  });

  it('adds a route from the keyboard and tries it through the pool', async () => {
    await click(app, 'route-add');
    const pattern = await app.find('route-pattern-input');
    await pattern.sendKeys('claude-*');
    await selectByText(app, 'route-provider-select', 'Fake OpenAI');
    // Enter in a field with suggestions goes to WebKit's suggestion list: the Add button, then.
    await (await app.find('route-to-model-input')).sendKeys('gpt-fake');
    await click(app, 'route-save');
    await gone(app, 'route-dialog');
    const target = await waitFor(app, () => fresh(async () => textOf(await app.find('route-target'))), (t) => t.includes('gpt-fake'), 'the route is listed');
    assert.match(target, /Fake OpenAI/);

    await click(app, 'route-try');
    const outcome = await waitFor(app, () => fresh(async () => (await app.find('route-tried')).getAttribute('data-outcome')), (o) => o === 'answered', 'the route answered');
    assert.equal(outcome, 'answered');
    assert.match(await textOf(await app.find('route-tried')), /Fake OpenAI answered as gpt-fake .*“OK”/, 'the provider’s reply, through the pool');
    const asked = (await fake.requests()).filter((r) => r.path.endsWith('/chat/completions'));
    assert.equal(asked.at(-1).model, 'gpt-fake', 'the route’s model was asked');
    assert.equal(asked.at(-1).key, KEY, 'with the pool’s key, never the local token');
  });

  it('Connect then Disconnect leaves every agent’s files as they were', async () => {
    for (const agent of ['claudeCode', 'codex', 'geminiCli']) {
      assert.equal(await stateOf(app, agent), 'notConnected', `${agent} is not connected yet`);
      await (await inCard(app, agent, 'agent-connect')).click();
      await app.find('agent-connect-dialog');
      const asked = await app.driver.findElements(By.css('[data-testid="agent-token-input"]'));
      assert.equal(asked.length, 0, `${agent}: no token is asked, Connect makes one of its own`);
      await click(app, 'agent-connect-confirm');
      // The user's own files were readable by others (0644): the dialog says it made them private.
      if (agent !== 'codex') {
        const notice = await textOf(await app.find('agent-tightened'));
        assert.match(notice, /readable by you only \(it was 0644\)/, `${agent}: the dialog says so`);
        await click(app, 'agent-connect-done');
      }
      await gone(app, 'agent-connect-dialog');
      await waitFor(app, () => stateOf(app, agent), (s) => s === 'connected', `${agent} is connected`);
    }
    await app.screenshot('settings-local-api-agents-light');
    await keepPreferences(app, { theme: 'dark' });
    await click(app, 'nav-settings');
    await click(app, 'settings-localApi');
    await app.find('agent-claudeCode');
    await app.screenshot('settings-local-api-agents-dark');

    const claude = JSON.parse(readFileSync(join(home, '.claude/settings.json'), 'utf8'));
    const own = claude.env.ANTHROPIC_AUTH_TOKEN;
    assert.ok(own.startsWith('kp-local-') && own !== token, 'Claude Code holds a token of its own, not the main one');
    assert.equal(statSync(join(home, '.claude/settings.json')).mode & 0o777, 0o600, 'in a file only its owner can read');
    assert.equal(claude.env.DISABLE_TELEMETRY, '1', 'and the user’s own env');
    const answer = await fetch(`${claude.env.ANTHROPIC_BASE_URL}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${own}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-fake', messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(answer.status, 200, 'its token answers through the app');
    await click(app, 'nav-settings');
    await click(app, 'settings-localApi');
    const listed = await waitFor(app, () => fresh(async () => textOf(await app.find('named-tokens-list'))), (t) => t.includes('gemini-cli'), 'the agents’ tokens are listed');
    assert.match(listed, /claude-code · Claude Code on this machine/, 'each with its agent');
    const codex = readFileSync(join(home, '.codex/config.toml'), 'utf8');
    assert.match(codex, /model_provider = "keypool"/, 'Codex is given Keypool as its provider');
    assert.match(codex, /wire_api = "responses"/);
    assert.match(readFileSync(join(home, '.gemini/.env'), 'utf8'), /^# mine\nOTHER_TOOL_KEY=abc\nGOOGLE_GEMINI_BASE_URL=http:\/\/127\.0\.0\.1:\d+\n/, 'Gemini CLI’s .env keeps its lines');

    for (const agent of ['claudeCode', 'codex', 'geminiCli']) {
      await (await inCard(app, agent, 'agent-disconnect')).click();
      await waitFor(app, () => stateOf(app, agent), (s) => s === 'notConnected', `${agent} is disconnected`);
    }
    for (const [path, text] of Object.entries(BEFORE)) {
      assert.equal(readFileSync(join(home, path), 'utf8'), text, `${path}: byte for byte as it was`);
      assert.equal(statSync(join(home, path)).mode & 0o777, 0o644, `${path}: and its mode`);
    }
    const revoked = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${own}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-fake', messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(revoked.status, 401, 'Disconnect revoked Claude Code’s token');
    assert.ok(!existsSync(join(home, '.codex')), 'Codex’s file, which did not exist, is gone with its folder');
  });
});
