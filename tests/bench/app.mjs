// The figures of `npm run bench:app` (run.sh builds and starts this under Xvfb). Timings are
// medians of several runs; each line says how its figure was taken. Memory is the app process
// plus the WebKit processes it started (web content, network), as PSS (pages shared between
// processes split among them: the fair total) and RSS (what `top` shows; shared pages counted in
// every process).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { AS_THE_APP_DRAWS, launchApp, startFakeProvider, tempDataDir } from '../e2e/harness.mjs';
import { answer, fillChat, messagesShown } from './chat-scroll.mjs';
import { settledMemory } from './memory.mjs';
import { report } from './summary.mjs';

const STARTS = Number(process.env.KEYPOOL_BENCH_STARTS ?? 10);
const SWITCHES = Number(process.env.KEYPOOL_BENCH_SWITCHES ?? 11);
const FIRST_OPENS = Number(process.env.KEYPOOL_BENCH_FIRST_OPENS ?? 5);
const TURNS = 500; // a question and its answer each: 1 000 messages
const SWITCH_BUDGET_MS = 100;
const BINARY = process.env.KEYPOOL_APP_BINARY;
const BUNDLES = process.env.KEYPOOL_BUNDLE_DIR;
/** A Tauri window showing a blank page (crates/blank-window): the floor the app's memory stands on. */
const BLANK_WINDOW = process.env.KEYPOOL_BLANK_WINDOW_BINARY;

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const ms = (value) => `${Math.round(value)} ms`;
const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
const spread = (values) => `median ${ms(median(values))} (min ${ms(Math.min(...values))}, max ${ms(Math.max(...values))}, n=${values.length})`;
const line = (label, value) => console.log(`  ${label.padEnd(44)} ${value}`);

// ---------------------------------------------------------------- sizes

function newest(dir, suffix) {
  if (!existsSync(dir)) return null;
  const files = readdirSync(dir).filter((f) => f.endsWith(suffix)).map((f) => join(dir, f));
  return files.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0] ?? null;
}

/**
 * The JavaScript the first screen needs, gzip: the entry chunk and the chunks its page preloads
 * (ui/dist, as the last `tauri build` embedded it). Everything else loads on first use.
 */
function firstScreenScripts() {
  const html = readFileSync('ui/dist/index.html', 'utf8');
  const files = [...html.matchAll(/<(?:script[^>]*\ssrc|link rel="modulepreload"[^>]*\shref)="\/([^"]+\.js)"/g)].map((m) => m[1]);
  return files.map((file) => ({ file, gzip: gzipSync(readFileSync(join('ui/dist', file))).length }));
}

function sizes() {
  console.log('Sizes');
  line('release binary (target/release/keypool)', mib(statSync(BINARY).size));
  const scripts = firstScreenScripts();
  const kb = (bytes) => `${(bytes / 1000).toFixed(1)} kB`;
  const firstScreen = scripts.reduce((sum, s) => sum + s.gzip, 0);
  line('first screen JS, gzip', `${kb(firstScreen)} (${scripts.map((s) => `${s.file} ${kb(s.gzip)}`).join(', ')})`);
  for (const [kind, suffix] of [['deb', '.deb'], ['rpm', '.rpm'], ['appimage', '.AppImage']]) {
    const file = newest(join(BUNDLES, kind), suffix);
    if (!file) continue;
    let extra = '';
    if (kind === 'deb') {
      const installed = Number(execFileSync('dpkg-deb', ['--field', file, 'Installed-Size'], { encoding: 'utf8' }));
      extra = `, installs ${mib(installed * 1024)}`;
    }
    line(`.${kind} (${file.split('/').pop()})`, `${mib(statSync(file).size)}${extra}`);
  }
  return firstScreen;
}

// ---------------------------------------------------------------- processes

/** The Unix time (ms) at which the boot clock started, from /proc/uptime (10 ms steps). */
function bootTime() {
  let best = -Infinity;
  for (let i = 0; i < 200; i += 1) {
    const uptime = Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
    best = Math.max(best, Date.now() - uptime * 1000); // the latest estimate is the least truncated
  }
  return best;
}
const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));

/** When process `pid` started, as Unix time in ms (the kernel counts in clock ticks, 10 ms here). */
function startedAt(pid, boot) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return boot + (Number(fields[19]) * 1000) / CLOCK_TICKS; // field 22, starttime
}

function printMemory(label, m) {
  const parts = m.processes.map((p) => `${p.name} ${mib(p.pss)}`).join(', ');
  line(label, `PSS ${mib(m.pss)}, RSS ${mib(m.rss)}  (${parts})`);
}

// ---------------------------------------------------------------- the app

const click = async (app, testId) => (await app.find(testId)).click();

