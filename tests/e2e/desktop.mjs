// What a desktop session gives the app, for the tests that check how Keypool behaves in one:
// its windows and the keyboard focus on the X server (Xvfb, no window manager: x11.py plays that
// part), a private D-Bus session bus, and the processes the app started.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const X11_PY = join(import.meta.dirname, 'x11.py');

function run(command, args) {
  return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** The visible top-level windows of process `pid` (GTK sets _NET_WM_PID on them). */
export function windowsOf(pid) {
  try {
    return run('xdotool', ['search', '--onlyvisible', '--pid', String(pid)]).split('\n').filter(Boolean).map(Number);
  } catch {
    return []; // xdotool exits with 1 when no window matches
  }
}

/** Where `window` is on the screen, and its size. */
export function windowGeometry(window) {
  const fields = Object.fromEntries(run('xdotool', ['getwindowgeometry', '--shell', String(window)]).split('\n').map((line) => line.split('=')));
  return { x: Number(fields.X), y: Number(fields.Y), width: Number(fields.WIDTH), height: Number(fields.HEIGHT) };
}

/**
 * How many dark pixels (text on the light theme's surfaces) the screen shows in `area`
 * ({ x, y, width, height } in screen pixels), read from the X server as it is now: ImageMagick's
 * `import` of the root window, as 8-bit grey.
 */
export function inkIn({ x, y, width, height }) {
  const crop = `${Math.round(width)}x${Math.round(height)}+${Math.round(x)}+${Math.round(y)}`;
  const grey = execFileSync('import', ['-window', 'root', '-crop', crop, '-depth', '8', 'gray:-'], { stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 64 << 20 });
  let dark = 0;
  for (const value of grey) if (value < 96) dark += 1;
  return dark;
}

/** The window holding the keyboard focus, or null when none does. */
export function focusedWindow() {
  try {
    return Number(run('xdotool', ['getwindowfocus', '-f']));
  } catch {
    return null; // the focus is on the root (PointerRoot): xdotool reports that as an error
  }
}

/** Takes the keyboard focus away from every window. */
export function unfocus() {
  run('python3', [X11_PY, 'unfocus']);
}

/** Asks `window` to close, as the close button of a window manager's title bar does. */
export function requestClose(window) {
  run('python3', [X11_PY, 'close', String(window)]);
}

/** The ids of `pid`'s descendants (WebKit's web and network processes, for the app). */
export function descendantsOf(pid) {
  const tasks = `/proc/${pid}/task`;
  let children = [];
  try {
    children = readdirSync(tasks).flatMap((task) => readFileSync(join(tasks, task, 'children'), 'utf8').split(' ').filter(Boolean).map(Number));
  } catch {
    return []; // gone
  }
  return children.flatMap((child) => [child, ...descendantsOf(child)]);
}

/** Whether process `pid` has ended (a zombie has: it only waits for its parent to notice). */
export function hasEnded(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return true;
  }
}

/** Polls `condition` every 50 ms until it holds; fails with `what` after `timeout` ms. */
export async function waitUntil(condition, what, timeout = 15_000) {
  const deadline = Date.now() + timeout;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeout} ms waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Resolves `{ code, signal }` when `child` exits; rejects after `timeout` ms. */
export function exitOf(child, timeout = 15_000) {
  return new Promise((resolve, reject) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve({ code: child.exitCode, signal: child.signalCode });
    const timer = setTimeout(() => reject(new Error(`process ${child.pid} still runs after ${timeout} ms`)), timeout);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal });
    });
  });
}

/**
 * Starts a private D-Bus session bus, in `env` (a test's own HOME and XDG_RUNTIME_DIR, say).
 * Returns { address, stop() }. Its own process group, so stopping it also ends what it activated
 * (GTK asks it for the accessibility bus).
 */
export async function startSessionBus(env = process.env) {
  if (!existsSync('/usr/bin/dbus-daemon')) throw new Error('dbus-daemon is missing (Debian package dbus-daemon)');
  const daemon = spawn('dbus-daemon', ['--session', '--nofork', '--print-address=1'], {
    env,
    stdio: ['ignore', 'pipe', 'ignore'],
    detached: true,
  });
  const address = await new Promise((resolve, reject) => {
    let seen = '';
    daemon.stdout.setEncoding('utf8');
    daemon.stdout.on('data', (chunk) => {
      seen += chunk;
      if (seen.includes('\n')) resolve(seen.trim());
    });
    daemon.once('error', reject);
    daemon.once('exit', (code) => reject(new Error(`dbus-daemon exited with ${code} before printing its address`)));
  });
  return {
    address,
    stop() {
      try {
        process.kill(-daemon.pid, 'SIGTERM');
      } catch {
        // already gone
      }
    },
  };
}
