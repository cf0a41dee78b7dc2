// The web view in the real window: the CSP blocks remote origins, commands outside the
// capability (plugins the app does not ship) are refused, and the opener opens http(s) URLs in
// the system browser and nothing else (no file:, no javascript:, no chosen program, no paths).
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { launchApp } from './harness.mjs';

describe('web view security', () => {
  let app;
  // A stand-in for the system browser: the opener runs `xdg-open URL`, which records it.
  const bin = mkdtempSync(join(tmpdir(), 'keypool-bin-'));
  const opened = join(bin, 'opened.txt');
  writeFileSync(join(bin, 'xdg-open'), `#!/bin/sh\nprintf '%s\\n' "$1" >> '${opened}'\n`);
  chmodSync(join(bin, 'xdg-open'), 0o755);
  before(async () => {
    app = await launchApp({ env: { PATH: `${bin}:${process.env.PATH}` } });
    await app.find('app-shell');
  });
  after(async () => app?.stop());

  it('blocks a remote image and an inline script by CSP', async () => {
    const violations = await app.driver.executeAsyncScript(`
      const done = arguments[arguments.length - 1];
      const seen = [];
      document.addEventListener('securitypolicyviolation', (e) => {
        seen.push(e.violatedDirective);
        if (seen.length === 2) done(seen);
      });
      const img = document.createElement('img');
      img.src = 'https://example.invalid/pixel.png';
      document.body.appendChild(img);
      const script = document.createElement('script');
      script.textContent = 'window.__inlineRan = true;';
      document.body.appendChild(script);
      setTimeout(() => done(seen), 3000);
    `);
    assert.ok(violations.some((d) => d.startsWith('img-src')), `the remote image is refused: ${violations}`);
    assert.ok(violations.some((d) => d.startsWith('script-src')), `the inline script is refused: ${violations}`);
    assert.equal(await app.driver.executeScript('return window.__inlineRan === true'), false, 'the inline script never ran');
  });

  it('refuses commands the capability does not grant', async () => {
    for (const command of ['plugin:fs|read_file', 'plugin:shell|execute', 'plugin:http|fetch']) {
      const result = await app.invoke(command, { path: '/etc/passwd' });
      assert.equal(result.ok, false, `${command} must be refused`);
    }
  });

  it('lets the opener open only http(s) URLs, in the default browser', async () => {
    const refused = [
      ['plugin:opener|open_url', { url: 'file:///etc/passwd' }],
      ['plugin:opener|open_url', { url: 'javascript:alert(1)' }],
      ['plugin:opener|open_url', { url: 'mailto:someone@example.test' }],
      ['plugin:opener|open_url', { url: 'https://example.test/page', with: 'sh' }],
      ['plugin:opener|open_path', { path: '/etc/passwd' }],
      ['plugin:opener|reveal_item_in_dir', { paths: ['/etc/passwd'] }],
    ];
    for (const [command, args] of refused) {
      const result = await app.invoke(command, args);
      assert.equal(result.ok, false, `${command} ${JSON.stringify(args)} must be refused`);
    }
    assert.equal(existsSync(opened), false, 'nothing was handed to the browser');
    for (const url of ['https://example.test/page?q=1', 'http://example.test/']) {
      const result = await app.invoke('plugin:opener|open_url', { url });
      assert.equal(result.ok, true, `${url} may be opened: ${JSON.stringify(result.error)}`);
    }
    // The browser is started detached: wait until both URLs reached it.
    const lines = () => (existsSync(opened) ? readFileSync(opened, 'utf8').trim().split('\n') : []);
    await app.driver.wait(() => lines().length === 2, 15_000, 'both URLs reach the browser');
    assert.deepEqual(lines().sort(), ['http://example.test/', 'https://example.test/page?q=1']);
  });
});
