// Claude Code (the real `@anthropic-ai/claude-code`, pinned) through keypool-server: as-is to an
// Anthropic pool, with the pool's affinity and failover, and through a route to an OpenAI-kind pool
// where its tool loop runs on translated requests. Run by tests/agents/run.sh, which installs it.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startFakeProvider } from '../e2e/harness.mjs';
import { TOKEN, provider, route, run, startServer } from './support.mjs';

const CLAUDE = process.env.KEYPOOL_CLAUDE;
const KEY_A = 'sk-ant-agent-aaaaaaaaaaaaaaaaaaaaaa-0001';
const KEY_B = 'sk-ant-agent-bbbbbbbbbbbbbbbbbbbbbb-0002';
const KEY_O = 'sk-agent-oooooooooooooooooooooooo-0003';
const KEY_G = 'AIzaSyAgentGgggggggggggggggggggggggg04';

describe('Claude Code through keypool-server', () => {
  let fake;
  let server;

  /** `claude -p` with `args`, as the README tells a user to point it at Keypool. */
  const claude = (args) =>
    run(CLAUDE, ['-p', ...args], {
      cwd: server.work,
      env: {
        HOME: server.home,
        ANTHROPIC_BASE_URL: server.url,
        ANTHROPIC_API_KEY: TOKEN,
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_AUTOUPDATER: '1',
      },
    });

  const messages = async () => (await fake.requests()).filter((r) => r.path === '/v1/messages');

  before(async () => {
    fake = await startFakeProvider();
    server = await startServer(
      provider('claude', 'anthropic', fake.url, ['claude-sonnet-4-6'], [KEY_A, KEY_B]) +
        provider('openai', 'openai', `${fake.url}/v1`, ['gpt-5'], [KEY_O]) +
        provider('gemini', 'gemini', fake.url, ['gemini-2.5-pro'], [KEY_G]) +
        route('claude-via-openai', 'openai/gpt-5') +
        route('claude-via-gemini', 'gemini/gemini-2.5-pro'),
    );
  });

  after(() => {
    server?.stop();
    fake?.stop();
  });

  it('answers as-is, a two-turn session staying on one key', async () => {
    const first = await claude(['--model', 'claude-sonnet-4-6', 'say hi']);
    assert.equal(first.code, 0, `claude answered: ${first.stdout}${first.stderr}`);
    assert.match(first.stdout, /Hello from the fake provider\./, "the provider's reply, as Claude Code shows it");
    const second = await claude(['--model', 'claude-sonnet-4-6', '--continue', 'and again']);
    assert.equal(second.code, 0, `the session continued: ${second.stdout}${second.stderr}`);
    const asked = await messages();
    assert.equal(asked.length, 2, 'one Messages request a turn');
    assert.equal(asked[0].key, asked[1].key, 'the session stayed on one key (its prompt cache stays warm)');
    assert.ok([KEY_A, KEY_B].includes(asked[0].key), 'a pooled key went upstream, never the local token');
    assert.match(asked[1].last_user, /and again$/, 'the second turn asks the new question');
    assert.ok(asked[1].messages > asked[0].messages, 'in the continued session, the first turn before it');
  });

  it("is answered by another key when the session's key is rate-limited", async () => {
    const before = await messages();
    const sessionKey = before.at(-1).key;
    await fake.script(sessionKey, [], { kind: 'status', status: 429, headers: [['retry-after', '30']], message: 'Rate limit reached' });
    const turn = await claude(['--model', 'claude-sonnet-4-6', '--continue', 'third']);
    assert.equal(turn.code, 0, `claude answered: ${turn.stdout}${turn.stderr}`);
    assert.match(turn.stdout, /Hello from the fake provider\./);
    const later = (await messages()).slice(before.length);
    assert.equal(later.at(-1).key, sessionKey === KEY_A ? KEY_B : KEY_A, 'the other key answered');
    assert.ok(later.length <= 2, `the refused key was tried at most once: ${later.map((r) => r.key)}`);
  });

  it('runs a tool through a route to an OpenAI-kind pool', async () => {
    const notes = join(server.work, 'notes.txt');
    writeFileSync(notes, 'The launch code is tangerine-42.\n');
    await fake.script(KEY_O, [
      { kind: 'tool_call', name: 'Read', arguments: JSON.stringify({ file_path: notes }) },
      { kind: 'text', chunks: ['The notes say ', 'tangerine-42.'] },
    ]);
    const turn = await claude(['--model', 'claude-via-openai', '--allowedTools', 'Read', '--', 'What do my notes say?']);
    assert.equal(turn.code, 0, `claude answered: ${turn.stdout}${turn.stderr}`);
    assert.match(turn.stdout, /The notes say tangerine-42\./, 'the answer after the tool ran');
    const asked = (await fake.requests()).filter((r) => r.path === '/v1/chat/completions');
    assert.equal(asked.length, 2, 'the call, then the answer with the tool result');
    assert.ok(asked.every((r) => r.key === KEY_O && r.model === 'gpt-5'), "the route's provider, key and model");
    const request = JSON.parse(asked[0].body);
    assert.ok(
      request.tools.some((t) => t.type === 'function' && t.function.name === 'Read'),
      "Claude Code's tools, as OpenAI function tools",
    );
    const result = JSON.parse(asked[1].body).messages.find((m) => m.role === 'tool');
    assert.ok(result, 'the tool result went back as a tool message');
    assert.equal(result.tool_call_id, 'call_fake', "answering the provider's call");
    assert.match(JSON.stringify(result.content), /tangerine-42/, "the file's content, read by Claude Code");
    assert.equal(readFileSync(notes, 'utf8'), 'The launch code is tangerine-42.\n');
  });

  it('answers through a route to a Gemini pool, translated', async () => {
    const turn = await claude(['--model', 'claude-via-gemini', '--', 'hello gemini']);
    assert.equal(turn.code, 0, `claude answered: ${turn.stdout}${turn.stderr}`);
    assert.match(turn.stdout, /Hello from the fake provider\./, "the Gemini pool's reply, as Claude Code shows it");
    const asked = (await fake.requests()).filter((r) => r.key === KEY_G);
    assert.equal(asked.length, 1, 'one generateContent request to the Gemini pool');
    assert.match(asked[0].path, /gemini-2\.5-pro:streamGenerateContent/, "the route's model, streamed");
    const { contents } = JSON.parse(asked[0].body);
    const asking = contents.filter((c) => c.role === 'user' && JSON.stringify(c.parts).includes('hello gemini'));
    assert.equal(asking.length, 1, 'the question, carried in a user turn');
  });

  it("reads its key from Keypool's key helper, with no token in its settings", async () => {
    // What the app's Connect writes with the key helper on: the address in `env`, the token
    // only in a file of Keypool's own (0600), printed by `apiKeyHelper`.
    const home = mkdtempSync(join(tmpdir(), 'keypool-helper-home-'));
    try {
      const kept = join(home, 'keypool-data', 'agents', 'claude-code');
      mkdirSync(kept, { recursive: true, mode: 0o700 });
      writeFileSync(join(kept, 'token'), TOKEN, { mode: 0o600 });
      mkdirSync(join(home, '.claude'));
      const settings = { apiKeyHelper: `cat '${join(kept, 'token')}'`, env: { ANTHROPIC_BASE_URL: server.url } };
      writeFileSync(join(home, '.claude', 'settings.json'), `${JSON.stringify(settings, null, 2)}\n`);
      chmodSync(join(home, '.claude', 'settings.json'), 0o644);
      const before = (await messages()).length;
      const turn = await run(CLAUDE, ['-p', '--model', 'claude-sonnet-4-6', 'via the helper'], {
        cwd: server.work,
        env: { HOME: home, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1' },
      });
      assert.equal(turn.code, 0, `claude answered: ${turn.stdout}${turn.stderr}`);
      assert.match(turn.stdout, /Hello from the fake provider\./, "the pool's reply, with the helper's token");
      const asked = (await messages()).slice(before);
      assert.equal(asked.length, 1, 'one Messages request');
      assert.match(asked[0].last_user, /via the helper$/);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
