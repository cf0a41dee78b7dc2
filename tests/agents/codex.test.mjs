// Codex CLI (the real `@openai/codex`, pinned) through keypool-server: it speaks only OpenAI's
// Responses API, which the server relays to an OpenAI-compatible pool (here the fake provider),
// with the pool's affinity and failover. Run by tests/agents/run.sh, which installs it.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startFakeProvider } from '../e2e/harness.mjs';
import { TOKEN, provider, route, run, startServer } from './support.mjs';

const CODEX = process.env.KEYPOOL_CODEX;
const KEY_A = 'sk-agent-aaaaaaaaaaaaaaaaaaaaaaaa-0001';
const KEY_B = 'sk-agent-bbbbbbbbbbbbbbbbbbbbbbbb-0002';
const KEY_C = 'sk-ant-agent-cccccccccccccccccccccc-0003';
const KEY_G = 'AIzaSyAgentGgggggggggggggggggggggggg04';

describe('Codex CLI through keypool-server', () => {
  let fake;
  let server;

  /** `codex` with `args`, its home (config, sessions) the test's own. */
  const codex = (args) =>
    run(CODEX, args, { cwd: server.work, env: { HOME: server.home, KEYPOOL_TOKEN: TOKEN } });

  before(async () => {
    fake = await startFakeProvider();
    server = await startServer(
      provider('fake', 'openai', `${fake.url}/v1`, ['gpt-5'], [KEY_A, KEY_B]) +
        // The same fake, as an Anthropic pool that a route sends one model to.
        provider('claude', 'anthropic', fake.url, ['claude-sonnet-4-6'], [KEY_C]) +
        provider('gemini', 'gemini', fake.url, ['gemini-2.5-pro'], [KEY_G]) +
        route('gpt-5-via-claude', 'claude/claude-sonnet-4-6') +
        route('gpt-5-via-gemini', 'gemini/gemini-2.5-pro'),
    );
    mkdirSync(join(server.home, '.codex'));
    // What the README tells a user to write.
    writeFileSync(
      join(server.home, '.codex', 'config.toml'),
      `model = "gpt-5"\nmodel_provider = "keypool"\n[model_providers.keypool]\nname = "Keypool"\n` +
        `base_url = "${server.url}/v1"\nenv_key = "KEYPOOL_TOKEN"\nwire_api = "responses"\nsupports_websockets = false\n`,
    );
  });

  after(() => {
    server?.stop();
    fake?.stop();
  });

  it('answers through the Responses API, a two-turn session staying on one key', async () => {
    const first = await codex(['exec', '--skip-git-repo-check', 'say hi']);
    assert.equal(first.code, 0, `codex answered: ${first.stderr}`);
    assert.match(first.stdout, /Hello from the fake provider\./, 'the provider\'s reply, as Codex shows it');
    const second = await codex(['exec', '--skip-git-repo-check', 'resume', '--last', 'and again']);
    assert.equal(second.code, 0, `the session resumed: ${second.stderr}`);
    const requests = (await fake.requests()).filter((r) => r.path === '/v1/responses');
    assert.equal(requests.length, 2, 'one Responses request a turn, no retry, no socket');
    assert.equal(requests[0].key, requests[1].key, 'the session stayed on one key (its prompt cache stays warm)');
    assert.ok([KEY_A, KEY_B].includes(requests[0].key), 'a pooled key went upstream, never the local token');
    assert.equal(requests[1].last_user, 'and again', 'the second turn is the resumed session');
  });

  it('is answered by another key when the session\'s key is rate-limited', async () => {
    const before = (await fake.requests()).filter((r) => r.path === '/v1/responses');
    const sessionKey = before.at(-1).key;
    const other = sessionKey === KEY_A ? KEY_B : KEY_A;
    await fake.script(sessionKey, [], { kind: 'status', status: 429, headers: [['retry-after', '30']], message: 'Rate limit reached' });
    const turn = await codex(['exec', '--skip-git-repo-check', 'resume', '--last', 'third']);
    assert.equal(turn.code, 0, `codex answered: ${turn.stderr}`);
    assert.match(turn.stdout, /Hello from the fake provider\./);
    const after = (await fake.requests()).filter((r) => r.path === '/v1/responses').slice(before.length);
    assert.equal(after.at(-1).key, other, 'the other key answered');
    assert.ok(after.length <= 2, `the refused key was tried at most once: ${after.map((r) => r.key)}`);
  });

  it('answers through a route to an Anthropic pool, its Responses request translated', async () => {
    const turn = await codex(['exec', '--skip-git-repo-check', '-m', 'gpt-5-via-claude', 'hello claude']);
    assert.equal(turn.code, 0, `codex answered: ${turn.stderr}`);
    assert.match(turn.stdout, /Hello from the fake provider\./, 'the Anthropic pool\'s reply, as Codex shows it');
    const asked = (await fake.requests()).filter((r) => r.path === '/v1/messages');
    assert.equal(asked.length, 1, 'one Messages request to the Anthropic pool');
    assert.equal(asked[0].key, KEY_C, 'with its key');
    assert.equal(asked[0].model, 'claude-sonnet-4-6', 'the route\'s model');
    assert.equal(asked[0].last_user, 'hello claude', 'the question, carried');
    // Codex marks nothing for a cache; translated to Anthropic, its prompt is marked after the
    // instructions and after its turn (Anthropic caches nothing unmarked).
    assert.ok(asked[0].breakpoints >= 2 && asked[0].breakpoints <= 4, `cache marks: ${asked[0].breakpoints}`);
    const sent = JSON.parse(asked[0].body);
    assert.equal(sent.system.at(-1).cache_control?.type, 'ephemeral', 'after the instructions');
  });

  it('answers through a route to a Gemini pool, its Responses request translated', async () => {
    const turn = await codex(['exec', '--skip-git-repo-check', '-m', 'gpt-5-via-gemini', 'hello gemini']);
    assert.equal(turn.code, 0, `codex answered: ${turn.stderr}`);
    assert.match(turn.stdout, /Hello from the fake provider\./, "the Gemini pool's reply, as Codex shows it");
    const asked = (await fake.requests()).filter((r) => r.key === KEY_G);
    assert.equal(asked.length, 1, 'one generateContent request to the Gemini pool');
    assert.match(asked[0].path, /gemini-2\.5-pro:streamGenerateContent/, "the route's model, streamed");
    assert.equal(asked[0].last_user, 'hello gemini', 'the question, carried');
  });
});
