// Keypool as a desktop app: one instance per database (a second launch hands over to the running
// window and exits), a window that quits when closed and comes back as it was left, and WebKit
// compositing off on a machine without a GPU, where a streaming reply still reaches the screen.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  descendantsOf,
  exitOf,
  focusedWindow,
  hasEnded,
  inkIn,
  requestClose,
  startSessionBus,
  unfocus,
  waitUntil,
  windowGeometry,
  windowsOf,
} from './desktop.mjs';
import { HAS_RENDER_NODE, launchApp, startFakeProvider, tempDataDir } from './harness.mjs';
import { click, send } from './steps.mjs';

const logOf = (dataDir) => readFileSync(join(dataDir, 'logs', 'keypool.log'), 'utf8');
const count = (text, pattern) => text.split(pattern).length - 1;

/** The app's one visible window. */
function windowOf(app) {
  const windows = windowsOf(app.processId());
  assert.equal(windows.length, 1, `the app shows exactly one window: ${windows}`);
  return windows[0];
}

describe('one instance per database', () => {
  let bus;
  let app;
  before(async () => {
    // The plugin finds the running app on the D-Bus session bus; this one is the test's own.
    bus = await startSessionBus();
    app = await launchApp({ env: { DBUS_SESSION_BUS_ADDRESS: bus.address } });
    await app.find('app-shell');
  });
  after(async () => {
    await app?.stop();
    bus?.stop();
  });

  it('a second launch exits and brings the running window to the front', async () => {
    const window = windowOf(app);
    unfocus();
    assert.notEqual(focusedWindow(), window, 'before the second launch, the window does not have the focus');

    const binary = readlinkSync(`/proc/${app.processId()}/exe`);
    const second = spawn(binary, [], {
      env: { ...process.env, KEYPOOL_DATA_DIR: app.dataDir, DBUS_SESSION_BUS_ADDRESS: bus.address },
      stdio: 'ignore',
    });
    assert.deepEqual(await exitOf(second), { code: 0, signal: null }, 'the second launch exits by itself, successfully');
    await waitUntil(() => focusedWindow() === window, 'the running window has the keyboard focus');

    const log = logOf(app.dataDir);
    assert.equal(count(log, 'Keypool starting'), 1, 'the second launch never got as far as opening the database');
    assert.match(log, /launched again/, 'the running app heard of the second launch');
    assert.equal(windowsOf(app.processId()).length, 1, 'still one window');
    const status = await app.invoke('app:getStatus');
    assert.equal(status.value?.database.state, 'ready', `the running app still serves: ${JSON.stringify(status)}`);
  });

  it('an app over another database runs alongside', async () => {
    const other = await launchApp({ env: { DBUS_SESSION_BUS_ADDRESS: bus.address } });
    try {
      await other.find('app-shell');
      assert.notEqual(other.dataDir, app.dataDir);
      assert.ok(!hasEnded(other.processId()) && !hasEnded(app.processId()), 'both apps run');
    } finally {
      await other.stop();
    }
  });
});

describe('the window', () => {
  const dataDir = tempDataDir();
  const left = { x: 60, y: 40, width: 960, height: 660 };

  it('closing it quits the app, with no process left behind', async () => {
    const app = await launchApp({ dataDir });
    try {
      await app.find('app-shell');
      await app.driver.manage().window().setRect(left);
      await (await app.find('nav-settings')).click();
      await (await app.find('settings-general')).click();
      await app.find('general-section');

      const pid = app.processId();
      const family = [pid, ...descendantsOf(pid)];
      assert.ok(family.length >= 2, `WebKit's processes run under the app: ${family}`);
      requestClose(windowOf(app));
      await waitUntil(() => family.every(hasEnded), 'the app and its WebKit processes have ended', 10_000);
    } finally {
      await app.stop().catch(() => {}); // its WebDriver session ended with it
    }
    const state = JSON.parse(readFileSync(join(dataDir, 'window-state.json'), 'utf8'));
    assert.deepEqual(
      { x: state.main.x, y: state.main.y, width: state.main.width, height: state.main.height },
      left,
      'the window state was saved on the way out',
    );
  });

  it('comes back with the size, position and page it was left with', async () => {
    const app = await launchApp({ dataDir, keepPreferences: true });
    try {
      await app.find('general-section');
      const current = await (await app.find('settings-general')).getAttribute('aria-current');
      assert.equal(current, 'page', 'Settings → General, where the app was left, is open again');
      assert.deepEqual(await app.driver.manage().window().getRect(), left, 'the window has its old size and place');
    } finally {
      await app.stop();
    }
  });
});

/** The variable `name` as the app's WebKit web process was started with (undefined: unset). */
function webProcessVariable(app, name) {
  const web = descendantsOf(app.processId()).find((pid) => readFileSync(`/proc/${pid}/comm`, 'utf8').startsWith('WebKitWebProces'));
  assert.ok(web, 'the app runs a WebKit web process');
  const environment = readFileSync(`/proc/${web}/environ`, 'utf8').split('\0');
  return environment.find((entry) => entry.startsWith(`${name}=`))?.slice(name.length + 1);
}

