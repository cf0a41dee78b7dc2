// axe-core's WCAG 2.1 A/AA rules against the real window, page by page and dialog by dialog, in
// the light and the dark theme; and the key list in every language at the default window width:
// an unlabeled `$NAME` key's "from the environment" tag stays inside its column, and a key whose
// variable is unset reads "Variable not set".
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { Key } from 'selenium-webdriver';
import { By, freePort, launchApp, until } from './harness.mjs';
import { assertAccessible, click, fresh, gone, keepPreferences, retype, textOf, waitFor } from './steps.mjs';

const WAIT = 15_000;
/** The window's size as tauri.conf.json opens it. */
const DEFAULT_WINDOW = { width: 1100, height: 720 };
const UNSET = 'KEYPOOL_E2E_SURELY_UNSET_VARIABLE';

/** Language and theme as Settings → General keeps them (the data directory), then a reload. */
async function usePreferences(app, { language, theme }) {
  await keepPreferences(app, { ...(language ? { language } : {}), ...(theme ? { theme } : {}) });
}

/** Settings → Providers → OpenAI, its key pool shown. */
async function openPool(app) {
  await click(app, 'nav-settings');
  await click(app, 'settings-providers');
  await click(app, 'provider-openai');
  await app.find('key-list');
}

describe('accessibility of the real window', () => {
  let app;
  before(async () => {
    app = await launchApp();
    await app.find('app-shell');
    await app.driver.manage().window().setRect(DEFAULT_WINDOW);
    await app.invoke('llmConfig:addApiKey', { providerId: 'openai', apiKey: 'sk-e2e-accessible-000001', label: 'Production' });
    await app.invoke('llmConfig:addApiKey', { providerId: 'openai', apiKey: `$${UNSET}` });
  });
  after(async () => app?.stop());

  it('finds a violation when there is one (the check itself works)', async () => {
    await app.driver.executeScript(
      `const input = document.createElement('input'); input.id = 'axe-probe'; document.body.appendChild(input);`,
    );
    const violations = await app.axe('#axe-probe');
    await app.driver.executeScript(`document.getElementById('axe-probe').remove();`);
    assert.ok(
      violations.some((v) => v.id === 'label'),
      `an input without a label is reported: ${JSON.stringify(violations.map((v) => v.id))}`,
    );
  });

  for (const theme of ['light', 'dark']) {
    it(`keeps every page and dialog clean in the ${theme} theme`, async () => {
      await usePreferences(app, { theme });
      await click(app, 'nav-chat');
      await app.find('chat-empty');
      await assertAccessible(app, `the empty chat page (${theme})`);
      await click(app, 'chat-new');
      await app.find('new-chat-dialog');
      await assertAccessible(app, `the new-chat dialog (${theme})`, '[data-testid="new-chat-dialog"]');
      await (await app.find('new-chat-dialog')).sendKeys(Key.ESCAPE);
      await gone(app, 'new-chat-dialog');

      await openPool(app);
      await assertAccessible(app, `Settings → Providers with a key pool (${theme})`);
      for (const [open, dialog] of [
        ['add-key', 'add-key-dialog'],
        ['import-keys', 'import-keys-dialog'],
      ]) {
        await click(app, open);
        await app.find(dialog);
        await assertAccessible(app, `${dialog} (${theme})`, `[data-testid="${dialog}"]`);
        await (await app.find(dialog)).sendKeys(Key.ESCAPE);
        await gone(app, dialog);
      }

      // The import's preview (found, repeated, unread lines), before anything is saved.
      await click(app, 'import-keys');
      await (await app.find('import-text-input')).sendKeys(
        ['sk-e2e-accessible-000001', 'sk-e2e-a11y-new-0000002', 'sk-e2e-a11y-new-0000002', 'name: some-long-value-without-a-key'].join(Key.ENTER),
      );
      await click(app, 'import-check');
      await app.find('import-preview');
      await assertAccessible(app, `the import preview (${theme})`, '[data-testid="import-keys-dialog"]');
      await app.screenshot(`settings-import-preview-${theme}`);
      await (await app.find('import-keys-dialog')).sendKeys(Key.ESCAPE);
      await gone(app, 'import-keys-dialog');

      // The bulk bar over a selection, and its two confirmations.
      await click(app, 'key-select-shown');
      await app.find('bulk-bar');
      await assertAccessible(app, `the key table with the bulk bar (${theme})`);
      await app.screenshot(`settings-bulk-bar-${theme}`);
      for (const [open, dialog] of [
        ['bulk-delete', 'bulk-delete-dialog'],
        ['bulk-export-full', 'export-full-dialog'],
      ]) {
        await click(app, open);
        await app.find(dialog);
        await assertAccessible(app, `${dialog} (${theme})`, `[data-testid="${dialog}"]`);
        await (await app.find(dialog)).sendKeys(Key.ESCAPE);
        await gone(app, dialog);
      }
      await click(app, 'bulk-clear');
      await gone(app, 'bulk-bar');
      await click(app, 'key-edit');
      await app.find('edit-key-dialog');
      await assertAccessible(app, `the key edit dialog (${theme})`, '[data-testid="edit-key-dialog"]');
      await app.screenshot(`settings-key-edit-${theme}`);
      await (await app.find('edit-key-dialog')).sendKeys(Key.ESCAPE);
      await gone(app, 'edit-key-dialog');

      await click(app, 'provider-edit');
      await click(app, 'provider-models-list');
      await app.driver.wait(
        async () => (await (await app.find('provider-models-status')).getAttribute('data-state')) !== 'loading',
        WAIT,
        'the model list answers (here: no provider reachable)',
      );
      await assertAccessible(app, `the provider form with its model list (${theme})`);
      await app.screenshot(`settings-provider-edit-${theme}`);
      await click(app, 'provider-form-cancel');

      // A provider not saved yet lists its models too (here: nothing answers at that address).
      await click(app, 'add-provider');
      await app.find('add-provider-dialog');
      await click(app, 'provider-models-list');
      await app.driver.wait(
        async () => (await (await app.find('provider-models-status')).getAttribute('data-state')) !== 'loading',
        WAIT,
        'the unsaved provider is asked for its models',
      );
      await assertAccessible(app, `the add-provider dialog with its model list (${theme})`, '[data-testid="add-provider-dialog"]');
      await app.screenshot(`settings-provider-add-models-${theme}`);
      await (await app.find('add-provider-dialog')).sendKeys(Key.ESCAPE);
      await gone(app, 'add-provider-dialog');

      await click(app, 'settings-general');
      await app.find('general-section');
      await assertAccessible(app, `Settings → General (${theme})`);

      // Settings → Team, off, and with the form's errors and a generated secret showing.
      await click(app, 'settings-team');
      await app.find('team-form');
      await assertAccessible(app, `Settings → Team (${theme})`);
      await retype(await app.find('team-redis-url'), 'ftp://nowhere');
      await click(app, 'team-generate');
      await app.find('team-generated');
      await click(app, 'team-connect');
      await app.find('team-redis-url-field-error');
      await assertAccessible(app, `Settings → Team with an error and a generated secret (${theme})`);
      await app.screenshot(`settings-team-errors-${theme}`);

      // Settings → Local API, on, with a route, the route dialog, the coding agents (one's manual
      // setup open) and the Connect dialog (closed unused: nothing of the agents' is written).
      const port = await freePort();
      assert.ok((await app.invoke('localApi:configure', { enabled: true, port })).ok, 'the local API is on');
      const routes = [{ model: 'claude-*', provider: 'openai', toModel: 'gpt-4o-mini' }];
      assert.ok((await app.invoke('localApi:setRoutes', { routes })).ok, 'a route is saved');
      await click(app, 'settings-localApi');
      await app.find('route-row');
      await app.find('agent-claudeCode');
      await click(app, 'route-add');
      await app.find('route-dialog');
      await assertAccessible(app, `the route dialog (${theme})`, '[data-testid="route-dialog"]');
      await (await app.find('route-dialog')).sendKeys(Key.ESCAPE);
      await gone(app, 'route-dialog');
      await fresh(async () => (await (await app.find('agent-codex')).findElement(By.css('summary'))).click());
      await assertAccessible(app, `Settings → Local API with routes and coding agents (${theme})`);
      await app.screenshot(`settings-local-api-routes-agents-${theme}`);
      await fresh(async () => (await (await app.find('agent-claudeCode')).findElement(By.css('[data-testid="agent-connect"]'))).click());
      await app.find('agent-connect-dialog');
      await assertAccessible(app, `the Connect dialog (${theme})`, '[data-testid="agent-connect-dialog"]');
      await click(app, 'agent-connect-cancel');
      await gone(app, 'agent-connect-dialog');
      if (theme === 'light') {
        await (await app.find('named-token-name-input')).sendKeys('a11y-bot');
        await click(app, 'named-token-create');
        await click(app, 'local-api-token-done');
      }
      await click(app, 'named-token-limits');
      await app.find('token-rules-dialog');
      await assertAccessible(app, `a token's limits (${theme})`, '[data-testid="token-rules-dialog"]');
      await click(app, 'token-rules-cancel');
      await gone(app, 'token-rules-dialog');

      await click(app, 'settings-about');
      const about = await app.find('about');
      assert.match(await textOf(await app.find('about-name')), /^Keypool$/, 'About names the app');
      assert.ok((await textOf(about)).includes('MIT'), 'and its licence');
      const filter = await app.find('third-party-filter');
      assert.match(await textOf(await app.find('third-party-count')), /^\d[\d,]* packages$/, 'the third-party list loads and counts its packages');
      await assertAccessible(app, `Settings → About (${theme})`);
      await app.screenshot(`settings-about-${theme}`);

      // By keyboard: filter, Tab to the matching group (open while filtering), Tab to its
      // licence's text, Enter to read it.
      await filter.sendKeys('react-markdown');
      await waitFor(app, async () => textOf(await app.find('third-party-count')), (text) => text === '1 package matches', 'the filter finds one package');
      await app.driver.switchTo().activeElement().sendKeys(Key.TAB);
      const activeText = async () => textOf(await app.driver.switchTo().activeElement());
      assert.match(await activeText(), /^MIT\b/, 'Tab from the filter reaches the matching group’s summary');
      await app.driver.switchTo().activeElement().sendKeys(Key.TAB);
      assert.equal(await activeText(), 'Text of the MIT License', 'then its licence text’s summary');
      await app.driver.switchTo().activeElement().sendKeys(Key.ENTER);
      const text = await app.driver.wait(until.elementLocated(By.css('[data-testid="licence-text"] pre')), WAIT, 'Enter opens the licence text');
      assert.ok((await textOf(text)).includes('Permission is hereby granted'), 'the MIT licence’s text is shown');
      await assertAccessible(app, `Settings → About, the third-party list filtered and a licence open (${theme})`, '[data-testid="third-party"]');
      await app.screenshot(`settings-about-licences-${theme}`);
    });
  }

  it('shows a $NAME key whose variable is unset as such, not as Active', async () => {
    await usePreferences(app, { language: 'en', theme: 'light' });
    await openPool(app);
    const state = await app.driver.wait(async () => {
      for (const row of await app.driver.findElements(By.css('[data-testid="key-row"]'))) {
        if ((await textOf(await row.findElement(By.css('[data-testid="key-preview"]')))) === `$${UNSET}`) {
          return row.findElement(By.css('[data-testid="key-state"]'));
        }
      }
      return false;
    }, WAIT);
    assert.equal(await state.getAttribute('data-state'), 'unsetVar');
    assert.equal(await textOf(state), 'Variable not set');
    assert.match(await state.getAttribute('title'), new RegExp(UNSET), 'the tooltip names the variable');
  });

  for (const language of ['en', 'ru', 'ja', 'zh']) {
    it(`keeps the environment tag inside the key column, and every row inside the pool, at the default width (${language})`, async () => {
      await usePreferences(app, { language, theme: 'light' });
      await openPool(app);
      const tag = await app.driver.wait(until.elementLocated(By.css('[data-testid="key-env-tag"]')), WAIT);
      const layout = await app.driver.executeScript(
        `const tag = arguments[0];
         const row = tag.closest('[data-testid="key-row"]');
         const name = row.querySelector('.key-row__name').getBoundingClientRect();
         const weight = row.querySelector('.key-row__weight').getBoundingClientRect();
         const box = tag.getBoundingClientRect();
         const overflow = [...document.querySelectorAll('.key-table__head-row, .key-row')].map((r) => r.scrollWidth - r.clientWidth);
         return { width: window.innerWidth, tagRight: box.right, nameRight: name.right, weightLeft: weight.left,
                  truncated: tag.scrollWidth > tag.clientWidth, title: tag.title, text: tag.textContent, overflow };`,
        tag,
      );
      assert.ok(layout.tagRight <= layout.nameRight + 0.5, `${language}: the tag ends inside its column: ${JSON.stringify(layout)}`);
      assert.ok(layout.tagRight <= layout.weightLeft, `${language}: the tag does not run into the weight column: ${JSON.stringify(layout)}`);
      assert.equal(layout.title, layout.text, `${language}: the whole text is in its tooltip`);
      assert.deepEqual(layout.overflow.filter((px) => px > 0), [], `${language}: no row of the key table runs past the pool: ${JSON.stringify(layout)}`);
      // Each heading stands over its column (USAGE over the counts, ON over the switch).
      const columns = await app.driver.executeScript(
        // Columns: select, order (the handle), key, weight, state, usage, on, actions.
        `const head = [...document.querySelector('.key-table__head-row').children].map((c) => c.getBoundingClientRect());
         const row = document.querySelector('[data-testid="key-row"]');
         const counts = row.querySelector('[data-testid="key-usage"]').getBoundingClientRect();
         const toggle = row.querySelector('[role="switch"]').getBoundingClientRect();
         return { usage: [head[5].left, counts.left], on: [head[6].left + head[6].width / 2, toggle.left + toggle.width / 2] };`,
      );
      assert.ok(Math.abs(columns.usage[0] - columns.usage[1]) <= 1, `${language}: the usage heading starts where its column does: ${JSON.stringify(columns)}`);
      assert.ok(Math.abs(columns.on[0] - columns.on[1]) <= 1, `${language}: the on heading is centred over the switch: ${JSON.stringify(columns)}`);
      // A Latin font first (never system-ui, which may be a CJK font with full-width quotes), then
      // the CJK font of the page's own language: Japanese is not drawn with Chinese glyphs.
      const fonts = await app.driver.executeScript('return getComputedStyle(document.body).fontFamily');
      const families = fonts.split(',').map((f) => f.trim().replace(/^["']|["']$/g, ''));
      assert.ok(!families.includes('system-ui'), `${language}: no system-ui: ${fonts}`);
      assert.ok(!/CJK/.test(families[0]), `${language}: a Latin font comes first: ${fonts}`);
      // On Linux, Linux desktops' families only, and the first one installed here: each family
      // WebKitGTK looks for and does not find costs the first paint a fontconfig lookup.
      if (process.platform === 'linux') {
        assert.ok(!families.includes('Segoe UI'), `${language}: no Windows family: ${fonts}`);
        const installed = spawnSync('fc-list', ['-q', families[0]]).status === 0;
        assert.ok(installed, `${language}: ${families[0]} is installed: ${fonts}`);
      }
      const cjk = families.find((f) => /CJK/.test(f));
      assert.equal(cjk, language === 'ja' ? 'Noto Sans CJK JP' : 'Noto Sans CJK SC', `${language}: the CJK font of the language: ${fonts}`);
      await app.driver.executeScript("arguments[0].scrollIntoView({ block: 'center' })", tag);
      await app.screenshot(`settings-key-list-${language}`);
    });
  }
});
