// What a first-time user sees at the default window size (1100×720), in every language (issue
// 45, points 12 and 14): code in monospace (Chinese and Japanese too), every key-table header
// inside its own column, the import's three fields on one line, the chat search's placeholder
// whole, a text chip's remove button on its chip, the Usage keys table with Cost in view, and no
// card around the Team state alone. Screenshots of each page in tests/artifacts/.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Key } from 'selenium-webdriver';
import { By, launchApp, startFakeProvider, tempDataDir } from './harness.mjs';
import { assistantMessages, click, gone, keepPreferences, retype, send, waitFor } from './steps.mjs';

const KEY = 'sk-fake-FIRST-RUN-0001';
const DEFAULT_WINDOW = { width: 1100, height: 720 };

/** `element`'s box as the page lays it out. */
const box = (app, element) => app.driver.executeScript('const r = arguments[0].getBoundingClientRect(); return { left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width, height: r.height };', element);

describe('a first run at the default window size, in every language', () => {
  const dataDir = tempDataDir();
  const textFile = join(dataDir, '..', `keypool-e2e-notes-${process.pid}.txt`);
  let app;
  let fake;

  before(async () => {
    writeFileSync(textFile, 'Meeting notes\n'.repeat(20));
    fake = await startFakeProvider();
    app = await launchApp({ dataDir });
    await app.find('app-shell');
    await app.driver.manage().window().setRect(DEFAULT_WINDOW);
    const added = await app.invoke('llmConfig:addProvider', { name: 'Fake gateway provider', kind: 'openai', baseUrl: `${fake.url}/v1`, models: ['fake-model'], defaultModel: 'fake-model' });
    assert.ok(added.ok, `addProvider: ${JSON.stringify(added.error)}`);
    await app.invoke('llmConfig:addApiKey', { providerId: added.value.id, apiKey: KEY, label: 'Team production key A' });
    await app.invoke('llmConfig:addApiKey', { providerId: 'openai', apiKey: 'sk-e2e-first-run-000001', label: 'Production' });
    await app.invoke('chat:create', { providerId: added.value.id, title: 'First run' });
    await app.driver.navigate().refresh();
    // One reply, so the Usage page has a key row.
    await click(app, 'chat-item-select');
    await fake.script(KEY, [{ kind: 'text', chunks: ['Noted', '.'] }]);
    await send(app, 'Hello');
    await waitFor(app, () => assistantMessages(app), (m) => m.length === 1 && m[0].status === 'complete', 'the reply is saved');
    await gone(app, 'streaming-reply');
  });
  after(async () => {
    await app?.stop();
    fake?.stop();
  });

  for (const language of ['en', 'zh', 'ja', 'ru']) {
    it(`lays out the pages a first-time user opens (${language})`, async () => {
      await keepPreferences(app, { language, theme: 'light' });
      const problems = [];

      // Chat: the search's placeholder is whole; a text chip keeps its remove button on it.
      await click(app, 'nav-chat');
      await click(app, 'chat-item-select');
      const placeholder = await app.driver.executeScript(
        `const input = document.querySelector('[data-testid="chat-search"]');
         const style = getComputedStyle(input);
         const context = document.createElement('canvas').getContext('2d');
         context.font = style.font;
         const room = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
         return { text: input.placeholder, width: context.measureText(input.placeholder).width, room };`,
      );
      if (placeholder.width > placeholder.room) problems.push(`the search placeholder is cut: ${JSON.stringify(placeholder)}`);
      await (await app.find('composer-file-input')).sendKeys(textFile);
      const chip = await app.find('attachment-chip');
      const remove = await app.find('attachment-remove');
      const [chipBox, removeBox] = [await box(app, chip), await box(app, remove)];
      const inside = removeBox.left >= chipBox.left && removeBox.right <= chipBox.right && removeBox.top >= chipBox.top && removeBox.bottom <= chipBox.bottom;
      if (!inside) problems.push(`the chip's remove button is off its chip: ${JSON.stringify({ chipBox, removeBox })}`);
      await app.screenshot(`first-run-chat-${language}`);
      await click(app, 'attachment-remove');
      await gone(app, 'attachment-chip');

      // Usage: the keys table shows every column, Cost last, without scrolling sideways.
      await click(app, 'nav-usage');
      const table = await app.find('usage-key-table');
      const usage = await app.driver.executeScript(
        `const scroller = arguments[0].closest('.usage-table-scroll') ?? arguments[0].parentElement;
         arguments[0].scrollIntoView({ block: 'center' });
         return { scrollWidth: scroller.scrollWidth, clientWidth: scroller.clientWidth };`,
        table,
      );
      if (usage.scrollWidth > usage.clientWidth) problems.push(`the Usage keys table is cut (Cost out of view): ${JSON.stringify(usage)}`);
      await app.screenshot(`first-run-usage-keys-${language}`);

      // Settings → Local API: code is drawn in a monospace font.
      await click(app, 'nav-settings');
      await click(app, 'settings-localApi');
      await app.find('local-api-snippet-code');
      const fonts = await app.driver.executeScript(`return [...document.querySelectorAll('code')].map((c) => getComputedStyle(c).fontFamily);`);
      for (const font of fonts) if (!/monospace/.test(font)) problems.push(`<code> is not monospace: ${font}`);
      await app.screenshot(`first-run-local-api-${language}`);

      // Settings → Team: the state alone is not a card.
      await click(app, 'settings-team');
      await app.find('team-state');
      const cardStyle = await app.driver.executeScript(
        `const card = document.querySelector('[data-testid="team-state"]').closest('.team__status').parentElement;
         const s = getComputedStyle(card);
         return { border: s.borderTopWidth, shadow: s.boxShadow };`,
      );
      if (cardStyle.border !== '0px') problems.push(`the Team state alone sits in a card: ${JSON.stringify(cardStyle)}`);
      await app.screenshot(`first-run-team-${language}`);

      // Settings → Providers → OpenAI: each key-table header inside its column.
      await click(app, 'settings-providers');
      await click(app, 'provider-openai');
      await app.find('key-list');
      const headers = await app.driver.executeScript(
        `return [...document.querySelectorAll('.key-table__head-row > th')].map((th) => {
           const label = th.querySelector('.key-table__sort-label') ?? th.querySelector('.key-table__sort');
           if (!label) return null;
           const r = th.getBoundingClientRect();
           const range = document.createRange();
           range.selectNodeContents(label);
           const text = range.getBoundingClientRect();
           const drawn = label.scrollWidth > label.clientWidth ? label.getBoundingClientRect().right : text.right;
           return { text: th.textContent, thRight: r.right, drawnRight: Math.min(drawn, text.right) };
         }).filter(Boolean);`,
      );
      for (const h of headers) if (h.drawnRight > h.thRight + 0.5) problems.push(`the header ${h.text} runs out of its column: ${JSON.stringify(h)}`);
      // A weight out of range says so in the weight's own narrow column, on one line.
      const weight = await app.find('key-weight');
      await retype(weight, '0');
      await weight.sendKeys(Key.ENTER);
      const weightError = await app.driver.executeScript(
        `const error = arguments[0];
         return { height: error.getBoundingClientRect().height, line: parseFloat(getComputedStyle(error).lineHeight) || 16, text: error.textContent };`,
        await app.find('key-weight-error'),
      );
      if (weightError.height > weightError.line * 1.5) problems.push(`the weight's error takes more than a line: ${JSON.stringify(weightError)}`);
      await app.screenshot(`first-run-keys-${language}`);
      await (await app.find('key-weight')).sendKeys(Key.ESCAPE);

      // The import's weight, label prefix and quota group on one line.
      await click(app, 'import-keys');
      await app.find('import-keys-dialog');
      const tops = [];
      for (const id of ['import-weight-input', 'import-prefix-input', 'import-group-input']) {
        tops.push((await box(app, await app.find(id))).top);
      }
      if (Math.max(...tops) - Math.min(...tops) > 1) problems.push(`the import's fields are not on one line: ${JSON.stringify(tops)}`);
      await app.screenshot(`first-run-import-${language}`);
      await (await app.find('import-keys-dialog')).sendKeys(Key.ESCAPE);
      await gone(app, 'import-keys-dialog');

      assert.deepEqual(problems, [], `${language}: the pages lay out as a first-time user expects`);
    });
  }
});