describe('drawing without a GPU', () => {
  // WebKit composites with OpenGL; without a render node that is Mesa's software rasteriser,
  // which costs the web process ~75 MiB for nothing, so the app turns compositing off there.
  /** WEBKIT_DISABLE_COMPOSITING_MODE as the app's web process was started with (undefined: unset). */
  const compositingVariableOf = (app) => webProcessVariable(app, 'WEBKIT_DISABLE_COMPOSITING_MODE');

  it('turns compositing off on a machine with no render node, and on by WebKit default with one', async () => {
    const app = await launchApp({ env: { WEBKIT_DISABLE_COMPOSITING_MODE: undefined } }); // as a desktop starts it
    try {
      await app.find('app-shell');
      assert.equal(compositingVariableOf(app), HAS_RENDER_NODE ? undefined : '1', `render node: ${HAS_RENDER_NODE}`);
    } finally {
      await app.stop();
    }
  });

  it("keeps the user's own choice", async () => {
    const app = await launchApp({ env: { WEBKIT_DISABLE_COMPOSITING_MODE: '0' } });
    try {
      await app.find('app-shell');
      assert.equal(compositingVariableOf(app), '0', 'the value the user set reaches WebKit unchanged');
    } finally {
      await app.stop();
    }
  });

  it('draws a streaming reply on the screen without compositing, with no input coming in', async () => {
    // WebDriver's own screenshot has WebKit paint first, so the screen's pixels are read from the
    // X server instead, and no WebDriver command runs while the reply streams.
    const fake = await startFakeProvider();
    const app = await launchApp({ env: { WEBKIT_DISABLE_COMPOSITING_MODE: '1' } });
    try {
      await app.find('chat-page');
      const key = 'sk-fake-SCREEN000000-0001';
      const provider = await app.invoke('llmConfig:addProvider', { name: 'Fake', kind: 'openai', baseUrl: `${fake.url}/v1`, apiKey: key, models: ['fake-model'], defaultModel: 'fake-model' });
      assert.ok(provider.ok, JSON.stringify(provider.error));
      const chat = await app.invoke('chat:create', { providerId: provider.value.id, title: 'On the screen' });
      assert.ok(chat.ok, JSON.stringify(chat.error));
      await click(app, 'nav-settings'); // the chat list loads anew when Chat opens again
      await click(app, 'nav-chat');
      await click(app, 'chat-item-select');
      await app.find('composer-input');
      const words = Array.from({ length: 8 }, (_, i) => ` word${i}`);
      await fake.script(key, [{ kind: 'slow', chunks: words, delay_ms: 300 }]);
      // Where the reply will be: between the chat's header and the composer, on the screen.
      const page = await app.driver.executeScript(`
        const composer = document.querySelector('[data-testid="composer-input"]').getBoundingClientRect();
        const chat = document.querySelector('[data-testid="chat-page"]').getBoundingClientRect();
        return { x: composer.left, y: chat.top + 70, width: composer.width, height: composer.top - chat.top - 90 };`);
      const window = windowGeometry(windowOf(app));
      const area = { ...page, x: window.x + page.x, y: window.y + page.y };

      await send(app, 'Hello screen');
      const before = inkIn(area);
      let most = before;
      let grew = 0;
      const deadline = Date.now() + words.length * 300 + 5_000;
      while (grew < words.length / 2 && Date.now() < deadline) {
        const ink = inkIn(area);
        // A word is dozens of dark pixels; the blinking caret is lighter than the threshold.
        if (ink > most + 40) grew += 1;
        most = Math.max(most, ink);
      }
      assert.ok(grew >= words.length / 2, `the reply's text grew on the screen ${grew} times as ${words.length} pieces came in (dark pixels ${before} → ${most})`);
    } finally {
      await app.stop();
      fake.stop();
    }
  });
});

describe("the JavaScript engine's heap", () => {
  // JavaScriptCore lets its heap grow to four times what was live on a machine with 16 GiB or
  // more; a long chat scrolled through then kept 77 MiB more. The app tunes it from the
  // environment the web process inherits (src-tauri/src/javascript_heap.rs).
  it('starts the web process with the tuning, and keeps a value the user set', async () => {
    const app = await launchApp({ env: { JSC_largeHeapSize: '16777216' } });
    try {
      await app.find('app-shell');
      assert.equal(webProcessVariable(app, 'JSC_heapGrowthMaxIncrease'), '0.25', 'the growth allowed over what was live');
      assert.equal(webProcessVariable(app, 'JSC_smallHeapGrowthFactor'), '1.25', 'the same on a machine with less RAM');
      assert.equal(webProcessVariable(app, 'JSC_maxEdenSizeForRateLimitingMultiplier'), '1', 'the eden');
      assert.equal(webProcessVariable(app, 'JSC_useFTLJIT'), '0', 'no FTL tier');
      assert.equal(webProcessVariable(app, 'JSC_largeHeapSize'), '16777216', 'the value the user set reaches WebKit unchanged');
    } finally {
      await app.stop();
    }
  });
});
