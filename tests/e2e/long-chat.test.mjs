// A long chat in the real window is on the page only around the view (messageWindow.ts): it
// opens at its last messages, earlier ones join as the reader scrolls up without moving what is
// on screen, far ones leave and come back on the way down, a search result far up is brought
// onto the page, and "Jump to the latest message" goes back to the end.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Key } from 'selenium-webdriver';
import { scrollThrough } from '../bench/chat-scroll.mjs';
import { waitUntil } from './desktop.mjs';
import { launchApp, startFakeProvider } from './harness.mjs';

const KEY = 'sk-fake-LONGCHAT-0000000001';
const TURNS = 60; // 120 messages, far more than a chat opens with
/** ui/src/features/chat/messageWindow.ts */
const OPENING = 10;
const STEP = 20;

const rendered = (app) =>
  app.driver.executeScript(`return [...document.querySelectorAll('[data-testid="message"]')].map((m) => m.dataset.messageId);`);

describe('a long chat', () => {
  let fake;
  let app;
  let messages;
  before(async () => {
    fake = await startFakeProvider();
    app = await launchApp();
    await app.driver.manage().setTimeouts({ script: 120_000 });
    await app.find('chat-page');
    const provider = await app.invoke('llmConfig:addProvider', { name: 'Fake', kind: 'openai', baseUrl: `${fake.url}/v1`, apiKey: KEY, models: ['fake-model'], defaultModel: 'fake-model' });
    assert.ok(provider.ok, JSON.stringify(provider));
    const chat = await app.invoke('chat:create', { providerId: provider.value.id, title: 'Long' });
    await fake.script(KEY, Array.from({ length: TURNS }, (_, i) => ({ kind: 'text', chunks: [`Answer ${i + 1}.\n\n${'A line of the answer.\n'.repeat(3)}`] })));
    const filled = await app.driver.executeAsyncScript(
      `const [chatId, turns, done] = arguments;
       const ipc = window.__TAURI_INTERNALS__;
       (async () => {
         for (let i = 1; i <= turns; i += 1) {
           const content = i === 3 ? 'Question 3: what about a zeppelin?' : 'Question ' + i + '?';
           await ipc.invoke('chat:send', { request: { chatId, content }, onEvent: '__CHANNEL__:' + ipc.transformCallback(() => {}) });
         }
       })().then(() => done(true), (e) => done(String(e?.message ?? JSON.stringify(e))));`,
      chat.value.id,
      TURNS,
    );
    assert.equal(filled, true, `the chat is written: ${filled}`);
    messages = (await app.invoke('chat:getMessages', { chatId: chat.value.id })).value.map((m) => m.id);
    assert.equal(messages.length, 2 * TURNS);
    // Chat loads its list anew when it opens again.
    await (await app.find('nav-settings')).click();
    await (await app.find('nav-chat')).click();
  });
  after(async () => {
    await app?.stop();
    fake?.stop();
  });

  it('opens at its end, with only its last messages on the page', async () => {
    await waitUntil(async () => (await rendered(app)).at(-1) === messages.at(-1), 'the last message is on the page');
    const shown = await rendered(app);
    assert.ok(shown.length >= OPENING && shown.length < messages.length, `${shown.length} of ${messages.length} messages on the page`);
    assert.deepEqual(shown, messages.slice(-shown.length), 'they are the last ones, without gaps');
    const atBottom = await app.driver.executeScript(
      `const box = document.querySelector('.conversation__scroll'); return box.scrollHeight - box.scrollTop - box.clientHeight < 2;`,
    );
    assert.equal(atBottom, true, 'scrolled to the newest message');
    await app.screenshot('long-chat-end');
  });

  it('adds earlier messages as the reader scrolls up, leaving what is on screen in place', async () => {
    const before = await app.driver.executeScript(
      `const box = document.querySelector('.conversation__scroll');
       box.scrollTop = 0;
       const first = document.querySelector('[data-testid="message"]');
       return { id: first.dataset.messageId, top: first.getBoundingClientRect().top };`,
    );
    await waitUntil(async () => (await rendered(app)).length > OPENING, 'earlier messages join');
    const now = await app.driver.executeScript(
      `return document.querySelector('[data-message-id="' + arguments[0] + '"]').getBoundingClientRect().top;`,
      before.id,
    );
    assert.ok(Math.abs(now - before.top) < 2, `the message that was at the top stays there (${before.top} → ${now})`);
    const shown = await rendered(app);
    assert.deepEqual(shown, messages.slice(-shown.length), 'what is on the page is the end of the chat, without gaps');
  });

  it('offers the earlier messages to the keyboard too', async () => {
    // Read in one script: after the step above, earlier messages may still be joining, and the
    // count and the button's text must come from the same render.
    const { count, label } = await app.driver.executeScript(
      `return { count: document.querySelectorAll('[data-testid="message"]').length, label: document.querySelector('[data-testid="messages-earlier"]').textContent };`,
    );
    const earlier = await app.find('messages-earlier');
    assert.match(label, new RegExp(`\\(${messages.length - count} more\\)`), 'it says how many are left');
    const first = messages.indexOf((await rendered(app))[0]);
    await earlier.sendKeys(Key.ENTER);
    await waitUntil(async () => messages.indexOf((await rendered(app))[0]) <= Math.max(0, first - STEP), 'a step more above');
  });

  it('brings a search result from far up onto the page and marks it', async () => {
    const question = messages[4]; // "Question 3: … zeppelin"
    assert.ok(!(await rendered(app)).includes(question), 'the question is not on the page yet');
    await (await app.find('chat-search')).sendKeys('zeppelin');
    await (await app.find('chat-search-result')).click();
    await waitUntil(
      () => app.driver.executeScript(`return document.querySelector('[data-message-id="' + arguments[0] + '"]')?.classList.contains('message--found') ?? false;`, question),
      'the found message is on the page, marked',
    );
    await app.screenshot('long-chat-search-result');
  });

  it('is clean under axe far up, with its buttons back to the end, in both themes', async () => {
    await app.find('messages-latest');
    await app.find('messages-later');
    for (const theme of ['light', 'dark']) {
      // As useTheme.ts applies the user's choice.
      await app.driver.executeScript(`document.documentElement.dataset.theme = arguments[0];`, theme);
      const violations = await app.axe('[data-testid="conversation"]');
      assert.deepEqual(violations, [], `no WCAG 2.1 AA violation in the ${theme} theme: ${JSON.stringify(violations)}`);
    }
    await app.driver.executeScript(`delete document.documentElement.dataset.theme;`);
  });

  it('goes back to the end from far up with "Jump to the latest message", focus staying in the messages', async () => {
    assert.ok(!(await rendered(app)).includes(messages.at(-1)), 'far up, the end of the chat is not on the page');
    await (await app.find('messages-latest')).sendKeys(Key.ENTER);
    await waitUntil(async () => (await rendered(app)).at(-1) === messages.at(-1), 'the last message is on the page');
    const state = await app.driver.executeScript(
      `const box = document.querySelector('.conversation__scroll');
       return { atBottom: box.scrollHeight - box.scrollTop - box.clientHeight < 2, focused: document.activeElement === box,
                jump: document.querySelector('[data-testid="messages-latest"]') !== null };`,
    );
    assert.equal(state.atBottom, true, 'scrolled to the newest message');
    assert.equal(state.focused, true, 'the button left the page; focus is on the messages, not lost');
    assert.equal(state.jump, false, 'at the end there is nothing to jump to');
  });

  it('keeps only the messages near the view from the last message to the first and back, the view never jumping', async () => {
    const up = await scrollThrough(app, 'up', messages[0]);
    assert.equal(up.jumps, 0, `the message at the top of the view moved only as far as it was scrolled (${up.steps} pages up): ${JSON.stringify(up.jumped)}`);
    assert.equal(up.seen.length, messages.length, 'every message was on the page on the way');
    const atTop = await rendered(app);
    assert.equal(atTop[0], messages[0], 'the first message is on the page');
    assert.ok(!atTop.includes(messages.at(-1)), 'the end of the chat left the page');
    assert.ok(atTop.length < messages.length / 2, `${atTop.length} of ${messages.length} messages on the page at the top`);
    assert.deepEqual(atTop, messages.slice(0, atTop.length), 'what is on the page is the start of the chat, without gaps');
    await app.find('messages-latest');

    const down = await scrollThrough(app, 'down', messages.at(-1));
    assert.equal(down.jumps, 0, `the view did not jump on the way down either (${down.steps} pages): ${JSON.stringify(down.jumped)}`);
    const atEnd = await rendered(app);
    assert.ok(!atEnd.includes(messages[0]), 'the start left the page again');
    assert.deepEqual(atEnd, messages.slice(-atEnd.length), 'the end of the chat, without gaps');
    await app.screenshot('long-chat-back-at-end');
  });
});
