// The 10 000-key table in the real window: the app's memory with 10 000 keys, the time the pool
// page takes to show them, and the frame times while the table scrolls (requestAnimationFrame
// deltas in the page, the table's box scrolled on every frame). Not a test: it prints figures.
//
//   cargo build -p keypool-fake-provider   # harness.mjs wants it even when unused
//   KEYPOOL_APP_BINARY=$PWD/target/debug/keypool xvfb-run -a -s "-screen 0 1280x800x24" \
//     node tests/bench/key-table.mjs
//
// Xvfb has no vsync: WebKitGTK paces requestAnimationFrame with its own 60 Hz timer, so a frame
// is ~16.7 ms when nothing is late; longer deltas are frames the page could not make in time.
import { AS_THE_APP_DRAWS, launchApp } from '../e2e/harness.mjs';
import { click } from '../e2e/steps.mjs';
import { memory, settledMemory } from './memory.mjs';

const KEYS = Number(process.env.KEYPOOL_BENCH_KEYS ?? 10_000);
const FRAMES = Number(process.env.KEYPOOL_BENCH_FRAMES ?? 600);
const RUNS = Number(process.env.KEYPOOL_BENCH_RUNS ?? 3);

const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
const line = (label, value) => console.log(`  ${label.padEnd(52)} ${value}`);
const quantile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};
const frames = (deltas) =>
  `median ${quantile(deltas, 0.5).toFixed(1)} ms, p95 ${quantile(deltas, 0.95).toFixed(1)} ms, p99 ${quantile(deltas, 0.99).toFixed(1)} ms, ` +
  `max ${Math.max(...deltas).toFixed(1)} ms, >25 ms: ${((100 * deltas.filter((d) => d > 25).length) / deltas.length).toFixed(1)} % (n=${deltas.length})`;
const printMemory = (label, m) => line(label, `PSS ${mib(m.pss)}, RSS ${mib(m.rss)}  (${m.processes.map((p) => `${p.name} ${mib(p.pss)}`).join(', ')})`);

/** Scrolls the table's box by `step` px each frame for `count` frames (back up at the end); the frame deltas and the most rows drawn at once. */
function scroll(app, step, count, page = false) {
  return app.driver.executeAsyncScript(
    `const [step, count, page, done] = arguments;
     const table = document.querySelector('[data-testid="key-list-scroll"]');
     // The page: the settings pane the table sits in (its nearest scrolling ancestor).
     let box = table;
     if (page) {
       box = table.parentElement;
       while (box && !(box.scrollHeight > box.clientHeight && /auto|scroll/.test(getComputedStyle(box).overflowY))) box = box.parentElement;
     }
     box.scrollTop = 0;
     const deltas = [];
     // The work a scroll event does (the virtualizer re-renders the rows synchronously in its
     // listener): from a capturing listener on the window, which runs first, to one on the box
     // added after the virtualizer's, which runs after it.
     const work = [];
     let began = 0;
     const before = () => { began = performance.now(); };
     const after = () => work.push(performance.now() - began);
     window.addEventListener('scroll', before, { capture: true });
     box.addEventListener('scroll', after);
     let last = null, frame = 0, direction = 1, drawn = 0;
     function tick(now) {
       if (last !== null) deltas.push(now - last);
       last = now;
       drawn = Math.max(drawn, box.querySelectorAll('[data-testid="key-row"]').length);
       if (box.scrollTop + box.clientHeight >= box.scrollHeight - 1) direction = -1;
       else if (box.scrollTop <= 0) direction = 1;
       box.scrollTop += direction * step;
       frame += 1;
       if (frame <= count) requestAnimationFrame(tick);
       else finish({ deltas, drawn, work, height: box.scrollHeight });
     }
     requestAnimationFrame(tick);
     // A frame-rate cap of its own, should the page stop drawing (hidden window): done anyway.
     setTimeout(() => { if (frame <= count) { frame = count + 1; finish({ deltas, drawn, work, height: box.scrollHeight, stopped: true }); } }, count * 1000);
     function finish(result) {
       window.removeEventListener('scroll', before, { capture: true });
       box.removeEventListener('scroll', after);
       done(result);
     }`,
    step,
    count,
    page,
  );
}

