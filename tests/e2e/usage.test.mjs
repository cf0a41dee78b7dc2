// The Usage page in the real window: three chat replies from the fake provider (11 input tokens,
// 5 of them cached, one output token per piece of text) are in the totals and the key's row to
// the token; the three charts draw on their canvases, each beside the table of its numbers, and
// draw again in the other theme's colours; the page passes axe-core's WCAG 2.1 A/AA rules in the
// light and the dark theme (screenshots of both); the CSV export writes the three attempts where
// the save dialog (KEYPOOL_SAVE_PATH) says; a price set on the page gives the cost.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Key } from 'selenium-webdriver';
import { By, launchApp, startFakeProvider, tempDataDir } from './harness.mjs';
import { assertAccessible, assistantMessages, click, fresh, gone, keepPreferences, send, textOf, waitFor } from './steps.mjs';

const KEY = 'sk-fake-USAGE-PAGE-0001';
const REPLIES = 3;
/** Each reply comes in two pieces: two output tokens. */
const REPLY_CHUNKS = ['Noted', '.'];
const CHARTS = ['usage-chart-tokens', 'usage-chart-activity', 'usage-chart-cache'];

/** The theme as Settings → General keeps it (the data directory), then a reload: the app reopens on Usage. */
async function useTheme(app, theme) {
  await keepPreferences(app, { theme });
  await app.find('usage-totals');
}

/** The cells of the key table's rows, as text. */
function keyRows(app) {
  return fresh(async () => {
    const rows = await app.driver.findElements(By.css('[data-testid="usage-key-row"]'));
    return Promise.all(rows.map(async (row) => Promise.all((await row.findElements(By.css('th, td'))).map(textOf))));
  });
}

const total = async (app, id) => textOf(await app.find(`usage-total-${id}-value`));

/** Each chart's canvas: its size on the page and how many of its pixels are drawn, and a fingerprint of them. */
function canvases(app) {
  return app.driver.executeScript(
    `return arguments[0].map((id) => {
       const canvas = document.querySelector('[data-testid="' + id + '-canvas"]');
       if (!canvas) return { id, missing: true };
       const box = canvas.getBoundingClientRect();
       const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
       let drawn = 0;
       let hash = 0;
       for (let i = 3; i < pixels.length; i += 4) {
         if (pixels[i] > 0) drawn += 1;
         hash = (hash * 31 + pixels[i - 3] + pixels[i - 2] * 7 + pixels[i - 1] * 13) | 0;
       }
       return { id, width: box.width, height: box.height, drawn, hash, label: canvas.getAttribute('aria-label') };
     });`,
    CHARTS,
  );
}

