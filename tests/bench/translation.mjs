// What translation adds to a request: keypool-server (release build) in front of the fake
// provider, an Anthropic Messages client asking the same OpenAI-kind pool as-is (an OpenAI
// client, Chat Completions) and translated (an Anthropic client routed to it), interleaved so
// both see the same machine. Prints medians of the whole time and of the first token streamed,
// over N requests each (N=600 unless given), and the server's CPU per request of each kind
// (median over blocks of 100).
// A benchmark, not a test: `node tests/bench/translation.mjs` after
// `cargo build --release -p keypool-server -p keypool-fake-provider`.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort, startFakeProvider } from '../e2e/harness.mjs';

const N = Number(process.env.N ?? 600);
const root = resolve(import.meta.dirname, '..', '..');
const release = (name) => join(process.env.CARGO_TARGET_DIR ?? join(root, 'target'), 'release', name);
process.env.KEYPOOL_FAKE_PROVIDER_BINARY ??= release('keypool-fake-provider');
const TOKEN = 'kp-bench-token-0123456789abcdef0123456789';

const fake = await startFakeProvider();
const dir = mkdtempSync(join(tmpdir(), 'keypool-bench-translation-'));
const port = await freePort();
writeFileSync(
  join(dir, 'keypool.toml'),
  `[[providers]]\nname = "pool"\nkind = "openai"\nbase_url = "${fake.url}/v1"\nmodels = ["gpt-5"]\n` +
    `[[providers.keys]]\nkey = "sk-bench-aaaaaaaaaaaaaaaaaaaaaaaa-0001"\n` +
    `[[routes]]\nmodel = "claude-sonnet-4-6"\nto = "pool/gpt-5"\n`,
);
writeFileSync(join(dir, 'token'), `${TOKEN}\n`, { mode: 0o600 });
const server = spawn(
  release('keypool-server'),
  ['serve', '--data-dir', join(dir, 'data'), '--listen', `127.0.0.1:${port}`, '--config', join(dir, 'keypool.toml'), '--token-file', join(dir, 'token')],
  // Request log lines off, as nginx's access log is in the relay's benchmark.
  { stdio: 'ignore', env: { ...process.env, RUST_LOG: 'warn' } },
);
const url = `http://127.0.0.1:${port}`;
for (let i = 0; ; i++) {
  if (await fetch(`${url}/healthz`).then((r) => r.ok, () => false)) break;
  if (i > 200) throw new Error('keypool-server did not start');
  await new Promise((ok) => setTimeout(ok, 50));
}

const requests = {
  asIs: {
    path: '/v1/chat/completions',
    headers: { authorization: `Bearer ${TOKEN}` },
    body: (stream, i) => ({ model: 'gpt-5', stream, messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: `hi ${i}` }] }),
  },
  translated: {
    path: '/v1/messages',
    headers: { 'x-api-key': TOKEN, 'anthropic-version': '2023-06-01' },
    body: (stream, i) => ({ model: 'claude-sonnet-4-6', max_tokens: 64, stream, system: 'be brief', messages: [{ role: 'user', content: `hi ${i}` }] }),
  },
};

/** One request: its whole time and (streamed) the time to the first text, in ms. */
async function once(kind, stream, i) {
  const { path, headers, body } = requests[kind];
  const started = performance.now();
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body(stream, i)),
  });
  let first;
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    if (first === undefined && /Hello/.test(text)) first = performance.now() - started;
  }
  if (response.status !== 200) throw new Error(`${kind}: HTTP ${response.status} ${text}`);
  return { total: performance.now() - started, first };
}

/** The server's CPU time so far, in ms: the sum over its threads of the nanoseconds each ran
 * (`/proc/<pid>/task/<tid>/schedstat`; `/proc/<pid>/stat` counts in 10 ms ticks). */
function cpu() {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${server.pid}/task`)) {
    ns += Number(readFileSync(`/proc/${server.pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
  }
  return ns / 1e6;
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

// Blocks of requests of one kind, the kinds alternating, so both see the same machine; the
// server's CPU is read per block.
const BLOCK = 100;
const rows = [];
for (const stream of [false, true]) {
  const times = { asIs: [], translated: [] };
  const cpuPerRequest = { asIs: [], translated: [] };
  for (let i = 0; i < 20; i++) for (const kind of Object.keys(times)) await once(kind, stream, i); // warm up
  for (let block = 0; block < Math.ceil(N / BLOCK); block++) {
    for (const kind of Object.keys(times)) {
      const before = cpu();
      for (let i = 0; i < BLOCK; i++) times[kind].push(await once(kind, stream, i));
      cpuPerRequest[kind].push(((cpu() - before) * 1000) / BLOCK);
    }
  }
  for (const kind of Object.keys(times)) {
    rows.push({
      answer: stream ? 'streamed' : 'whole',
      request: kind === 'asIs' ? 'as-is (OpenAI client)' : 'translated (Anthropic client → OpenAI pool)',
      'median ms': median(times[kind].map((t) => t.total)).toFixed(2),
      'first text ms': stream ? median(times[kind].map((t) => t.first)).toFixed(2) : '',
      'server CPU µs/request': median(cpuPerRequest[kind]).toFixed(0),
    });
  }
}
console.table(rows);
server.kill('SIGTERM');
fake.stop();
