// Keypool as a desktop app: one instance per database (a second launch hands over to the running
// window and exits), a window that quits when closed and comes back as it was left.
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
  requestClose,
  startSessionBus,
  unfocus,
  waitUntil,
  windowsOf,
} from './desktop.mjs';
import { launchApp, tempDataDir } from './harness.mjs';

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
