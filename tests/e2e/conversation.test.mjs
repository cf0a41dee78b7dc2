// The conversation in the real window against the fake provider: the model list comes from the
// provider (new-chat dialog and Settings), a reply with a table and a code block renders as
// Markdown (screenshots light and dark), Copy puts the code on the system clipboard, an HTML and
// link injection executes nothing and never navigates the window (http links go to the system
// browser, here a stand-in `xdg-open`), the system prompt reaches the provider, the last message is
// edited and sent again, a reply regenerated, chats searched, and the chat exported as a .md file.
// Every page and dialog touched passes axe-core's WCAG 2.1 A/AA rules in both themes.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Key } from 'selenium-webdriver';
import { By, launchApp, startFakeProvider, tempDataDir, until } from './harness.mjs';
import { assistantMessages, click, fresh, gone, keepPreferences, retype, selectByText, send, textOf, waitFor } from './steps.mjs';

const WAIT = 15_000;
const KEY = 'sk-fake-CONVERSATION-0001';
const PROMPT = 'You are a terse assistant. Answer in one line.';

/** A reply as a model writes it: a heading, a table, a task list, a code block, a link. */
const MARKDOWN_CHUNKS = [
  '## Results\n\nHere is',
  ' a table:\n\n| Model | Tokens |\n|---|---:|\n',
  '| fake-model | 1,024 |\n| fake-large | 8,192 |\n\n',
  '- [x] parsed\n- [ ] shipped\n\n',
  '```js\nconst answer = 42;\n',
  'console.log(answer);\n```\n\n',
  'See [the guide](https://docs.example.test/guide).',
];
const CODE = 'const answer = 42;\nconsole.log(answer);';
const GUIDE = 'https://docs.example.test/guide';

/** A reply that tries to run script, load a remote image, and navigate the window. */
const INJECTION_CHUNKS = [
  'Look: <img src=x onerror="window.__pwned = \'img\'"> and ',
  "<script>window.__pwned = 'script'</script>\n\n",
  "[click me](javascript:window.__pwned='link') and <a href=\"https://evil.test\" onclick=\"window.__pwned='a'\">html link</a>\n\n",
  '<iframe src="https://evil.test/frame"></iframe>\n\n',
  '![tracker](https://evil.test/pixel.png)\n\n',
  `Safe: [guide](${GUIDE})`,
];

/** The last reply's element, once the reply is saved (no longer streaming). */
async function lastReply(app) {
  await gone(app, 'streaming-reply');
  return fresh(async () => (await app.driver.findElements(By.css('[data-testid="message"][data-role="assistant"]'))).at(-1));
}

async function completions(fake) {
  return (await fake.requests()).filter((r) => r.path.endsWith('/chat/completions'));
}

/** Options the model combobox shows now. */
function modelOptions(app) {
  return fresh(async () => Promise.all((await app.driver.findElements(By.css('[data-testid="new-chat-model-option"]'))).map(textOf)));
}

/** Sets the UI theme as Settings → General does (kept in the data directory) and reloads the page. */
async function useTheme(app, theme) {
  await keepPreferences(app, { theme });
}

