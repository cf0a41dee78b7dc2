// Many providers in a narrow window (issue 45, points 1 and 2): at 800×600, with 12 providers,
// in every language, the window never scrolls sideways (the document, the shell, the settings
// page; then every other page), and a real pointer click at the centre of every provider tab
// chooses that provider (no overlay scrollbar over the tabs, no tab out of reach).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { By, launchApp } from './harness.mjs';
import { click, keepPreferences, waitFor } from './steps.mjs';

const PROVIDERS = 12;

/** How far each box that must never scroll sideways is wider than its window on it. */
const SIDEWAYS = `
  const boxes = { document: document.scrollingElement, body: document.body };
  for (const selector of ['[data-testid="app-shell"]', '.settings', '.settings__body', '.settings__content']) {
    const box = document.querySelector(selector);
    if (box) boxes[selector] = box;
  }
  return Object.fromEntries(Object.entries(boxes).map(([name, box]) => [name, box.scrollWidth - box.clientWidth]));`;

describe('many providers in an 800×600 window', () => {
  let app;
  before(async () => {
    app = await launchApp();
    await app.find('app-shell');
    const listed = await app.invoke('llmConfig:getProviders');
    assert.ok(listed.ok, `getProviders: ${JSON.stringify(listed.error)}`);
    for (let n = listed.value.length + 1; n <= PROVIDERS; n += 1) {
      const added = await app.invoke('llmConfig:addProvider', {
        name: `Provider number ${n}`,
        kind: 'openai',
        baseUrl: `http://127.0.0.1:9/v${n}`,
        models: ['m'],
      });
      assert.ok(added.ok, `addProvider ${n}: ${JSON.stringify(added.error)}`);
    }
    await app.driver.manage().window().setRect({ width: 800, height: 600 });
  });
  after(async () => app?.stop());

  for (const language of ['en', 'zh', 'ja', 'ru']) {
    it(`never scrolls sideways and every tab takes a click at its centre (${language})`, async () => {
      await keepPreferences(app, { language, theme: 'light' });
      await click(app, 'nav-settings');
      await click(app, 'settings-providers');
      await app.find('provider-openai');
      const tabs = await app.driver.findElements(By.css('.provider-list__item'));
      assert.equal(tabs.length, PROVIDERS, 'every provider has its tab');

      // Last to first, so a strip that scrolled would have to bring each back; the pointer rests
      // on each tab (hover) before it presses. Every tab is tried, and the misses named.
      const missed = [];
      for (const tab of [...tabs].reverse()) {
        const id = await tab.getAttribute('data-testid');
        try {
          await app.driver.actions().move({ origin: tab }).pause(150).click().perform();
          await waitFor(
            app,
            () => app.driver.findElement(By.css(`[data-testid="${id}"]`)).getAttribute('aria-current'),
            (current) => current === 'true',
            `${id} chosen`,
            2000,
          );
        } catch (error) {
          missed.push(`${id}: ${error.message.split('\n')[0]}`);
        }
      }

      const wider = await app.driver.executeScript(SIDEWAYS);
      // Nor does a sideways swipe move anything.
      const moved = await app.driver.executeScript(
        `window.scrollBy(400, 0); document.scrollingElement.scrollLeft = 400;
         const content = document.querySelector('.settings__content'); content.scrollLeft = 400;
         const at = { window: window.scrollX, document: document.scrollingElement.scrollLeft, content: content.scrollLeft };
         window.scrollTo(0, window.scrollY); content.scrollLeft = 0;
         return at;`,
      );
      assert.deepEqual(missed, [], `${language}: a click at the centre of every tab chooses it`);
      for (const [box, by] of Object.entries(wider)) {
        assert.ok(by <= 0, `${language}: ${box} is no wider than the window (by ${by}px): ${JSON.stringify(wider)}`);
      }
      assert.deepEqual(moved, { window: 0, document: 0, content: 0 }, `${language}: nothing scrolls sideways`);
      await app.screenshot(`provider-tabs-800-${language}`);

      // Nor does any other page at this width.
      const pages = [
        ['nav-chat', 'chat'],
        ['nav-usage', 'usage'],
        ['nav-settings', 'settings-general', 'general'],
        ['nav-settings', 'settings-localApi', 'local-api'],
        ['nav-settings', 'settings-team', 'team'],
        ['nav-settings', 'settings-about', 'about'],
      ];
      const sideways = [];
      for (const steps of pages) {
        const name = steps.at(-1);
        for (const testId of steps.slice(0, -1)) await click(app, testId);
        await app.driver.sleep(300);
        const by = await app.driver.executeScript(
          `const page = document.scrollingElement;
           const shell = document.querySelector('[data-testid="app-shell"]');
           return Math.max(page.scrollWidth - page.clientWidth, shell ? shell.scrollWidth - shell.clientWidth : 0);`,
        );
        if (by > 0) sideways.push(`${name}: ${by}px`);
        await app.screenshot(`page-800-${name}-${language}`);
      }
      assert.deepEqual(sideways, [], `${language}: no page is wider than an 800 px window`);
    });
  }
});