describe('the Usage page in the real window', () => {
  const dataDir = tempDataDir();
  const outDir = mkdtempSync(join(tmpdir(), 'keypool-usage-'));
  const csvPath = join(outDir, 'usage.csv');
  let app;
  let fake;

  before(async () => {
    fake = await startFakeProvider();
    app = await launchApp({ dataDir, env: { KEYPOOL_SAVE_PATH: csvPath } });
    await app.find('app-shell');
    const added = await app.invoke('llmConfig:addProvider', { name: 'Fake', kind: 'openai', baseUrl: `${fake.url}/v1`, models: ['fake-model'], defaultModel: 'fake-model' });
    const providerId = added.value.id;
    await app.invoke('llmConfig:addApiKey', { providerId, apiKey: KEY, label: 'key A' });
    await app.invoke('chat:create', { providerId, title: 'Usage' });
    await app.driver.navigate().refresh();
    await click(app, 'chat-item-select');
  });
  after(async () => {
    await app?.stop();
    fake?.stop();
  });

  it('records every reply of a chat: the totals and the key’s row show the provider’s numbers', async () => {
    await fake.script(KEY, Array.from({ length: REPLIES }, () => ({ kind: 'text', chunks: REPLY_CHUNKS })));
    for (let i = 1; i <= REPLIES; i += 1) {
      await send(app, `Question ${i}`);
      await waitFor(app, () => assistantMessages(app), (m) => m.length === i && m.every((r) => r.status === 'complete'), `reply ${i} is saved`);
    }
    await gone(app, 'streaming-reply');

    await click(app, 'nav-usage');
    await app.find('usage-totals');
    assert.equal(await textOf(await app.find('nav-usage')), 'Usage');
    assert.equal(await total(app, 'requests'), '3');
    assert.equal(await total(app, 'failures'), '0');
    assert.equal(await total(app, 'rate-limited'), '0');
    assert.equal(await total(app, 'input'), '33', '11 input tokens per reply');
    assert.equal(await total(app, 'cached'), '15', '5 of them from the cache');
    assert.equal(await textOf(await app.find('usage-total-cached-note')), '45.5% of input from the cache');
    assert.equal(await total(app, 'output'), '6', 'two pieces per reply');
    assert.equal((await app.driver.findElements(By.css('[data-testid="usage-total-cost"]'))).length, 0, 'no price yet: no cost');
    const unpriced = await Promise.all((await app.driver.findElements(By.css('[data-testid="unpriced-model"]'))).map((item) => item.getAttribute('data-model')));
    assert.deepEqual(unpriced, ['fake-model'], 'the model that spent tokens without a price is named');

    const [row, ...others] = await keyRows(app);
    assert.deepEqual(others, [], 'one key sent everything');
    assert.deepEqual(row.slice(0, 8), ['Fake', 'key A', '3', '0', '0', '33', '15', '6']);
    for (const latency of row.slice(8, 10)) assert.match(latency, /^\d[\d.,]* (ms|sec)$/, 'p50 and p95 latency are measured');
    assert.equal(row[10], 'no price');
  });

  it('draws the three charts on their canvases, beside tables of the same numbers', async () => {
    const drawn = await canvases(app);
    for (const chart of drawn) {
      assert.ok(!chart.missing, `${chart.id} has a canvas`);
      assert.ok(chart.width > 100 && chart.height > 100, `${chart.id} has a size on the page: ${JSON.stringify(chart)}`);
      assert.ok(chart.drawn > 500, `${chart.id} drew its bars or lines: ${chart.drawn} pixels`);
    }
    assert.match(drawn[0].label, /39 tokens in all/, 'the tokens chart is named by its numbers (33 in, 6 out)');
    await app.driver.executeScript("document.querySelector('[data-testid=\"prices-section\"]').scrollIntoView({ block: 'end' })");
    const overflow = await app.driver.executeScript('return document.scrollingElement.scrollHeight - window.innerHeight');
    assert.ok(overflow <= 0, `the page scrolls inside the frame, the window itself does not (by ${overflow} px)`);
    const cacheTable = await app.driver.findElement(By.css('[data-testid="usage-chart-cache"] table'));
    const cells = await Promise.all((await cacheTable.findElements(By.css('tbody th, tbody td'))).map(textOf));
    assert.deepEqual(cells, ['Fake', '15', '33', '45.5%'], 'the cache chart’s table');
  });

  it('passes axe in the light and the dark theme, and draws again in the dark theme’s colours', async () => {
    await useTheme(app, 'light');
    await waitFor(app, () => canvases(app), (list) => list.every((c) => c.drawn > 500), 'the charts are drawn');
    const light = await canvases(app);
    await assertAccessible(app, 'the Usage page (light)');
    await app.screenshot('usage-light');
    await app.driver.executeScript("document.querySelector('[data-testid=\"usage-key-table\"]').scrollIntoView({ block: 'center' })");
    await app.screenshot('usage-keys-light');
    await click(app, 'price-add');
    await app.find('price-dialog');
    await assertAccessible(app, 'the price dialog (light)', '[data-testid="price-dialog"]');
    await (await app.find('price-dialog')).sendKeys(Key.ESCAPE);
    await gone(app, 'price-dialog');

    // The theme switched in place, as Settings → General does: the charts take the new colours.
    await app.driver.executeScript('document.documentElement.dataset.theme = "dark";');
    await waitFor(app, () => canvases(app), (list) => list.every((c, i) => c.drawn > 500 && c.hash !== light[i].hash), 'the charts are drawn again in dark colours');

    await useTheme(app, 'dark');
    await assertAccessible(app, 'the Usage page (dark)');
    await app.screenshot('usage-dark');
    await click(app, 'price-add');
    await app.find('price-dialog');
    await assertAccessible(app, 'the price dialog (dark)', '[data-testid="price-dialog"]');
    await (await app.find('price-dialog')).sendKeys(Key.ESCAPE);
    await gone(app, 'price-dialog');
    await useTheme(app, 'light');
  });

  it('exports the period as CSV where the save dialog says, and announces it', async () => {
    await click(app, 'usage-export');
    const status = await waitFor(app, async () => textOf(await app.find('usage-export-status')), (t) => t !== '', 'the export is announced');
    assert.equal(status, `Saved 3 requests to ${csvPath}.`);
    assert.ok(existsSync(csvPath), 'the file is written');
    const [header, ...lines] = readFileSync(csvPath, 'utf8').trim().split('\n');
    assert.equal(header, 'time,provider,key,model,chat,source,outcome,status,time_to_first_token_ms,latency_ms,input_tokens,cached_tokens,output_tokens');
    assert.equal(lines.length, REPLIES, 'one line per attempt');
    for (const line of lines) {
      const cells = line.split(',');
      assert.deepEqual([cells[1], cells[2], cells[3], ...cells.slice(-3)], ['Fake', 'key A', 'fake-model', '11', '5', '2'], `an attempt: ${line}`);
      assert.ok(!line.includes(KEY), 'the key itself is never written');
    }
  });

  it('gives the cost once the model has a price, in the totals and the key’s row', async () => {
    // From the model named as unpriced: the dialog opens with it filled in.
    await app.driver.findElement(By.css('[data-testid="unpriced-model"][data-model="fake-model"] button')).click();
    assert.equal(await (await app.find('price-model-input')).getAttribute('value'), 'fake-model');
    await (await app.find('price-input-input')).sendKeys('10000');
    await (await app.find('price-cached-input')).sendKeys('2000');
    await (await app.find('price-output-input')).sendKeys('30000');
    await click(app, 'price-submit');
    await gone(app, 'price-dialog');

    // 18 fresh input tokens at $10 000, 15 cached at $2 000 and 6 output at $30 000 per million: $0.39.
    const cost = await waitFor(app, () => total(app, 'cost'), (t) => t === '$0.39', 'the cost appears');
    assert.equal(cost, '$0.39');
    assert.equal((await app.driver.findElements(By.css('[data-testid="usage-total-cost-note"]'))).length, 0, 'every model used is priced');
    assert.equal((await app.driver.findElements(By.css('[data-testid="unpriced-models"]'))).length, 0, 'and none is named as unpriced');
    const [row] = await keyRows(app);
    assert.equal(row[10], '$0.39');
    await app.driver.executeScript("document.querySelector('[data-testid=\"prices-section\"]').scrollIntoView({ block: 'end' })");
    await app.screenshot('usage-prices-light');
    const prices = await fresh(async () => Promise.all((await app.driver.findElements(By.css('[data-testid="price-row"] th, [data-testid="price-row"] td'))).map(textOf)));
    assert.deepEqual(prices.slice(0, 4), ['fake-model', '$10,000.00', '$2,000.00', '$30,000.00']);
  });

  it('deletes the whole history from Settings → General after asking; the page then starts empty', async () => {
    await click(app, 'nav-settings');
    await click(app, 'settings-general');
    // The backend's settings come in above the button and move it down: click once they are in.
    await app.find('proxy-setting');
    await click(app, 'usage-purge');
    await app.find('usage-purge-dialog');
    await assertAccessible(app, 'the delete-history dialog', '[data-testid="usage-purge-dialog"]');
    await click(app, 'usage-purge-confirm');
    await gone(app, 'usage-purge-dialog');
    await waitFor(app, async () => textOf(await app.find('usage-purge-status')), (t) => t === `Deleted ${REPLIES} records.`, 'the page says how many records went');

    await click(app, 'nav-usage');
    await app.find('usage-empty');
    const prices = await app.invoke('usage:getPrices');
    assert.equal(prices.value.length, 1, 'prices stay');
  });
});