/** axe-core finds nothing on the page (or in `selector`); the violations are named when it does. */
async function assertAccessible(app, what, selector) {
  const violations = await app.axe(selector);
  assert.deepEqual(
    violations.map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => `${n.target}: ${n.summary}`).join(' | ')}`),
    [],
    `${what} passes WCAG 2.1 A/AA`,
  );
}

describe('conversation tools and Markdown in the real window', () => {
  const dataDir = tempDataDir();
  const outDir = mkdtempSync(join(tmpdir(), 'keypool-export-'));
  const exportPath = join(outDir, 'chat.md');
  // A stand-in for the system browser: the opener runs `xdg-open URL`, which records the URL.
  const bin = mkdtempSync(join(tmpdir(), 'keypool-bin-'));
  const opened = join(outDir, 'opened.txt');
  writeFileSync(join(bin, 'xdg-open'), `#!/bin/sh\nprintf '%s\\n' "$1" >> '${opened}'\n`);
  chmodSync(join(bin, 'xdg-open'), 0o755);
  const env = { KEYPOOL_SAVE_PATH: exportPath, PATH: `${bin}:${process.env.PATH}` };
  let app;
  let fake;
  let providerId;
  let chatId;

  before(async () => {
    fake = await startFakeProvider();
    await fake.models(['fake-model', 'fake-large', 'fake-coder-v2']);
    app = await launchApp({ dataDir, env });
    await app.find('app-shell');
    const added = await app.invoke('llmConfig:addProvider', { name: 'Fake', kind: 'openai', baseUrl: `${fake.url}/v1`, models: ['fake-model'], defaultModel: 'fake-model' });
    providerId = added.value.id;
    await app.invoke('llmConfig:addApiKey', { providerId, apiKey: KEY, label: 'key A' });
  });
  after(async () => {
    await app?.stop();
    fake?.stop();
  });

  it('lists the provider’s models in the new-chat dialog, searchable, and refreshes them', async () => {
    await click(app, 'nav-chat');
    await click(app, 'chat-new');
    await selectByText(app, 'new-chat-provider-select', 'Fake');
    const all = await waitFor(app, () => modelOptions(app), (o) => o.includes('fake-coder-v2'), 'the fake’s models are offered');
    assert.deepEqual(all, ['fake-model', 'fake-large', 'fake-coder-v2'], 'the provider’s own model first, then what its endpoint lists');
    assert.match(await textOf(await app.find('new-chat-model-status')), /The provider lists 3 models/);

    const input = await app.find('new-chat-model-input');
    await retype(input, 'coder');
    assert.deepEqual(await modelOptions(app), ['fake-coder-v2'], 'typing searches the list');
    await input.sendKeys(Key.ARROW_DOWN, Key.ENTER);
    assert.equal(await input.getAttribute('value'), 'fake-coder-v2', 'ArrowDown and Enter pick the match');

    await fake.models(['fake-model', 'fake-large', 'fake-coder-v2', 'fake-new']);
    await click(app, 'new-chat-model-refresh');
    await waitFor(app, () => modelOptions(app), (o) => o.includes('fake-new'), 'Refresh asks the provider again');

    await (await app.find('new-chat-system-prompt-input')).sendKeys(PROMPT);
    await assertAccessible(app, 'the new-chat dialog', '[data-testid="new-chat-dialog"]');
    await app.screenshot('conversation-new-chat-light');
    await click(app, 'new-chat-submit');
    await gone(app, 'new-chat-dialog');
    chatId = await (await app.find('chat-item')).getAttribute('data-chat-id');
    const chat = (await app.invoke('chat:list')).value.find((c) => c.id === chatId);
    assert.deepEqual([chat.model, chat.systemPrompt], ['fake-coder-v2', PROMPT], 'the picked model and the prompt are the chat’s');
  });

  it('renders a streamed reply as Markdown: a table, a task list, highlighted code, a link', async () => {
    await fake.script(KEY, [{ kind: 'slow', chunks: MARKDOWN_CHUNKS, delay_ms: 40 }]);
    await send(app, 'Show me a table and some code');
    const reply = await lastReply(app);
    assert.equal(await reply.getAttribute('data-status'), 'complete');

    const cells = await Promise.all((await reply.findElements(By.css('table td'))).map(textOf));
    assert.deepEqual(cells, ['fake-model', '1,024', 'fake-large', '8,192'], 'the table renders as a table');
    assert.equal((await reply.findElements(By.css('input[type="checkbox"][disabled]'))).length, 2, 'the task list has its boxes');
    const code = await reply.findElement(By.css('[data-testid="code-block"]'));
    assert.equal(await code.getAttribute('data-language'), 'js');
    assert.equal(await textOf(await code.findElement(By.css('code'))), CODE, 'the code is shown as written');
    assert.ok((await code.findElements(By.css('.hljs-keyword'))).length > 0, 'and highlighted');
    assert.equal(await textOf(await reply.findElement(By.css('h4'))), 'Results', 'a ## heading sits below the chat’s own headings');
    const link = await reply.findElement(By.css('[data-testid="md-link"]'));
    assert.equal(await link.getAttribute('href'), GUIDE);

    const [request] = (await completions(fake)).slice(-1);
    assert.deepEqual([request.model, request.system], ['fake-coder-v2', PROMPT], 'the model and the system prompt reach the provider');

    await assertAccessible(app, 'the chat page with a Markdown reply');
    await app.screenshot('conversation-markdown-light');
  });

  it('copies a code block to the system clipboard', async () => {
    const reply = await lastReply(app);
    await reply.findElement(By.css('[data-testid="code-copy"]')).click();
    await waitFor(app, async () => (await reply.findElement(By.css('[data-testid="code-copy"]'))).getAttribute('data-state'), (s) => s === 'copied', 'the button says Copied');
    // Paste into the composer: what the clipboard holds now, as any other app would get it.
    const box = await app.find('composer-input');
    await box.click();
    await box.sendKeys(Key.chord(Key.CONTROL, 'v'));
    assert.equal(await box.getAttribute('value'), CODE, 'the clipboard holds the code');
    await box.sendKeys(Key.chord(Key.CONTROL, 'a'), Key.BACK_SPACE);
  });

  it('opens a link in the system browser on click, never in the window', async () => {
    const before = await app.driver.executeScript('return location.href');
    const link = (await (await lastReply(app)).findElements(By.css('[data-testid="md-link"]')))[0];
    await link.click();
    await waitFor(app, async () => (existsSync(opened) ? readFileSync(opened, 'utf8') : ''), (t) => t.includes(GUIDE), 'the system browser is asked to open the link');
    assert.equal(await app.driver.executeScript('return location.href'), before, 'the window stayed where it was');
    await app.find('chat-page');
  });

  it('executes nothing from an injection attempt: HTML shows as text, a javascript: link is inert', async () => {
    await fake.script(KEY, [{ kind: 'text', chunks: INJECTION_CHUNKS }]);
    await send(app, 'Try to break out');
    const reply = await lastReply(app);
    const text = await textOf(reply);
    assert.match(text, /<img src=x onerror="window\.__pwned = 'img'">/, 'the img tag is shown as text');
    assert.match(text, /<script>window\.__pwned = 'script'<\/script>/, 'the script tag is shown as text');
    for (const tag of ['img', 'script', 'iframe', 'a[onclick]', 'a[href^="javascript"]']) {
      assert.equal((await reply.findElements(By.css(tag))).length, 0, `no ${tag} element was created`);
    }
    const inert = await reply.findElement(By.css('.md-link--inert'));
    assert.equal(await textOf(inert), 'click me');
    // The reply has just been laid out and scrolled to: click once WebKit can reach the link (seen once in CI).
    await app.driver.executeScript('arguments[0].scrollIntoView({ block: "center" })', inert);
    await app.driver.wait(until.elementIsVisible(inert), WAIT, 'the inert link is shown');
    await inert.click();
    assert.equal(await app.driver.executeScript('return window.__pwned'), null, 'no script ran');
    const before = await app.driver.executeScript('return location.href');
    await reply.findElement(By.css('[data-testid="md-link"]')).click();
    assert.equal(await app.driver.executeScript('return location.href'), before, 'the window did not navigate');
    await app.screenshot('conversation-injection-light');
  });

  it('edits the last message and sends it again: the reply after it is replaced', async () => {
    await fake.script(KEY, [{ kind: 'text', chunks: ['Edited answer.'] }]);
    const before = (await assistantMessages(app)).length;
    await click(app, 'message-edit');
    const editor = await app.find('message-editor-input');
    await retype(editor, 'Try again, politely');
    await click(app, 'message-editor-send');
    await waitFor(app, () => assistantMessages(app), (r) => r.length === before && /Edited answer\./.test(r.at(-1).text), 'the edited message gets a new reply in place');
    const [request] = (await completions(fake)).slice(-1);
    assert.equal(request.last_user, 'Try again, politely', 'the provider gets the edited text');
    const users = await Promise.all((await app.driver.findElements(By.css('[data-testid="message"][data-role="user"]'))).map(textOf));
    assert.match(users.at(-1), /Try again, politely/);
  });

  it('regenerates a reply and copies it', async () => {
    await fake.script(KEY, [{ kind: 'text', chunks: ['A second **take**.'] }]);
    const before = (await assistantMessages(app)).length;
    const asked = (await completions(fake)).length;
    await click(app, 'message-regenerate');
    await waitFor(app, () => assistantMessages(app), (r) => r.length === before && /A second take\./.test(r.at(-1).text), 'the reply is replaced by a new one');
    const requests = await completions(fake);
    assert.equal(requests.length, asked + 1, 'one more request');
    assert.equal(requests.at(-1).last_user, 'Try again, politely', 'answering the same message');
    assert.equal(await textOf(await (await lastReply(app)).findElement(By.css('strong'))), 'take');
  });

  it('changes the chat’s system prompt in its dialog', async () => {
    await click(app, 'chat-system-prompt');
    const area = await app.find('system-prompt-input');
    assert.equal(await area.getAttribute('value'), PROMPT);
    await assertAccessible(app, 'the system prompt dialog', '[data-testid="system-prompt-dialog"]');
    await retype(area, 'Answer like a pirate.');
    await click(app, 'system-prompt-save');
    await gone(app, 'system-prompt-dialog');
    await fake.script(KEY, [{ kind: 'text', chunks: ['Arr.'] }]);
    await send(app, 'Hello?');
    await waitFor(app, () => assistantMessages(app), (r) => /Arr\./.test(r.at(-1)?.text ?? ''), 'the reply comes');
    assert.equal((await completions(fake)).at(-1).system, 'Answer like a pirate.', 'the new prompt is sent');
  });

  it('searches chats by content, marks the match, and opens the chat at it', async () => {
    await click(app, 'chat-new');
    await selectByText(app, 'new-chat-provider-select', 'Fake');
    await click(app, 'new-chat-submit');
    await gone(app, 'new-chat-dialog');
    const search = await app.find('chat-search');
    await search.sendKeys('polite');
    // The field searches as the user types, so results for 'p', 'po', … come first: wait for the whole word's.
    const result = await waitFor(
      app,
      async () =>
        Promise.all(
          (await app.driver.findElements(By.css('[data-testid="chat-search-result"]'))).map(async (r) => ({
            id: await r.getAttribute('data-chat-id'),
            marked: await Promise.all((await r.findElements(By.css('[data-testid="chat-search-snippet"] mark'))).map(textOf)),
          })),
        ),
      (r) => r.length === 1 && r[0].marked.length > 0 && r[0].marked.every((m) => m.toLowerCase() === 'polite'),
      'one chat holds the word, and the word is marked',
    );
    assert.equal(result[0].id, chatId);
    await assertAccessible(app, 'the chat page with search results');
    await app.screenshot('conversation-search-light');
    await click(app, 'chat-search-result');
    await waitFor(app, async () => textOf(await app.find('conversation-title')), (t) => /Show me a table/.test(t), 'the found chat opens');
    await search.sendKeys(Key.ESCAPE);
    await app.find('chat-list');
  });

  it('exports the chat as a Markdown file', async () => {
    await click(app, 'chat-export');
    await waitFor(app, async () => textOf(await app.find('chat-announcement')), (t) => t.includes(exportPath), 'the page says where it was saved');
    const markdown = readFileSync(exportPath, 'utf8');
    assert.match(markdown, /Try again, politely/, 'the messages are in the file');
    assert.match(markdown, /Arr\./);
  });

  it('lists the provider’s models in Settings and adds one to the provider', async () => {
    await click(app, 'nav-settings');
    await click(app, `provider-${providerId}`);
    await click(app, 'provider-edit');
    await click(app, 'provider-models-list');
    const boxes = await waitFor(
      app,
      async () => app.driver.findElements(By.css('[data-testid="provider-models-option"]')),
      (b) => b.length === 4,
      'the endpoint’s models are listed',
    );
    const labels = await Promise.all(boxes.map(async (b) => textOf(await b.findElement(By.xpath('..')))));
    const coder = boxes[labels.indexOf('fake-coder-v2')];
    await coder.click();
    await assertAccessible(app, 'the provider form with its model list');
    await app.screenshot('settings-provider-models-light');
    await click(app, 'provider-form-submit');
    await waitFor(
      app,
      async () => (await app.invoke('llmConfig:getProviders')).value.find((p) => p.id === providerId).models,
      (models) => models.includes('fake-coder-v2'),
      'the ticked model is saved with the provider',
    );
  });

  it('is accessible and renders in the dark theme too', async () => {
    await useTheme(app, 'dark');
    await assertAccessible(app, 'Settings → Providers (dark)');
    await click(app, 'nav-chat');
    const item = By.css(`[data-chat-id="${chatId}"] [data-testid="chat-item-select"]`);
    await app.driver.wait(until.elementLocated(item), WAIT);
    await fresh(async () => (await app.driver.findElement(item)).click());
    const reply = await waitFor(
      app,
      async () => app.driver.findElements(By.css('[data-testid="code-block"]')),
      (blocks) => blocks.length > 0,
      'the Markdown reply is shown',
    );
    assert.ok(reply.length > 0);
    await assertAccessible(app, 'the chat page (dark)');
    await app.screenshot('conversation-markdown-dark');
    await click(app, 'chat-new');
    await app.find('new-chat-dialog');
    await assertAccessible(app, 'the new-chat dialog (dark)', '[data-testid="new-chat-dialog"]');
    await app.driver.findElement(By.css('[data-testid="new-chat-dialog"]')).sendKeys(Key.ESCAPE);
    await useTheme(app, 'light');
  });
});
