// The built app opens, the shell renders and navigates, the data directory is honoured.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { launchApp, tempDataDir } from './harness.mjs';

describe('app shell', () => {
  let app;
  before(async () => {
    app = await launchApp();
  });
  after(async () => app?.stop());

  it('renders the shell with Chat first', async () => {
    await app.find('app-shell');
    const chat = await app.find('chat-page');
    assert.match(await chat.getText(), /Chat/, 'the chat page is the first page shown');
    await app.screenshot('smoke-chat');
  });

  it('navigates to Settings → Providers', async () => {
    await (await app.find('nav-settings')).click();
    const providers = await app.find('providers-section');
    assert.match(await providers.getText(), /Providers/, 'Settings opens on the providers section');
    const current = await (await app.find('nav-settings')).getAttribute('aria-current');
    assert.equal(current, 'page', 'the rail marks Settings as the current page');
    await app.screenshot('smoke-settings-providers');
  });

  it('keeps its database and log in KEYPOOL_DATA_DIR', async () => {
    const result = await app.invoke('app:getStatus');
    assert.ok(result.ok, `app:getStatus must answer: ${JSON.stringify(result)}`);
    assert.equal(result.value.dataDir, app.dataDir, 'the data dir is the one from the environment');
    assert.equal(result.value.database.state, 'ready', 'a fresh data dir opens');
    assert.ok(existsSync(join(app.dataDir, 'keypool.sqlite3')), 'the database file is in the data dir');
    const log = readFileSync(join(app.dataDir, 'logs', 'keypool.log'), 'utf8');
    assert.match(log, /Keypool starting/, 'the log file receives tracing output');
  });

  it('rejects a command with unknown arguments with a structured error', async () => {
    const result = await app.invoke('app:getStatus', { bogus: true });
    assert.equal(result.ok, false, 'unknown fields are rejected');
    assert.equal(result.error.code, 'validation', `the error is structured: ${JSON.stringify(result.error)}`);
    assert.equal(result.error.issues[0].path, 'bogus', 'the issue names the field');
  });
});

describe('a damaged database', () => {
  it('is reported to the user and left untouched', async () => {
    const dataDir = tempDataDir();
    const file = join(dataDir, 'keypool.sqlite3');
    const garbage = Buffer.from('this is not an SQLite database, but it is somebody\'s file\n'.repeat(200));
    writeFileSync(file, garbage);
    const app = await launchApp({ dataDir });
    try {
      const problem = await app.find('startup-problem');
      const text = await problem.getText();
      assert.match(text, /could not open your data/, 'the user is told the data could not be opened');
      assert.match(text, /keypool\.sqlite3/, 'the message names the file');
      await app.screenshot('smoke-damaged-database');
    } finally {
      await app.stop();
    }
    assert.deepEqual(readFileSync(file), garbage, 'the damaged file is byte-for-byte unchanged');
    assert.equal(statSync(file).size, garbage.length, 'and not truncated');
  });
});
