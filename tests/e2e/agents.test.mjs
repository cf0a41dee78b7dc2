// The coding agents (the real Codex CLI, Claude Code and Gemini CLI, pinned; tests/agents/install.sh)
// against the real app's local API: each answers as-is from its own vendor's pool, a session stays
// on one key, and each reaches another kind's pool by `provider/model`, translated. The same CLIs
// through keypool-server: tests/agents/.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { run } from '../agents/support.mjs';
import { freePort, launchApp, startFakeProvider } from './harness.mjs';

const KEYS = {
  openai: ['sk-agent-OPENAI-AAAAAAAAAAAAAAAAAAAA-0001', 'sk-agent-OPENAI-BBBBBBBBBBBBBBBBBBBB-0002'],
  anthropic: ['sk-ant-agent-CCCCCCCCCCCCCCCCCCCCCC-0003', 'sk-ant-agent-DDDDDDDDDDDDDDDDDDDDDD-0004'],
  gemini: ['AIzaSyAgentEeeeeeeeeeeeeeeeeeeeeeeeee05', 'AIzaSyAgentFfffffffffffffffffffffffff06'],
};
const MODELS = { openai: 'gpt-5', anthropic: 'claude-sonnet-4-6', gemini: 'gemini-2.5-pro' };
const REPLY = /Hello from the fake provider\./;

