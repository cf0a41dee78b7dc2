// Codex CLI (the real `@openai/codex`, pinned) through keypool-server: it speaks only OpenAI's
// Responses API, which the server relays to an OpenAI-compatible pool (here the fake provider),
// with the pool's affinity and failover. Run by tests/agents/run.sh, which installs it.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { freePort, startFakeProvider } from '../e2e/harness.mjs';

const CODEX = process.env.KEYPOOL_CODEX;
const SERVER = process.env.KEYPOOL_SERVER_BINARY;
const TOKEN = 'kp-agents-test-token-0123456789abcdef0123';
const KEY_A = 'sk-agent-aaaaaaaaaaaaaaaaaaaaaaaa-0001';
const KEY_B = 'sk-agent-bbbbbbbbbbbbbbbbbbbbbbbb-0002';
const KEY_C = 'sk-ant-agent-cccccccccccccccccccccc-0003';

/** Runs `codex` with `args` in `work`, its home (config, sessions) in `home`: its output. */
function codex(home, work, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(CODEX, args, {
      cwd: work,
      env: { PATH: process.env.PATH, HOME: home, KEYPOOL_TOKEN: TOKEN, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

async function eventually(what, check) {
  for (let i = 0; i < 200; i++) {
    if (await check().catch(() => false)) return;
    await new Promise((ok) => setTimeout(ok, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('Codex CLI through keypool-server', () => {
  let fake;
  let server;
  let home;
  let work;

  before(async () => {
    fake = await startFakeProvider();
    const dir = mkdtempSync(join(tmpdir(), 'keypool-agents-'));
    const port = await freePort();
    writeFileSync(
      join(dir, 'keypool.toml'),
      `[[providers]]\nname = "fake"\nkind = "openai"\nbase_url = "${fake.url}/v1"\nmodels = ["gpt-5"]\n` +
        `[[providers.keys]]\nkey = "${KEY_A}"\nlabel = "a"\n[[providers.keys]]\nkey = "${KEY_B}"\nlabel = "b"\n` +
        // The same fake, as an Anthropic pool that a route sends one model to.
        `[[providers]]\nname = "claude"\nkind = "anthropic"\nbase_url = "${fake.url}"\nmodels = ["claude-sonnet-4-6"]\n` +
        `[[providers.keys]]\nkey = "${KEY_C}"\nlabel = "c"\n` +
        `[[routes]]\nmodel = "gpt-5-via-claude"\nto = "claude/claude-sonnet-4-6"\n`,
    );
    writeFileSync(join(dir, 'token'), `${TOKEN}\n`, { mode: 0o600 });
    const args = ['serve', '--data-dir', join(dir, 'data'), '--listen', `127.0.0.1:${port}`, '--config', join(dir, 'keypool.toml'), '--token-file', join(dir, 'token')];
    server = spawn(SERVER, args, { stdio: 'ignore' });
    await eventually('keypool-server serves', async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok);
    home = join(dir, 'home');
    work = join(dir, 'work');
    mkdirSync(join(home, '.codex'), { recursive: true });
    mkdirSync(work);
    // What the README tells a user to write.
    writeFileSync(
      join(home, '.codex', 'config.toml'),
      `model = "gpt-5"\nmodel_provider = "keypool"\n[model_providers.keypool]\nname = "Keypool"\n` +
        `base_url = "http://127.0.0.1:${port}/v1"\nenv_key = "KEYPOOL_TOKEN"\nwire_api = "responses"\nsupports_websockets = false\n`,
    );
  });

  after(() => {
    server?.kill('SIGTERM');
    fake?.stop();
  });

  it('answers through the Responses API, a two-turn session staying on one key', async () => {
    const first = await codex(home, work, ['exec', '--skip-git-repo-check', 'say hi']);
    assert.equal(first.code, 0, `codex answered: ${first.stderr}`);
    assert.match(first.stdout, /Hello from the fake provider\./, 'the provider\'s reply, as Codex shows it');
    const second = await codex(home, work, ['exec', '--skip-git-repo-check', 'resume', '--last', 'and again']);
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
    const turn = await codex(home, work, ['exec', '--skip-git-repo-check', 'resume', '--last', 'third']);
    assert.equal(turn.code, 0, `codex answered: ${turn.stderr}`);
    assert.match(turn.stdout, /Hello from the fake provider\./);
    const after = (await fake.requests()).filter((r) => r.path === '/v1/responses').slice(before.length);
    assert.equal(after.at(-1).key, other, 'the other key answered');
    assert.ok(after.length <= 2, `the refused key was tried at most once: ${after.map((r) => r.key)}`);
  });

  it('answers through a route to an Anthropic pool, its Responses request translated', async () => {
    const turn = await codex(home, work, ['exec', '--skip-git-repo-check', '-m', 'gpt-5-via-claude', 'hello claude']);
    assert.equal(turn.code, 0, `codex answered: ${turn.stderr}`);
    assert.match(turn.stdout, /Hello from the fake provider\./, 'the Anthropic pool\'s reply, as Codex shows it');
    const asked = (await fake.requests()).filter((r) => r.path === '/v1/messages');
    assert.equal(asked.length, 1, 'one Messages request to the Anthropic pool');
    assert.equal(asked[0].key, KEY_C, 'with its key');
    assert.equal(asked[0].model, 'claude-sonnet-4-6', 'the route\'s model');
    assert.equal(asked[0].last_user, 'hello claude', 'the question, carried');
  });
});
