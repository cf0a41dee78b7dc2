// A crash in the middle of a run of writes: the page keeps adding keys, the app is killed with
// SIGKILL, and after a restart every write the page saw acknowledged is there, intact.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { launchApp, tempDataDir } from './harness.mjs';

describe('crash during writes', () => {
  it('keeps every acknowledged write after SIGKILL', async () => {
    const dataDir = tempDataDir();
    const app = await launchApp({ dataDir });
    await app.find('app-shell');
    // Start writing in the page, without waiting: acknowledged ids collect in window.__acked.
    await app.driver.executeScript(`
      window.__acked = [];
      (async () => {
        for (let i = 0; ; i += 1) {
          const key = await window.__TAURI_INTERNALS__.invoke('llmConfig:addApiKey',
            { providerId: 'openai', apiKey: 'sk-crash-e2e-' + String(i).padStart(6, '0') + '-abcdef', weight: (i % 100) + 1 });
          window.__acked.push([key.id, key.weight]);
        }
      })();
    `);
    let acked = [];
    for (let polls = 0; acked.length < 60; polls += 1) {
      assert.ok(polls < 5000, `the page kept writing (${acked.length} acknowledged)`);
      acked = await app.driver.executeScript('return window.__acked.slice()');
    }
    app.crash();

    // The file is sound before anything else opens it.
    const check = execFileSync('python3', [
      '-c',
      'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); print(c.execute("PRAGMA integrity_check").fetchone()[0])',
      join(dataDir, 'keypool.sqlite3'),
    ]).toString().trim();
    assert.equal(check, 'ok', 'the database passes integrity_check after SIGKILL');

    const again = await launchApp({ dataDir });
    try {
      await again.find('app-shell');
      const result = await again.invoke('llmConfig:getApiKeys', { providerId: 'openai' });
      assert.ok(result.ok, `the keys can be read after the crash: ${JSON.stringify(result.error)}`);
      const stored = new Map(result.value.map((k) => [k.id, k.weight]));
      for (const [id, weight] of acked) {
        assert.equal(stored.get(id), weight, `acknowledged key ${id} survived with its weight`);
      }
      assert.ok(stored.size >= acked.length, 'nothing acknowledged is missing');
    } finally {
      await again.stop();
    }
  });
});
