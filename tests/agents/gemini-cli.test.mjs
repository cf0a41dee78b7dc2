// Gemini CLI (the real `@google/gemini-cli`, pinned) through keypool-server: as-is to a Gemini
// pool, with the pool's affinity and failover, and through routes to an OpenAI-kind and an
// Anthropic pool, its generateContent requests translated. Run by tests/agents/run.sh.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startFakeProvider } from '../e2e/harness.mjs';
import { TOKEN, provider, route, run, startServer } from './support.mjs';

const GEMINI = process.env.KEYPOOL_GEMINI;
const KEY_A = 'AIzaSyAgentAaaaaaaaaaaaaaaaaaaaaaaaa01';
const KEY_B = 'AIzaSyAgentBbbbbbbbbbbbbbbbbbbbbbbbb02';
const KEY_O = 'sk-agent-oooooooooooooooooooooooo-0003';
const KEY_C = 'sk-ant-agent-cccccccccccccccccccccc-0004';

describe('Gemini CLI through keypool-server', () => {
  let fake;
  let server;

  /** `gemini -p` with `args`, set up as the README tells a user. */
  const gemini = (args) =>
    run(GEMINI, [...args], {
      cwd: server.work,
      env: {
        HOME: server.home,
        GOOGLE_GEMINI_BASE_URL: server.url,
        GEMINI_API_KEY: TOKEN,
        GEMINI_CLI_TRUST_WORKSPACE: 'true',
      },
    });

  const generations = async () => (await fake.requests()).filter((r) => /:(stream)?[gG]enerateContent/.test(r.path));

  before(async () => {
    fake = await startFakeProvider();
    server = await startServer(
      provider('gemini', 'gemini', fake.url, ['gemini-2.5-pro'], [KEY_A, KEY_B]) +
        provider('openai', 'openai', `${fake.url}/v1`, ['gpt-5'], [KEY_O]) +
        provider('claude', 'anthropic', fake.url, ['claude-sonnet-4-6'], [KEY_C]) +
        route('gemini-via-openai', 'openai/gpt-5') +
        route('gemini-via-claude', 'claude/claude-sonnet-4-6'),
    );
    // Headless, Gemini CLI needs to be told to use an API key.
    mkdirSync(join(server.home, '.gemini'));
    writeFileSync(
      join(server.home, '.gemini', 'settings.json'),
      JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } } }),
    );
  });

  after(() => {
    server?.stop();
    fake?.stop();
  });

  it('answers as-is, a resumed session staying on one key', async () => {
    const first = await gemini(['-m', 'gemini-2.5-pro', '-p', 'say hi']);
    assert.equal(first.code, 0, `gemini answered: ${first.stdout}${first.stderr}`);
    assert.match(first.stdout, /Hello from the fake provider\./, "the provider's reply, as Gemini CLI shows it");
    const second = await gemini(['-m', 'gemini-2.5-pro', '--resume', 'latest', '-p', 'and again']);
    assert.equal(second.code, 0, `the session resumed: ${second.stdout}${second.stderr}`);
    const asked = await generations();
    assert.equal(asked.length, 2, `one request a turn: ${asked.map((r) => r.path)}`);
    assert.equal(asked[0].key, asked[1].key, 'the session stayed on one key (its prompt cache stays warm)');
    assert.ok([KEY_A, KEY_B].includes(asked[0].key), 'a pooled key went upstream, never the local token');
  });

  it("is answered by another key when the session's key is rate-limited", async () => {
    const before = await generations();
    const sessionKey = before.at(-1).key;
    await fake.script(sessionKey, [], { kind: 'status', status: 429, headers: [['retry-after', '30']], message: 'Resource exhausted' });
    const turn = await gemini(['-m', 'gemini-2.5-pro', '--resume', 'latest', '-p', 'third']);
    assert.equal(turn.code, 0, `gemini answered: ${turn.stdout}${turn.stderr}`);
    assert.match(turn.stdout, /Hello from the fake provider\./);
    const later = (await generations()).slice(before.length);
    assert.equal(later.at(-1).key, sessionKey === KEY_A ? KEY_B : KEY_A, 'the other key answered');
    assert.ok(later.length <= 2, `the refused key was tried at most once: ${later.map((r) => r.key)}`);
  });

  for (const [model, path, key, upstream] of [
    ['gemini-via-openai', '/v1/chat/completions', KEY_O, 'gpt-5'],
    ['gemini-via-claude', '/v1/messages', KEY_C, 'claude-sonnet-4-6'],
  ]) {
    it(`answers through a route to ${upstream}'s pool, translated`, async () => {
      const turn = await gemini(['-m', model, '-p', `hello ${upstream}`]);
      assert.equal(turn.code, 0, `gemini answered: ${turn.stdout}${turn.stderr}`);
      assert.match(turn.stdout, /Hello from the fake provider\./, "the pool's reply, as Gemini CLI shows it");
      const asked = (await fake.requests()).filter((r) => r.path === path && r.key === key);
      assert.equal(asked.length, 1, `one request to the route's pool: ${JSON.stringify(asked.map((r) => r.path))}`);
      assert.equal(asked[0].model, upstream, "the route's model");
      assert.match(asked[0].last_user, new RegExp(`hello ${upstream}$`), 'the question, carried');
    });
  }
});
