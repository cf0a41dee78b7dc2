// What the coding-agent tests share: keypool-server started on a config of the test's own, and an
// agent CLI run in a home and a working folder of its own, as a user would run it.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../e2e/harness.mjs';

export const TOKEN = 'kp-agents-test-token-0123456789abcdef0123';

/** Polls `check` until it holds, for at most 10 s. */
export async function eventually(what, check) {
  for (let i = 0; i < 200; i++) {
    if (await check().catch(() => false)) return;
    await new Promise((ok) => setTimeout(ok, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/**
 * Starts keypool-server on `config` (TOML) with the test token: { url, dir, home, work, stop() }.
 * `home` and `work` are empty folders for the agent's own files and its working folder.
 */
export async function startServer(config) {
  const dir = mkdtempSync(join(tmpdir(), 'keypool-agents-'));
  const port = await freePort();
  writeFileSync(join(dir, 'keypool.toml'), config);
  writeFileSync(join(dir, 'token'), `${TOKEN}\n`, { mode: 0o600 });
  const args = ['serve', '--data-dir', join(dir, 'data'), '--listen', `127.0.0.1:${port}`];
  args.push('--config', join(dir, 'keypool.toml'), '--token-file', join(dir, 'token'));
  const server = spawn(process.env.KEYPOOL_SERVER_BINARY, args, { stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  await eventually('keypool-server serves', async () => (await fetch(`${url}/healthz`)).ok);
  const home = join(dir, 'home');
  const work = join(dir, 'work');
  mkdirSync(home);
  mkdirSync(work);
  return { url, dir, home, work, stop: () => server.kill('SIGTERM') };
}

/** Runs `program` with `args` in `cwd` and only the environment given (PATH aside): its output. */
export function run(program, args, { cwd, env }) {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, {
      cwd,
      env: { PATH: process.env.PATH, NO_COLOR: '1', ...env },
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

/** A provider of the server's config, its keys labelled by their position. */
export function provider(name, kind, baseUrl, models, keys) {
  const head = `[[providers]]\nname = "${name}"\nkind = "${kind}"\nbase_url = "${baseUrl}"\nmodels = ${JSON.stringify(models)}\n`;
  return head + keys.map((key, i) => `[[providers.keys]]\nkey = "${key}"\nlabel = "${name}-${i + 1}"\n`).join('');
}

/** A route of the server's config. */
export function route(model, to) {
  return `[[routes]]\nmodel = "${model}"\nto = "${to}"\n`;
}