describe('the coding agents through the app\'s local API', () => {
  let app;
  let fake;
  let address;
  let token;
  /** Each provider's id, by kind. */
  const ids = {};
  let home;
  let work;

  /** The agent's environment: its home (its config) and the local token where it reads it. */
  const env = () => ({
    HOME: home,
    KEYPOOL_TOKEN: token,
    ANTHROPIC_BASE_URL: address,
    ANTHROPIC_API_KEY: token,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    GOOGLE_GEMINI_BASE_URL: address,
    GEMINI_API_KEY: token,
    GEMINI_CLI_TRUST_WORKSPACE: 'true',
  });
  const codex = (model, prompt) =>
    run(process.env.KEYPOOL_CODEX, ['exec', '--skip-git-repo-check', '-m', model, prompt], { cwd: work, env: env() });
  const claude = (args) => run(process.env.KEYPOOL_CLAUDE, ['-p', ...args], { cwd: work, env: env() });
  const gemini = (model, prompt) => run(process.env.KEYPOOL_GEMINI, ['-m', model, '-p', prompt], { cwd: work, env: env() });
  const requests = async (kind) => (await fake.requests()).filter((r) => KEYS[kind].includes(r.key) && !r.path.endsWith('/models'));

  before(async () => {
    fake = await startFakeProvider();
    app = await launchApp();
    await app.find('app-shell');
    const baseUrls = { openai: `${fake.url}/v1`, anthropic: fake.url, gemini: fake.url };
    for (const kind of Object.keys(KEYS)) {
      const added = await app.invoke('llmConfig:addProvider', { name: `Agents ${kind}`, kind, baseUrl: baseUrls[kind], models: [MODELS[kind]] });
      assert.ok(added.ok, `addProvider ${kind}: ${JSON.stringify(added.error)}`);
      ids[kind] = added.value.id;
      for (const [index, apiKey] of KEYS[kind].entries()) {
        const key = await app.invoke('llmConfig:addApiKey', { providerId: added.value.id, apiKey, label: `${kind} ${index + 1}` });
        assert.ok(key.ok, `addApiKey: ${JSON.stringify(key.error)}`);
      }
    }
    const configured = await app.invoke('localApi:configure', { enabled: true, port: await freePort() });
    assert.ok(configured.ok && configured.value.running, `the local API runs: ${JSON.stringify(configured)}`);
    ({ address, token } = configured.value);
    const dir = mkdtempSync(join(tmpdir(), 'keypool-e2e-agents-'));
    home = join(dir, 'home');
    work = join(dir, 'work');
    mkdirSync(join(home, '.codex'), { recursive: true });
    mkdirSync(join(home, '.gemini'));
    mkdirSync(work);
    // What Settings → Local API and the README tell a user to write.
    writeFileSync(
      join(home, '.codex', 'config.toml'),
      `model_provider = "keypool"\n[model_providers.keypool]\nname = "Keypool"\nbase_url = "${address}/v1"\n` +
        'env_key = "KEYPOOL_TOKEN"\nwire_api = "responses"\nsupports_websockets = false\n',
    );
    writeFileSync(join(home, '.gemini', 'settings.json'), JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } } }));
  });

  after(async () => {
    await app?.stop();
    fake?.stop();
  });

  it('Claude Code answers from the Anthropic pool, a continued session on one key', async () => {
    const first = await claude(['--model', MODELS.anthropic, '--', 'say hi']);
    assert.equal(first.code, 0, `claude answered: ${first.stdout}${first.stderr}`);
    assert.match(first.stdout, REPLY);
    const second = await claude(['--model', MODELS.anthropic, '--continue', '--', 'and again']);
    assert.equal(second.code, 0, `the session continued: ${second.stdout}${second.stderr}`);
    const asked = await requests('anthropic');
    assert.equal(asked.length, 2, 'one Messages request a turn');
    assert.equal(asked[0].key, asked[1].key, 'one session, one key');
  });

  it('Codex answers from the OpenAI pool through the Responses API', async () => {
    const turn = await codex(MODELS.openai, 'say hi');
    assert.equal(turn.code, 0, `codex answered: ${turn.stderr}`);
    assert.match(turn.stdout, REPLY);
    const asked = await requests('openai');
    assert.deepEqual(asked.map((r) => r.path), ['/v1/responses'], 'relayed to the provider\'s Responses API');
  });

  it('Gemini CLI answers from the Gemini pool', async () => {
    const turn = await gemini(MODELS.gemini, 'say hi');
    assert.equal(turn.code, 0, `gemini answered: ${turn.stdout}${turn.stderr}`);
    assert.match(turn.stdout, REPLY);
    const asked = await requests('gemini');
    assert.equal(asked.length, 1, `one generateContent request: ${asked.map((r) => r.path)}`);
  });

  it('each reaches the other kinds\' pools by provider/model, translated', async () => {
    const before = (await fake.requests()).length;
    const turns = [
      ['Claude Code → OpenAI', () => claude(['--model', `${ids.openai}/${MODELS.openai}`, '--', 'via openai']), '/v1/chat/completions'],
      ['Codex → Anthropic', () => codex(`${ids.anthropic}/${MODELS.anthropic}`, 'via anthropic'), '/v1/messages'],
      ['Gemini CLI → Anthropic', () => gemini(`${ids.anthropic}/${MODELS.anthropic}`, 'via anthropic too'), '/v1/messages'],
      ['Claude Code → Gemini', () => claude(['--model', `${ids.gemini}/${MODELS.gemini}`, '--', 'via gemini']), `/v1beta/models/${MODELS.gemini}:streamGenerateContent`],
      ['Codex → Gemini', () => codex(`${ids.gemini}/${MODELS.gemini}`, 'via gemini too'), `/v1beta/models/${MODELS.gemini}:streamGenerateContent`],
      ['Gemini CLI → OpenAI', () => gemini(`${ids.openai}/${MODELS.openai}`, 'via openai too'), '/v1/chat/completions'],
    ];
    for (const [what, turn, path] of turns) {
      const seen = (await fake.requests()).length;
      const answer = await turn();
      assert.equal(answer.code, 0, `${what}: ${answer.stdout}${answer.stderr}`);
      assert.match(answer.stdout, REPLY, what);
      const asked = (await fake.requests()).slice(seen).filter((r) => !r.path.endsWith('/models'));
      assert.deepEqual(asked.map((r) => r.path), [path], `${what}: one request in the provider's API`);
    }
    assert.ok((await fake.requests()).length > before);
    const usage = await app.invoke('usage:getSummary', {});
    assert.ok(usage.ok, `usage: ${JSON.stringify(usage.error)}`);
    const completions = (await fake.requests()).filter((r) => !r.path.endsWith('/models')).length;
    assert.equal(usage.value.totals.requests, completions, 'the ledger has every request the agents made');
  });
});
