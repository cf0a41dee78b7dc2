// The steps the end-to-end tests take in the real window, once: finding again what React
// re-rendered, waiting for a condition (never for time), typing over a field, sending a message
// and reading the replies.
import assert from 'node:assert/strict';
import { Key } from 'selenium-webdriver';
import { By, until } from './harness.mjs';

/** How long a step waits for the window by default. */
export const WAIT = 15_000;

/** The text of an element as the DOM holds it (WebKitWebDriver's getText misses some). */
export const textOf = (element) => element.getAttribute('textContent');

/**
 * Runs a step again when React replaced the element it found in the meantime (a re-render
 * between find and use): finding again is what a user's next look would do.
 */
export async function fresh(step) {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await step();
    } catch (error) {
      if (error?.name !== 'StaleElementReferenceError' || attempt === 5) throw error;
    }
  }
}

export const click = (app, testId) => fresh(async () => (await app.find(testId)).click());

/** Chooses the option of a <select> by its visible text. */
export function selectByText(app, testId, text) {
  return fresh(async () =>
    (await app.find(testId)).findElement(By.xpath(`.//option[normalize-space(.)=${JSON.stringify(text)}]`)).click(),
  );
}

/** Waits until no element has this test id. */
export async function gone(app, testId, timeout = WAIT) {
  await app.driver.wait(
    async () => {
      try {
        return (await app.driver.findElements(By.css(`[data-testid="${testId}"]`))).length === 0;
      } catch {
        return false; // WebKitWebDriver: the element went away while being listed; look again
      }
    },
    timeout,
    `${testId} goes away`,
  );
}

/** Waits until `read()` gives a value `accept` likes; returns it. */
export async function waitFor(app, read, accept, message, timeout = WAIT) {
  let last;
  try {
    await app.driver.wait(async () => {
      try {
        last = await read();
        return accept(last);
      } catch {
        return false; // the element was re-rendered under us: read again
      }
    }, timeout);
  } catch {
    throw new Error(`${message}; last seen: ${JSON.stringify(last)}`);
  }
  return last;
}

/** Replaces what a field holds with `text`, as a user would (select all, delete, type). */
export async function retype(element, text) {
  await element.click();
  await element.sendKeys(Key.chord(Key.CONTROL, 'a'));
  await element.sendKeys(Key.BACK_SPACE);
  await element.sendKeys(text);
}

/** Types a message into the composer and sends it with Enter. */
export async function send(app, text) {
  const box = await app.find('composer-input');
  await box.sendKeys(text);
  await box.sendKeys(Key.ENTER);
}

/** Opens the chat `chatId` from the list and waits until its messages are read. */
export async function openChat(app, chatId) {
  const select = By.css(`[data-testid="chat-item"][data-chat-id="${chatId}"] [data-testid="chat-item-select"]`);
  await app.driver.wait(until.elementLocated(select), WAIT, 'the chat is listed');
  await fresh(async () => (await app.driver.findElement(select)).click());
  await waitFor(app, async () => (await app.driver.findElement(By.css('[data-testid="chat-item"][aria-current="true"]'))).getAttribute('data-chat-id'), (id) => id === chatId, 'the chat opens');
  await waitFor(app, async () => (await app.driver.findElement(By.css('[data-testid="conversation-scroll"]'))).getAttribute('data-loaded'), (loaded) => loaded === 'true', 'the chat’s messages are read');
}

/** The saved replies of the open chat: their text and status. */
export async function assistantMessages(app) {
  return fresh(async () => {
    const items = await app.driver.findElements(By.css('[data-testid="message"][data-role="assistant"]'));
    return Promise.all(items.map(async (item) => ({ text: await textOf(item), status: await item.getAttribute('data-status') })));
  });
}

/** axe-core finds nothing on the page (or in `selector`); the violations are named when it does. */
export async function assertAccessible(app, what, selector) {
  const violations = await app.axe(selector);
  assert.deepEqual(
    violations.map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => `${n.target}: ${n.summary}`).join(' | ')}`),
    [],
    `${what} passes WCAG 2.1 A/AA`,
  );
}

/** The key table's row of the key labelled `label`, once there is one. */
export async function keyRow(app, label) {
  let found;
  await app.driver.wait(
    async () => {
      for (const row of await app.driver.findElements(By.css('[data-testid="key-row"]'))) {
        try {
          if ((await textOf(await row.findElement(By.css('[data-testid="key-label"]')))) === label) {
            found = row;
            return true;
          }
        } catch {
          // re-rendered: look again
        }
      }
      return false;
    },
    WAIT,
    `a key row labelled ${label}`,
  );
  return found;
}

/**
 * Keeps UI preferences (theme, language) where Settings → General keeps them: in the profile's
 * data directory, through the backend. The page reads them before its first render, so a reload
 * shows them.
 */
export async function keepPreferences(app, preferences) {
  const kept = await app.invoke('app:setPreferences', preferences);
  assert.ok(kept.ok, `the preferences are kept: ${JSON.stringify(kept)}`);
  await app.driver.navigate().refresh();
  await app.find('app-shell');
}