/**
 * A fresh start of the release binary (or of `binary`, showing `shown`): process start → page
 * load → first contentful paint.
 */
async function coldStart(boot, { binary = BINARY, shown = 'app-shell' } = {}) {
  const app = await launchApp({ dataDir: tempDataDir('keypool-bench-'), keepPreferences: true, binary, env: AS_THE_APP_DRAWS });
  try {
    const started = startedAt(app.processId(), boot);
    await app.find(shown);
    // The paint entry may come a frame after the shell is in the DOM: wait for it.
    const page = await app.driver.executeAsyncScript(
      `const done = arguments[0];
       const report = (paint) => {
         const navigation = performance.getEntriesByType('navigation')[0];
         // The page's own points (ui/src/startupMarks.ts), in ms from its load.
         const marks = Object.fromEntries(performance.getEntriesByType('mark')
           .filter((m) => m.name.startsWith('keypool:')).map((m) => [m.name.slice(8), m.startTime]));
         done({ origin: performance.timeOrigin, paint: paint.startTime, navigation: navigation?.type,
                marks: { html: navigation?.responseEnd, ...marks } });
       };
       const found = performance.getEntriesByName('first-contentful-paint')[0];
       if (found) return report(found);
       new PerformanceObserver((list, observer) => {
         const paint = list.getEntriesByName('first-contentful-paint')[0];
         if (paint) { observer.disconnect(); report(paint); }
       }).observe({ type: 'paint', buffered: true });`,
    );
    if (page.navigation !== 'navigate') throw new Error(`the page was loaded by a ${page.navigation}, not a fresh start`);
    return { page: page.origin - started, paint: page.origin + page.paint - started, inPage: { ...page.marks, paint: page.paint } };
  } finally {
    await app.stop();
  }
}

/**
 * Opens chat `to` from chat `from` by clicking it in the chat list, in the page. Answers the ms
 * from the click until its last message is in the DOM, and until that frame has been painted.
 */
function switchChat(app, from, to) {
  return app.driver.executeAsyncScript(
    `const [from, to, done] = arguments;
     const select = (chat) => document.querySelector('[data-chat-id="' + chat.id + '"] [data-testid="chat-item-select"]');
     const shows = (chat) => {
       const contents = document.querySelectorAll('[data-testid="message-content"]');
       return contents.length > 0 && contents[contents.length - 1].textContent.includes(chat.lastText);
     };
     const showing = (chat) => new Promise((resolve) => {
       if (shows(chat)) return resolve();
       const observer = new MutationObserver(() => { if (shows(chat)) { observer.disconnect(); resolve(); } });
       observer.observe(document.body, { childList: true, subtree: true, characterData: true });
     });
     const painted = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
     (async () => {
       select(from).click();
       await showing(from);
       await painted();
       const clicked = performance.now();
       select(to).click();
       await showing(to);
       const inDom = performance.now() - clicked;
       await painted();
       return { inDom, painted: performance.now() - clicked, messages: document.querySelectorAll('[data-testid="message"]').length };
     })().then(done, (e) => done({ error: String(e) }));`,
    from,
    to,
  );
}

// ---------------------------------------------------------------- the run