async function main() {
  const app = await launchApp({ env: AS_THE_APP_DRAWS });
  try {
    await app.find('app-shell');
    await app.driver.manage().setTimeouts({ script: 600_000 });
    await app.driver.manage().window().setRect({ width: 1100, height: 720 });
    const pid = app.processId();
    console.log(`Key table with ${KEYS} keys: ${process.env.KEYPOOL_APP_BINARY}`);
    printMemory('memory, started, empty pool', await settledMemory(pid));

    // OpenAI project keys' shape: `sk-proj-` and 40 characters, each key different.
    const text = Array.from({ length: KEYS }, (_, i) => `sk-proj-bench${String(i).padStart(8, '0')}${'x'.repeat(27)}`).join('\n');
    const preview = await app.invoke('llmConfig:previewKeyImport', { providerId: 'openai', text });
    if (!preview.ok) throw new Error(`preview: ${JSON.stringify(preview.error)}`);
    if (preview.value.new.length !== KEYS) throw new Error(`the preview found ${preview.value.new.length} new keys of ${KEYS}`);
    const started = Date.now();
    const start = await app.invoke('llmConfig:startKeyImport', { importId: preview.value.importId, validate: false, keepRejectedDisabled: false, labelPrefix: 'bench' });
    if (!start.ok) throw new Error(`start: ${JSON.stringify(start.error)}`);
    for (let polls = 0; ; polls++) {
      const keys = await app.invoke('llmConfig:getApiKeys', { providerId: 'openai' });
      if (keys.ok && keys.value.length >= KEYS) break;
      if (polls > 600) throw new Error(`after 5 minutes the pool holds ${keys.ok ? keys.value.length : JSON.stringify(keys.error)} keys`);
      await new Promise((r) => setTimeout(r, 500));
    }
    line('import without validation (to getApiKeys holding all)', `${Date.now() - started} ms (polled every 500 ms)`);

    // KEYPOOL_BENCH_SCRIPT: run in the page before the pool opens (to try a change in place).
    if (process.env.KEYPOOL_BENCH_SCRIPT) await app.driver.executeScript(process.env.KEYPOOL_BENCH_SCRIPT);
    const opened = Date.now();
    await click(app, 'nav-settings');
    await click(app, 'settings-providers');
    await click(app, 'provider-openai');
    await app.find('key-row');
    line('Settings → Providers → OpenAI until the first row', `${Date.now() - opened} ms (WebDriver round trips included)`);
    printMemory(`memory, the pool page showing ${KEYS} keys`, await settledMemory(pid));

    // KEYPOOL_BENCH_CSS: rules added to the page before scrolling (to try a change of style).
    if (process.env.KEYPOOL_BENCH_CSS) {
      await app.driver.executeScript('const s = document.createElement("style"); s.textContent = arguments[0]; document.head.append(s);', process.env.KEYPOOL_BENCH_CSS);
      line('with the rules', process.env.KEYPOOL_BENCH_CSS);
    }
    // KEYPOOL_BENCH_ONLY: a comma-separated choice of idle, page, wheel, fling (all by default).
    const only = process.env.KEYPOOL_BENCH_ONLY?.split(',');
    for (const [name, label, step, page] of [
      ['idle', 'not scrolling (the page idle: the baseline)', 0],
      ['page', 'the settings page scrolling 40 px a frame (not the table)', 40, true],
      ['wheel', 'the table scrolling 40 px a frame (a wheel)', 40],
      ['fling', 'the table scrolling 2 000 px a frame (a fling, ~30 rows)', 2000],
    ]) {
      if (only && !only.includes(name)) continue;
      const all = [];
      const work = [];
      const medians = [];
      let drawn = 0;
      for (let run = 0; run < RUNS; run++) {
        const begun = Date.now();
        const result = await scroll(app, step, FRAMES, page);
        if (result.stopped) console.log(`  (run ${run + 1}: the page drew ${result.deltas.length} frames in ${Date.now() - begun} ms, then was stopped)`);
        all.push(...result.deltas);
        work.push(...result.work);
        medians.push(quantile(result.deltas, 0.5).toFixed(1));
        drawn = Math.max(drawn, result.drawn);
      }
      line(`frame times, ${label}`, frames(all));
      line('  each run’s median', `${medians.join(' / ')} ms`);
      line('  most rows drawn at once', String(drawn));
      if (work.length > 0) line('  script per scroll event (virtualizer + React)', frames(work));
    }
    printMemory('memory, right after scrolling', memory(pid));
    printMemory('memory, after scrolling, settled', await settledMemory(pid));
  } finally {
    await app.stop();
  }
}

await main();
