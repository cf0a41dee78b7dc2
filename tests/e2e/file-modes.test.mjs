// Who may read what Keypool writes: the data directory and logs/ are the user's alone (0700), the
// log, the database and its -wal/-shm files too (0600), from a first start with a data directory
// that does not exist yet; and after a start over looser modes (an older Keypool, a copy, a
// restore), they are tightened back and the log says so.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { launchApp, tempDataDir } from './harness.mjs';

const modeOf = (path) => statSync(path).mode & 0o777;
const octal = (mode) => `0${mode.toString(8)}`;

describe('file modes of the data directory', () => {
  // A directory that does not exist yet, so the app creates it (mkdtemp's own is already 0700).
  const dataDir = join(tempDataDir('keypool-e2e-modes-'), 'data');
  const logDir = join(dataDir, 'logs');
  const dirs = [dataDir, logDir];
  const files = [join(logDir, 'keypool.log'), join(dataDir, 'keypool.sqlite3')];
  const companions = [join(dataDir, 'keypool.sqlite3-wal'), join(dataDir, 'keypool.sqlite3-shm')];
  let umask;
  let app;

  before(() => {
    // The usual umask: anything stricter than 022 comes from Keypool, not from the environment.
    umask = process.umask(0o022);
  });
  after(async () => {
    await app?.stop();
    process.umask(umask);
  });

  /** Asserts owner-only modes on everything present; returns the companions that were there. */
  function assertPrivate(when) {
    for (const dir of dirs) assert.equal(octal(modeOf(dir)), '0700', `${when}: ${dir} is the user's alone`);
    for (const file of files) assert.equal(octal(modeOf(file)), '0600', `${when}: ${file} is readable by the user only`);
    const present = companions.filter((file) => existsSync(file));
    for (const file of present) assert.equal(octal(modeOf(file)), '0600', `${when}: ${file} is readable by the user only`);
    return present;
  }

  it('creates them owner-only on a first start', async () => {
    assert.equal(existsSync(dataDir), false, 'the data directory does not exist before the first start');
    app = await launchApp({ dataDir });
    await app.find('app-shell');
    // A write, so the database has a write-ahead log and its shared-memory index.
    const added = await app.invoke('llmConfig:addApiKey', { providerId: 'openai', apiKey: 'sk-e2e-modes-MMMMMMMMMMMM0600' });
    assert.ok(added.ok, `a key can be saved: ${JSON.stringify(added.error)}`);
    const present = assertPrivate('after a first start');
    assert.deepEqual(present, companions, 'while the app runs in WAL mode, both -wal and -shm exist and were checked');
  });

  it('tightens looser modes at the next start, and logs it', async () => {
    await app.stop();
    app = undefined;
    for (const dir of dirs) chmodSync(dir, 0o755);
    // -wal and -shm outlive a stop that does not close the database cleanly (as here).
    const loosened = [...files, ...companions.filter((file) => existsSync(file))];
    for (const file of loosened) chmodSync(file, 0o644);
    for (const path of [...dirs, ...loosened]) assert.notEqual(modeOf(path) & 0o044, 0, `${path} is readable by others before the start`);

    app = await launchApp({ dataDir });
    await app.find('app-shell');
    const status = await app.invoke('app:getStatus');
    assert.equal(status.value?.database.state, 'ready', `the database opens as before: ${JSON.stringify(status)}`);
    assertPrivate('after a start over looser modes');
    const keys = await app.invoke('llmConfig:getApiKeys', { providerId: 'openai' });
    assert.deepEqual(keys.value?.map((k) => k.apiKeyPreview), ['sk-…0600'], 'the data is kept');
    const log = readFileSync(join(logDir, 'keypool.log'), 'utf8');
    for (const path of [...dirs, ...loosened]) {
      assert.ok(
        log.split('\n').some((line) => line.includes('tightened permissions') && line.includes(path)),
        `the log says ${path} was tightened`,
      );
    }
  });
});
