// Launches the real Keypool binary under WebKitWebDriver and hands back a Selenium driver.
// One WebKitWebDriver per app instance, so each test chooses its own environment
// (KEYPOOL_DATA_DIR above all) for the app it starts.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Builder, By, until } from 'selenium-webdriver';

export const ARTIFACTS = resolve(import.meta.dirname, '..', 'artifacts');
const BINARY = process.env.KEYPOOL_APP_BINARY ?? resolve(import.meta.dirname, '..', '..', 'target', 'debug', 'keypool');

export { By, until };

/** axe-core's browser build, injected into the page by `app.axe()`. */
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
/** The rules checked: WCAG 2.0 and 2.1, levels A and AA. */
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

export function tempDataDir(prefix = 'keypool-e2e-') {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A port nothing listens on right now (the OS's pick, released at once). */
export function freePort() {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => ok(port));
    });
  });
}

/** Polls the driver's /status until it answers: waiting for a condition, bounded. */
async function waitForDriver(url, driverProcess) {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    if (driverProcess.exitCode !== null) throw new Error(`WebKitWebDriver exited with ${driverProcess.exitCode}`);
    try {
      const response = await fetch(`${url}/status`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('WebKitWebDriver did not start');
}

/** UI preferences kept in the webview's localStorage, which outlives KEYPOOL_DATA_DIR (the page the app was left on too). */
const UI_PREFERENCES = ['keypool.language', 'keypool.theme', 'keypool.route'];

/** A D-Bus address nothing listens on: the app finds no keychain and keeps keys in its database. */
export const NO_SESSION_BUS = 'unix:path=/nonexistent/keypool-e2e-no-session-bus';

/** Whether this machine has a GPU's DRM render node (`/dev/dri/renderD*`). */
export const HAS_RENDER_NODE = existsSync('/dev/dri') && readdirSync('/dev/dri').some((name) => name.startsWith('renderD'));

/**
 * The environment the app gives WebKit on this machine (`src-tauri/src/rendering.rs`):
 * compositing off without a render node. The benches launch the app and the blank window with
 * it, so both draw as the app does for a user of this machine.
 */
export const AS_THE_APP_DRAWS = {
  // As in the app, a value set in the environment wins (a bench of the other mode).
  WEBKIT_DISABLE_COMPOSITING_MODE: process.env.WEBKIT_DISABLE_COMPOSITING_MODE ?? (HAS_RENDER_NODE ? undefined : '1'),
};

/**
 * Starts the app with `env` added to its environment. Returns { driver, dataDir, stop,
 * screenshot(name), invoke(command, args) }. The webview's storage is shared by every run, so
 * UI preferences a test chose (language, theme) are cleared first unless `keepPreferences`.
 * `binary` is another Tauri binary to drive the same way (the bench's blank window).
 */
export async function launchApp({ dataDir = tempDataDir(), env = {}, keepPreferences = false, binary = BINARY } = {}) {
  const port = await freePort();
  // Its own process group, so stopping it also stops the app it launched; no inherited
  // stdio, so a straggler can never keep the test runner waiting for EOF. The app's own log is
  // in <dataDir>/logs/keypool.log.
  const driverProcess = spawn('WebKitWebDriver', [`--port=${port}`], {
    // No session bus unless a test brings its own (keychain.test.mjs): test keys must never land
    // in the keychain of whoever runs the suite.
    //
    // WebKit composites, as it does on a machine with a GPU: without compositing (what the app
    // chooses where there is none, like this Xvfb), WebKitWebDriver's commands can stall until
    // the window gets an input event, though the window itself keeps drawing (desktop.test.mjs
    // checks that mode with the screen's own pixels). A test passes the variable as undefined
    // to let the app choose.
    env: {
      ...process.env,
      DBUS_SESSION_BUS_ADDRESS: NO_SESSION_BUS,
      TAURI_WEBVIEW_AUTOMATION: 'true',
      KEYPOOL_DATA_DIR: dataDir,
      WEBKIT_DISABLE_COMPOSITING_MODE: '0',
      ...env,
    },
    stdio: 'ignore',
    detached: true,
  });
  const killGroup = (signal) => {
    try {
      process.kill(-driverProcess.pid, signal);
    } catch {
      // already gone
    }
  };
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForDriver(url, driverProcess);
    const driver = await new Builder()
      .usingServer(url)
      .withCapabilities({ browserName: 'wry', 'webkitgtk:browserOptions': { binary, args: [] } })
      .build();
    await driver.manage().setTimeouts({ script: 15000 });
    if (!keepPreferences) {
      const hadPreferences = await driver.executeScript(
        `const keys = arguments[0];
         const had = keys.some((key) => localStorage.getItem(key) !== null);
         keys.forEach((key) => localStorage.removeItem(key));
         return had;`,
        UI_PREFERENCES,
      );
      if (hadPreferences) await driver.navigate().refresh();
    }
    const app = {
      driver,
      dataDir,
      /** SIGKILL the app (and its driver) at once: a crash, no chance to clean up. */
      crash() {
        killGroup('SIGKILL');
      },
      async stop() {
        try {
          await driver.quit();
        } finally {
          killGroup('SIGTERM');
          killGroup('SIGKILL');
        }
      },
      async screenshot(name) {
        // WebKit snapshots the last painted frame: let two frames paint first.
        await driver.executeAsyncScript(
          'const done = arguments[0]; requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(done, 0)));',
        );
        const png = await driver.takeScreenshot();
        const file = join(ARTIFACTS, `${name}.png`);
        writeFileSync(file, png, 'base64');
        return file;
      },
      /** Calls a backend command from the page, as the UI does. Resolves { ok, value } or { ok: false, error }. */
      invoke(command, args = {}) {
        return driver.executeAsyncScript(
          `const [command, args, done] = arguments;
           window.__TAURI_INTERNALS__.invoke(command, args).then(
             (value) => done({ ok: true, value }),
             (error) => done({ ok: false, error }));`,
          command,
          args,
        );
      },
      /**
       * Runs axe-core's WCAG 2.1 A/AA rules on the page as it is now (or on the element matching
       * `selector`). Resolves the violations, each `{ id, impact, help, nodes: [{ target, summary }] }`.
       */
      async axe(selector = null) {
        await driver.executeScript(`${AXE_SOURCE}\nreturn typeof window.axe;`);
        const answer = await driver.executeAsyncScript(
          `const [selector, tags, done] = arguments;
           const context = selector ? document.querySelector(selector) : document;
           window.axe
             .run(context, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] })
             .then((r) => done({ violations: r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
               nodes: v.nodes.map((n) => ({ target: n.target.join(' '), summary: n.failureSummary })) })) }))
             .catch((e) => done({ error: String(e) }));`,
          selector,
          AXE_TAGS,
        );
        if (answer.error) throw new Error(`axe-core failed: ${answer.error}`);
        return answer.violations;
      },
      find(testId, timeout = 15000) {
        return driver.wait(until.elementLocated(By.css(`[data-testid="${testId}"]`)), timeout);
      },
      /** The app's process id: the child of this app's WebKitWebDriver that runs the binary. */
      processId() {
        const tasks = `/proc/${driverProcess.pid}/task`;
        const children = readdirSync(tasks).flatMap((task) => readFileSync(`${tasks}/${task}/children`, 'utf8').split(' ').filter(Boolean));
        const exe = realpathSync(binary);
        const pid = children.map(Number).find((child) => {
          try {
            return readlinkSync(`/proc/${child}/exe`) === exe;
          } catch {
            return false; // gone meanwhile
          }
        });
        if (pid === undefined) throw new Error(`no process runs ${exe} under WebKitWebDriver ${driverProcess.pid}`);
        return pid;
      },
    };
    return app;
  } catch (error) {
    killGroup('SIGKILL');
    throw error;
  }
}

const FAKE_PROVIDER = process.env.KEYPOOL_FAKE_PROVIDER_BINARY ?? resolve(import.meta.dirname, '..', '..', 'target', 'debug', 'keypool-fake-provider');

/**
 * Starts the fake LLM provider on a free loopback port. Returns { url, script(key, replies,
 * always?), release(gate), requests(), reset(), limit(key, requests, windowMs), refused(), models(list), stop() };
 * `limit` makes the fake enforce and announce a window of `requests` per `windowMs` for `key` (each
 * model its own), `refused` counts the requests it refused for a limit. An OpenAI-compatible base URL is
 * `${url}/v1`, an Anthropic one is `url`. Replies are the fake's JSON (`{ kind: 'text', chunks }`,
 * `{ kind: 'status', status, headers, message }`, `{ kind: 'hold', chunks_before, gate, chunks_after }`, …).
 */
export async function startFakeProvider() {
  const child = spawn(FAKE_PROVIDER, ['--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise((ok, fail) => {
    let seen = '';
    const onData = (chunk) => {
      seen += chunk;
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(seen);
      if (match) {
        child.stdout.off('data', onData);
        child.stdout.resume(); // keep draining, so the fake never blocks on a full pipe
        ok(match[1]);
      }
    };
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', onData);
    child.once('error', fail);
    child.once('exit', (code) => fail(new Error(`the fake provider exited with ${code} before listening: ${seen}`)));
  });
  const control = async (path, body) => {
    const response = await fetch(`${url}/__fake/${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`fake provider ${path}: HTTP ${response.status} ${await response.text()}`);
    return response.status === 204 ? undefined : response.json();
  };
  return {
    url,
    script: (key, replies, always) => control('script', { key, replies, ...(always ? { always } : {}) }),
    release: (gate) => control('release', { gate }),
    requests: () => control('requests'),
    reset: () => control('reset', {}),
    limit: (key, requests, windowMs) => control('limit', { key, requests, window_ms: windowMs }),
    refused: () => control('refused'),
    /** What `GET models` lists from now on (default: the one `fake-model`). */
    models: (list) => control('models', list),
    /** What `key`'s account holds, as DeepSeek's, Moonshot's and SiliconFlow's balance reads answer. */
    balance: (key, amount, currency) => control('balance', { key, amount, currency }),
    stop() {
      child.kill('SIGTERM');
    },
  };
}
