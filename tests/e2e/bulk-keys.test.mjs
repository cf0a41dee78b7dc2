// Many keys through the real window: a file of valid, revoked and repeated keys is imported with
// validation against the fake provider (a revoked key is one the fake answers 401 for, scripted
// with `invalid_key`), the preview and the progress are seen, exactly the valid keys end in the
// pool, and a subset is filtered, selected, disabled and deleted with the bulk bar.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Key } from 'selenium-webdriver';
import { By, launchApp, startFakeProvider, tempDataDir } from './harness.mjs';
import { assertAccessible, click, fresh, gone, selectByText, textOf, waitFor } from './steps.mjs';

const VALID = 200;
const REVOKED = 60;
const REPEATED = 40;
/** Validating a few hundred keys against the loopback fake takes seconds; leave room on a busy machine. */
const IMPORT_WAIT = 120_000;

// OpenAI-shaped (`sk-` and at least 20 more): an OpenAI-compatible provider's import takes no other.
const validKey = (i) => `sk-bulk-valid-key-${String(i).padStart(8, '0')}`;
const revokedKey = (i) => `sk-bulk-revoked-key-${String(i).padStart(6, '0')}`;

/** A CSV as a user might have it: a header, labels and quotes around keys, repeats, a comment. */
function keyFile(dir) {
  const lines = ['name,key,comment'];
  for (let i = 0; i < VALID; i++) lines.push(`valid ${i},"${validKey(i)}",ok`);
  for (let i = 0; i < REVOKED; i++) lines.push(`revoked ${i},${revokedKey(i)},revoked last week`);
  for (let i = 0; i < REPEATED; i++) lines.push(`again ${i},${validKey(i)},pasted twice`);
  lines.push('# exported from the old proxy');
  const file = join(dir, 'keys.csv');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

async function keysOf(app, providerId) {
  const result = await app.invoke('llmConfig:getApiKeys', { providerId });
  assert.ok(result.ok, `getApiKeys: ${JSON.stringify(result.error)}`);
  return result.value;
}

const count = async (app, testId) => textOf(await app.find(testId));

describe('importing and managing hundreds of keys in the real window', () => {
  const dataDir = tempDataDir();
  let app;
  let fake;
  let providerId;

  before(async () => {
    fake = await startFakeProvider();
    for (let i = 0; i < REVOKED; i++) await fake.script(revokedKey(i), [], { kind: 'status', status: 401, message: 'Incorrect API key provided' });
    app = await launchApp({ dataDir });
    await app.find('app-shell');
    const provider = await app.invoke('llmConfig:addProvider', { name: 'Bulk', kind: 'openai', baseUrl: `${fake.url}/v1`, models: ['fake-model'] });
    assert.ok(provider.ok, `addProvider: ${JSON.stringify(provider.error)}`);
    providerId = provider.value.id;
    await click(app, 'nav-settings');
    await click(app, 'settings-providers');
    await click(app, `provider-${providerId}`);
    await app.find('pool-empty');
  });
  after(async () => {
    await app?.stop();
    fake?.stop();
  });

  it('previews a chosen file, validates every new key with progress, and keeps exactly the valid ones', async () => {
    await click(app, 'import-keys');
    await app.find('import-keys-dialog');
    // The hidden file input takes the path, as a file chooser would give it.
    await (await app.find('import-file')).sendKeys(keyFile(dataDir));
    await waitFor(app, async () => (await (await app.find('import-text-input')).getAttribute('value')).length, (n) => n > 1000, 'the file is read into the box');
    await (await app.find('import-prefix-input')).sendKeys('batch');
    await click(app, 'import-check');
    await app.find('import-preview');
    assert.equal(await count(app, 'import-found'), `Found: ${VALID + REVOKED + REPEATED}`, 'every key in the file is found, repeats included');
    assert.equal(await count(app, 'import-new'), `New: ${VALID + REVOKED}`, 'each key once');
    assert.equal(await count(app, 'import-dup-paste'), `Repeated in the text: ${REPEATED}`, 'the repeats are counted');
    assert.equal(await count(app, 'import-dup-pool'), 'Already in the pool: 0', 'the pool is empty');
    assert.equal((await keysOf(app, providerId)).length, 0, 'nothing is saved by a preview');
    const listed = await textOf(await app.find('import-new-keys'));
    assert.ok(listed.includes('sk-…0007'), `the preview lists the new keys masked: ${listed.slice(0, 80)}`);
    assert.equal(listed.includes('sk-bulk-valid'), false, 'and never whole');
    await app.screenshot('bulk-import-preview');
    // The first key is taken off the list, from the keyboard: it is neither checked nor saved.
    const [firstRemove] = await app.driver.findElements(By.css('[data-testid="import-remove-key"]'));
    await firstRemove.sendKeys(Key.ENTER);
    await waitFor(app, () => count(app, 'import-new'), (text) => text === `New: ${VALID + REVOKED - 1}`, 'the removed key leaves the list');
    assert.equal(await count(app, 'import-left-out'), '1 key left out: it is not sent. Put back', 'and is counted as left out');

    await click(app, 'import-start');
    const bar = await app.find('import-progressbar');
    assert.equal(await bar.getAttribute('aria-valuemax'), String(VALID + REVOKED - 1), 'the bar counts the keys kept');
    await app.screenshot('bulk-import-progress');
    const summary = await waitFor(app, () => count(app, 'import-summary'), (text) => text.length > 0, 'the import finishes', IMPORT_WAIT);
    assert.equal(summary, `Import finished: ${VALID - 1} keys added.`, 'the summary names what was added');
    assert.equal(await count(app, 'import-valid'), `Valid: ${VALID - 1}`, 'every good key kept validated');
    assert.equal(await count(app, 'import-invalid'), `Invalid: ${REVOKED}`, 'every revoked key refused');
    assert.equal(await bar.getAttribute('aria-valuenow'), String(VALID + REVOKED - 1), 'the bar is full');
    await app.screenshot('bulk-import-done');
    // The refused keys, named masked (issue 45, point 6), and the dialog still clean for axe.
    const left = await app.driver.findElements(By.css('[data-testid="import-left-key"]'));
    assert.equal(left.length, Math.min(REVOKED, 50), 'the refused keys are listed, masked');
    assert.ok(!(await count(app, 'import-left')).includes('sk-bulk-revoked-'), 'no refused key in full');
    await assertAccessible(app, 'the finished import with its refused keys', '[data-testid="import-keys-dialog"]');
    await click(app, 'import-done');
    await gone(app, 'import-keys-dialog');

    const stored = await keysOf(app, providerId);
    assert.equal(stored.length, VALID - 1, 'exactly the valid keys kept are in the pool');
    assert.ok(!stored.some((k) => k.apiKeyPreview === 'sk-…0000'), 'the key taken off the list is not');
    assert.ok(stored.every((k) => k.enabled), 'all of them on');
    assert.ok(stored.every((k) => /^batch #\d+$/.test(k.label)), 'labelled from the prefix');
    assert.equal(new Set(stored.map((k) => k.apiKeyPreview)).size, VALID - 1, 'no key twice');
    // Announced once the pool's reload after the import has landed, which may be after the
    // dialog is gone: wait for it, then check what it says.
    const announced = await waitFor(app, () => count(app, 'pool-added'), (text) => text.length > 0, 'the new rows are announced');
    assert.match(announced, new RegExp(`${VALID - 1} keys added`), 'the new rows are announced');
    assert.match(await count(app, 'pool-summary'), new RegExp(`${VALID - 1}`), 'the pool counts them');
  });

  it('filters, selects a range and disables it, then deletes what the filter shows', async () => {
    // Search: labels `batch #1`, `#10`–`#19`, `#100`–`#199` match "batch #1".
    const search = await app.find('pool-search');
    await search.sendKeys('batch #1');
    await waitFor(app, () => count(app, 'pool-filtered'), (text) => text.startsWith('Showing 111 of'), 'the search filters the table');

    // A range: the first row's checkbox, then shift-click the fifth.
    const boxes = await app.driver.findElements(By.css('[data-testid="key-row"] [data-testid="key-select"]'));
    const inView = (element) => app.driver.executeScript('arguments[0].scrollIntoView({ block: "center" });', element);
    await inView(boxes[0]);
    await boxes[0].click();
    await inView(boxes[4]);
    await app.driver.actions().keyDown(Key.SHIFT).click(boxes[4]).keyUp(Key.SHIFT).perform();
    assert.equal(await count(app, 'bulk-count'), '5 keys selected', 'shift-click selects the range');
    await click(app, 'bulk-disable');
    await waitFor(app, () => count(app, 'pool-announcement'), (t) => t === '5 keys disabled.', 'the bulk disable is announced');
    await waitFor(app, async () => (await keysOf(app, providerId)).filter((k) => !k.enabled).length, (n) => n === 5, 'five keys are stored off');

    // The disabled ones, by state: select all shown, delete after one confirmation.
    await click(app, 'bulk-clear');
    await fresh(async () => (await app.find('pool-search')).clear());
    await selectByText(app, 'pool-state-filter', 'Disabled');
    await waitFor(app, () => count(app, 'pool-filtered'), (text) => text.startsWith('Showing 5 of'), 'the state filter shows the disabled keys');
    await click(app, 'key-select-shown');
    await click(app, 'bulk-delete');
    const dialog = await app.find('bulk-delete-dialog');
    assert.match(await textOf(dialog), /Delete 5 keys from the pool\?/, 'the confirmation names the count');
    await app.screenshot('bulk-delete-confirm');
    await click(app, 'bulk-delete-confirm');
    await gone(app, 'bulk-delete-dialog');
    await waitFor(app, async () => (await keysOf(app, providerId)).length, (n) => n === VALID - 1 - 5, 'the five are deleted, the others stay');
    const left = await keysOf(app, providerId);
    assert.ok(left.every((k) => k.enabled), 'every key left is on');
  });
});
