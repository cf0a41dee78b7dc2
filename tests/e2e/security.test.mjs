// The web view in the real window: the CSP blocks remote origins, and commands outside the
// capability (plugins the app does not ship) are refused.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { launchApp } from './harness.mjs';

describe('web view security', () => {
  let app;
  before(async () => {
    app = await launchApp();
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
});