async function main() {
  console.log(`Keypool ${JSON.parse(readFileSync('src-tauri/tauri.conf.json', 'utf8')).version}: ${BINARY}`);
  console.log(`${execFileSync('nproc', { encoding: 'utf8' }).trim()} cores, Xvfb 1280x800, no window manager\n`);
  /** The issue's targets, met or not: the rows of the benches' one table (summary.mjs). */
  const targets = [];
  const firstScreen = sizes();
  targets.push({ what: 'first screen JS (entry + preloaded chunks), gzip', figure: `${(firstScreen / 1000).toFixed(1)} kB`, goal: '≤ 150 kB', met: firstScreen <= 150_000 });

  // The webview's localStorage outlives data directories: start from no remembered page.
  await (await launchApp({ env: AS_THE_APP_DRAWS })).stop();
  const boot = bootTime();
  console.log(`\nCold start (a new process and data directory each time; page cache warm), ${STARTS} starts`);
  const starts = [];
  for (let i = 0; i < STARTS; i += 1) starts.push(await coldStart(boot));
  line('process start → page starts loading', spread(starts.map((s) => s.page)));
  line('process start → first contentful paint', spread(starts.map((s) => s.paint)));
  const paint = median(starts.map((s) => s.paint));
  // Where the page's part goes: each point's median, from the page's load.
  const points = { html: 'the page received', script: 'the first screen\'s modules run', preferences: 'preferences answered',
                   status: 'app status answered', shell: 'the shell rendered', paint: 'first contentful paint' };
  for (const [point, label] of Object.entries(points)) {
    const at = starts.map((s) => s.inPage[point]).filter((v) => v !== undefined);
    if (at.length) line(`  page load → ${label}`, spread(at));
  }
  let floorPaint = null;
  if (BLANK_WINDOW) {
    // The floor: what WebKit and Tauri take to show a page, whatever the page.
    const blanks = [];
    for (let i = 0; i < STARTS; i += 1) blanks.push(await coldStart(boot, { binary: BLANK_WINDOW, shown: 'blank-window' }));
    line('  a blank Tauri window: page starts loading', spread(blanks.map((s) => s.page)));
    line('  a blank Tauri window: first contentful paint', spread(blanks.map((s) => s.paint)));
    floorPaint = median(blanks.map((s) => s.paint));
  }
  const floorNote = floorPaint === null ? '' : ` (a blank Tauri window: ${ms(floorPaint)})`;
  targets.push({ what: `first contentful paint, median of ${STARTS} cold starts`, figure: ms(paint) + floorNote, goal: '≤ 300 ms', met: paint <= 300 });

  console.log('\nMemory (app + WebKit processes, settled)');
  let floor = null;
  if (BLANK_WINDOW) {
    // Started, measured and stopped before the app starts, so neither shares pages with the other.
    const blank = await launchApp({ binary: BLANK_WINDOW, keepPreferences: true, env: AS_THE_APP_DRAWS });
    try {
      await blank.find('blank-window');
      floor = await settledMemory(blank.processId());
    } finally {
      await blank.stop();
    }
    printMemory('a blank Tauri window (the floor), idle', floor);
  }
  const fake = await startFakeProvider();
  const app = await launchApp({ dataDir: tempDataDir('keypool-bench-'), keepPreferences: true, env: AS_THE_APP_DRAWS });
  try {
    await app.driver.manage().setTimeouts({ script: 30 * 60_000 });
    await app.find('chat-page');
    const pid = app.processId();
    const idle = await settledMemory(pid);
    printMemory('idle, just started', idle);
    if (floor) {
      line('idle ÷ the blank window', `RSS ${(idle.rss / floor.rss).toFixed(2)}, PSS ${(idle.pss / floor.pss).toFixed(2)}`);
      const ratio = idle.rss / floor.rss;
      targets.push({ what: 'app RSS idle ÷ a blank Tauri window', figure: `${ratio.toFixed(2)} (${mib(idle.rss)} ÷ ${mib(floor.rss)})`, goal: '≤ 1.05', met: ratio <= 1.05 });
    }

    for (const [testId, shown] of [
      ['nav-settings', 'api-key-pool'],
      ['settings-general', 'general-section'],
      ['settings-localApi', 'local-api-section'],
      ['settings-about', 'about'],
      ['settings-providers', 'api-key-pool'],
      ['nav-usage', 'usage-empty'],
      ['nav-chat', 'chat-page'],
    ]) {
      await click(app, testId);
      await app.find(shown);
    }
    printMemory('after opening every page', await settledMemory(pid));

    // Two 1 000-message chats and short ones, written through the real chat path against the fake.
    const key = 'sk-bench-0000000000000000000001';
    await fake.script(key, Array.from({ length: 2 * TURNS + 2 }, (_, i) => ({ kind: 'text', chunks: [answer(i + 1)] })));
    const provider = await app.invoke('llmConfig:addProvider', {
      name: 'Bench',
      kind: 'openai',
      baseUrl: `${fake.url}/v1`,
      apiKey: key,
      models: ['fake-model'],
      defaultModel: 'fake-model',
    });
    if (!provider.ok) throw new Error(`adding the provider failed: ${JSON.stringify(provider.error)}`);
    const create = async (title) => {
      const chat = await app.invoke('chat:create', { providerId: provider.value.id, title });
      if (!chat.ok) throw new Error(`creating a chat failed: ${JSON.stringify(chat.error)}`);
      return chat.value;
    };
    await click(app, 'nav-settings'); // the chat list loads anew when Chat opens again
    const long = await create('A thousand messages');
    const filling = Date.now();
    await fillChat(app, long.id, TURNS, 1);
    const fillSeconds = (Date.now() - filling) / 1000;
    const another = await create('Another thousand messages');
    await fillChat(app, another.id, TURNS, TURNS + 1);
    const short = await create('Two messages');
    await fillChat(app, short.id, 1, 2 * TURNS + 1);
    const recent = await create('The most recent');
    await fillChat(app, recent.id, 1, 2 * TURNS + 2);
    /** The chat as the switch recognises it on screen: by its last message. */
    const shown = async (chat) => {
      const messages = await app.invoke('chat:getMessages', { chatId: chat.id });
      if (!messages.ok) throw new Error(`reading the messages failed: ${JSON.stringify(messages.error)}`);
      const ids = messages.value.map((m) => m.id);
      return { id: chat.id, count: ids.length, lastText: messages.value.at(-1).content.split('.')[0], firstId: ids[0], lastId: ids.at(-1) };
    };
    const chats = { long: await shown(long), another: await shown(another), short: await shown(short), recent: await shown(recent) };
    if (chats.long.count !== 2 * TURNS) throw new Error(`the long chat holds ${chats.long.count} messages`);

    await click(app, 'nav-chat');
    await app.find('chat-item');
    const opened = await switchChat(app, chats.short, chats.long);
    if (opened.error) throw new Error(opened.error);
    const chatLabel = `a ${chats.long.count}-message chat (${opened.messages} of them rendered)`;
    printMemory(`after opening ${chatLabel}`, await settledMemory(pid));
    // The Usage page over the ledger those replies wrote: its three charts drawn.
    await click(app, 'nav-usage');
    await app.find('usage-chart-tokens-canvas');
    printMemory(`then the Usage page charting ${2 * TURNS + 2} replies`, await settledMemory(pid));
    await click(app, 'nav-chat');
    await app.find('chat-item');

    console.log(`\nSwitching to ${chatLabel}: click in the chat list → its last message painted`);
    console.log(`  (the chat was written in ${fillSeconds.toFixed(1)} s: ${TURNS} replies through chat:send and the fake provider)`);
    const again = [];
    for (let i = 0; i < SWITCHES; i += 1) again.push(await switchChat(app, chats.short, chats.long));
    // What showing messages costs: settled with the long chat open (its last ones on the page),
    // then again once the reader scrolled up through every earlier one and back down.
    const reading = await messagesShown(app, chats.long);
    // Then a second chat as long: what more messages cost once WebKit and the JavaScript engine
    // have warmed up on the first.
    const toAnother = await switchChat(app, chats.long, chats.another);
    if (toAnother.error) throw new Error(toAnother.error);
    const further = await messagesShown(app, chats.another, 'The same for a second long chat, read after it');
    const shownGrowth = () => {
      for (const text of [...reading.lines, ...further.lines]) console.log(text);
    };
    targets.push({ what: 'memory growth per 1 000 chat messages shown (RSS): the first long chat read', figure: mib(reading.growth), goal: '≤ 10 MB', met: reading.growth <= 10e6 });
    targets.push({ what: '… and a second one read after it', figure: mib(further.growth), goal: '≤ 10 MB', met: further.growth <= 10e6 });
    await app.stop();
    // The first time after a start: the messages come from the backend and the code runs cold.
    // The short chat too, to tell what the length costs from what a first time costs.
    const firsts = { long: [], short: [] };
    for (let i = 0; i < 2 * FIRST_OPENS; i += 1) {
      const target = i % 2 ? 'short' : 'long';
      const restarted = await launchApp({ dataDir: app.dataDir, keepPreferences: true, env: AS_THE_APP_DRAWS });
      try {
        await restarted.driver.manage().setTimeouts({ script: 60_000 });
        // Most recently active first: that chat opens by itself, the one measured not yet loaded.
        const selected = () =>
          restarted.driver.executeScript(`return document.querySelector('[data-testid="chat-item"][aria-current="true"]')?.dataset.chatId ?? null`);
        await restarted.driver.wait(async () => (await selected()) !== null, 15_000);
        if ((await selected()) !== chats.recent.id) throw new Error('after a start, the most recent chat should be the one open');
        firsts[target].push(await switchChat(restarted, chats.recent, chats[target]));
      } finally {
        await restarted.stop();
      }
    }
    const failed = [...again, ...firsts.long, ...firsts.short].find((run) => run.error);
    if (failed) throw new Error(failed.error);
    line('first time after a start', spread(firsts.long.map((r) => r.painted)));
    line('  of which until in the DOM', spread(firsts.long.map((r) => r.inDom)));
    line('  (the 2-message chat, first time)', spread(firsts.short.map((r) => r.painted)));
    line('again (its messages already loaded)', spread(again.map((r) => r.painted)));
    line('  of which until in the DOM', spread(again.map((r) => r.inDom)));
    const worst = Math.max(median(firsts.long.map((r) => r.painted)), median(again.map((r) => r.painted)));
    line(`medians within ${SWITCH_BUDGET_MS} ms?`, worst <= SWITCH_BUDGET_MS ? 'yes' : `NO (${ms(worst)})`);
    shownGrowth();
    report(targets);
  } finally {
    await app.stop().catch(() => {}); // stopped already, unless something failed first
    fake.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
