// Images and text files in the real window, against the fake provider speaking Anthropic's
// Messages API (which refuses content blocks not in Anthropic's documented shapes): a PNG attached
// through the file input reaches the provider as a base64 `image` block, the transcript shows its
// thumbnail and a labelled preview, and a restart keeps it; an image pasted from the clipboard
// (a synthesized paste event carrying a File) and a text file dropped on the composer attach too,
// the file reaching the provider as named text. axe-core finds nothing with attachments showing,
// in the light and the dark theme.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { deflateSync } from 'node:zlib';
import { By, launchApp, startFakeProvider, tempDataDir } from './harness.mjs';
import { assertAccessible, assistantMessages, click, fresh, gone, selectByText, send, textOf, waitFor } from './steps.mjs';

const KEY = 'sk-ant-fake-ATTACHMENTS-0001';

/** CRC-32 of `bytes`, as PNG chunks carry it. */
function crc32(bytes) {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k += 1) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
  }
  return (crc ^ 0xffffffff) >>> 0;
}

/** A real RGB PNG of `width` × `height` with a gradient, written by hand (no image library in the suite). */
function png(width, height) {
  const chunk = (type, data) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), body.length + 4);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB, no interlace
  const rows = [];
  for (let y = 0; y < height; y += 1) {
    const row = Buffer.alloc(1 + width * 3);
    for (let x = 0; x < width; x += 1) row.set([(x * 255) / width, (y * 255) / height, 128], 1 + x * 3);
    rows.push(row);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** The fake's completion requests (not model lists or token counts). */
async function completions(fake) {
  return (await fake.requests()).filter((r) => r.path === '/v1/messages');
}

/** Dispatches `type` (`paste` on the composer box, `drop` on the composer) carrying one File. */
async function dispatchFile(app, type, name, mediaType, base64) {
  await app.driver.executeScript(
    `const [type, name, mediaType, base64] = arguments;
     const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
     const transfer = new DataTransfer();
     transfer.items.add(new File([bytes], name, { type: mediaType }));
     const target = document.querySelector(type === 'paste' ? '[data-testid="composer-input"]' : '[data-testid="composer"]');
     for (const kind of type === 'paste' ? ['paste'] : ['dragover', 'drop']) {
       const event = new Event(kind, { bubbles: true, cancelable: true });
       Object.defineProperty(event, type === 'paste' ? 'clipboardData' : 'dataTransfer', { value: transfer });
       target.dispatchEvent(event);
     }`,
    type,
    name,
    mediaType,
    base64,
  );
}

/** The attachments shown in the composer: their kind and the text they show. */
function composerAttachments(app) {
  return fresh(async () =>
    Promise.all(
      (await app.driver.findElements(By.css('[data-testid="composer-attachments"] [data-testid="attachment"]'))).map(async (item) => ({
        kind: await item.getAttribute('data-kind'),
        text: await textOf(item),
      })),
    ),
  );
}

/** The src of each thumbnail in the transcript. */
function transcriptThumbnails(app) {
  return fresh(async () =>
    Promise.all((await app.driver.findElements(By.css('[data-testid="message-attachments"] [data-testid="attachment-thumbnail"]'))).map((img) => img.getAttribute('src'))),
  );
}

async function ask(app, text) {
  const before = (await assistantMessages(app)).length;
  await send(app, text);
  await waitFor(app, () => assistantMessages(app), (r) => r.length === before + 1 && r.at(-1).status === 'complete', `the reply to "${text}"`);
  await gone(app, 'streaming-reply');
}

describe('images and text files in the real window', () => {
  const dataDir = tempDataDir();
  const picture = png(64, 48);
  const picturePath = join(dataDir, '..', `keypool-e2e-shot-${process.pid}.png`);
  let app;
  let fake;

  before(async () => {
    writeFileSync(picturePath, picture);
    fake = await startFakeProvider();
    app = await launchApp({ dataDir });
    await app.find('app-shell');
    const added = await app.invoke('llmConfig:addProvider', { name: 'Fake', kind: 'anthropic', baseUrl: fake.url, models: ['fake-model'], defaultModel: 'fake-model' });
    await app.invoke('llmConfig:addApiKey', { providerId: added.value.id, apiKey: KEY, label: 'key A' });
    await click(app, 'nav-chat');
    await click(app, 'chat-new');
    await selectByText(app, 'new-chat-provider-select', 'Fake');
    await click(app, 'new-chat-submit');
    await gone(app, 'new-chat-dialog');
  });
  after(async () => {
    await app?.stop();
    fake?.stop();
  });

  it('sends a PNG picked through the file input as Anthropic’s base64 image block, and shows its thumbnail', async () => {
    const input = await app.find('composer-file-input');
    await input.sendKeys(picturePath);
    await waitFor(app, () => composerAttachments(app), (items) => items.length === 1 && items[0].kind === 'image', 'the PNG is attached');
    await ask(app, 'What is in this picture?');

    const request = (await completions(fake)).at(-1);
    assert.deepEqual(
      request.images.map((i) => [i.shape, i.media_type, i.bytes, i.head]),
      [['image', 'image/png', picture.length, '89504e470d0a1a0a']],
      'the provider got the PNG whole, in an image block with a base64 source',
    );
    assert.equal(request.last_user, 'What is in this picture?', 'and the question beside it');
    const body = JSON.parse(request.body);
    assert.equal(body.messages[0].content[0].source.type, 'base64', 'the block as Anthropic documents it');
    await waitFor(app, () => transcriptThumbnails(app), (srcs) => srcs.length === 1 && srcs[0].startsWith('data:image/png;base64,'), 'the transcript shows the thumbnail');
    await app.screenshot('attachments-sent-light');
  });

  it('opens a labelled preview of the original and closes it with Escape', async () => {
    await click(app, 'attachment-open');
    const dialog = await app.find('attachment-preview');
    assert.equal(await textOf(await dialog.findElement(By.css('h2'))), `keypool-e2e-shot-${process.pid}.png`, 'the dialog is titled with the file name');
    const image = await dialog.findElement(By.css('[data-testid="attachment-preview-image"]'));
    assert.match(await image.getAttribute('alt'), /\.png$/, 'the image is labelled');
    await assertAccessible(app, 'the image preview (light)', '[data-testid="attachment-preview"]');
    await app.driver.switchTo().activeElement().sendKeys('\uE00C'); // Escape
    await gone(app, 'attachment-preview');
  });

  it('attaches an image pasted from the clipboard and a text file dropped on the composer', async () => {
    await dispatchFile(app, 'paste', 'pasted.png', 'image/png', picture.toString('base64'));
    await dispatchFile(app, 'drop', 'notes.md', 'text/markdown', Buffer.from('# Plan\n- ship it\n').toString('base64'));
    await waitFor(
      app,
      () => composerAttachments(app),
      (items) => items.length === 2 && items.some((i) => i.kind === 'image') && items.some((i) => i.kind === 'text' && i.text.includes('notes.md')),
      'the pasted image and the dropped file are attached',
    );
    await ask(app, 'And these?');
    const request = (await completions(fake)).at(-1);
    assert.ok(request.last_user.startsWith('<file name="notes.md">\n# Plan\n- ship it\n</file>'), `the file is named text: ${request.last_user}`);
    assert.equal(request.images.length, 2, 'the history’s image and the pasted one both went');
  });

  for (const theme of ['light', 'dark']) {
    it(`is clean under axe with attachments showing, ${theme} theme`, async () => {
      await app.driver.executeScript('localStorage.setItem("keypool.theme", arguments[0]);', theme);
      await app.driver.navigate().refresh();
      await app.find('app-shell');
      await waitFor(app, () => transcriptThumbnails(app), (srcs) => srcs.length === 2, 'the thumbnails are back');
      await dispatchFile(app, 'drop', 'draft.txt', 'text/plain', Buffer.from('draft').toString('base64'));
      await waitFor(app, () => composerAttachments(app), (items) => items.length === 1, 'an attachment in the composer too');
      await assertAccessible(app, `the chat with attachments (${theme})`);
      await click(app, 'attachment-open');
      await app.find('attachment-preview');
      await assertAccessible(app, `the image preview (${theme})`, '[data-testid="attachment-preview"]');
      await app.screenshot(`attachments-preview-${theme}`);
      await click(app, 'attachment-preview-close');
      await gone(app, 'attachment-preview');
      await click(app, 'attachment-remove');
    });
  }

  it('keeps the attachments across a restart', async () => {
    await app.stop();
    app = await launchApp({ dataDir });
    await app.find('app-shell');
    await click(app, 'nav-chat');
    await waitFor(app, () => transcriptThumbnails(app), (srcs) => srcs.length === 2 && srcs.every((s) => s.startsWith('data:image/png;base64,')), 'the thumbnails are read back from the data directory');
    const chips = await fresh(async () => Promise.all((await app.driver.findElements(By.css('[data-testid="message-attachments"] [data-testid="attachment-chip"]'))).map(textOf)));
    assert.ok(chips.some((c) => c.includes('notes.md')), `the text file's chip too: ${chips}`);
  });
});
