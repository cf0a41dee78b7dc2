// Streaming a 20 000-token Markdown reply into the real window: are frames dropped as the reply
// grows? Not a test (nothing is asserted about time); run it on demand, after a build:
//
//   npx tauri build --debug --no-bundle && cargo build -p keypool-fake-provider
//   xvfb-run -a -s "-screen 0 1280x800x24" node tests/e2e/streaming-bench.mjs [tokens] [delay_ms]
//
// WINDOW=700x450 sets the window's size (default: as tauri.conf.json opens it). Under Xvfb the
// page is painted in software, so a frame's time follows the area repainted: compare sizes to
// tell painting from the app's own work.
// The fake provider sends the reply as one SSE event per token, `delay_ms` apart (default 2 ms:
// ~500 tokens/s, faster than models write). The page records every animation frame; around 1k,
// 10k and 20k tokens it reports the frame interval (median, 95th percentile, worst) and how many
// frames took longer than two at 60 Hz (dropped). Rendering keeps up when the median stays ~17 ms.
import { Key } from 'selenium-webdriver';
import { By, launchApp, startFakeProvider } from './harness.mjs';

const TOKENS = Number(process.argv[2] ?? 20_000);
const DELAY_MS = Number(process.argv[3] ?? 2);
const KEY = 'sk-bench-streaming-0001';

/** The same kind of reply as ui/bench/streaming.bench.tsx: prose, lists, tables, code, in turn. */
function replyTokens(count) {
  const sections = [
    '## Section {n}\n\nThe pool spreads requests over keys by weight and keeps each chat on one key, so the provider’s prompt cache stays warm. When a key is rate-limited it cools down, and the reply moves on.\n\n',
    '- first point about **keys** and `weights`\n- second point, with a [link](https://example.test/docs/{n})\n- third point\n\n',
    '| Key | Weight | Requests |\n|---|---:|---:|\n| key A | 3 | 1,204 |\n| key B | 1 | 402 |\n| key C | 2 | 815 |\n\n',
    '```ts\nexport function pick(keys: Key[], now: number): Key | null {\n  const open = keys.filter((k) => k.until <= now);\n  return open.sort((a, b) => b.weight - a.weight)[0] ?? null;\n}\n```\n\n',
    'In short: a 429 puts the key to rest; a 401 turns it off; everything else is retried once.\n\n',
  ];
  const out = [];
  for (let n = 0; out.length < count; n += 1) {
    for (const piece of sections[n % sections.length].replaceAll('{n}', String(n)).match(/\s*\S{1,4}|\s+/g) ?? []) {
      out.push(piece);
      if (out.length === count) break;
    }
  }
  return out;
}

const quantile = (xs, q) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};

const fake = await startFakeProvider();
const app = await launchApp();
try {
  await app.find('app-shell');
  if (process.env.WINDOW) {
    const [width, height] = process.env.WINDOW.split('x').map(Number);
    await app.driver.manage().window().setRect({ width, height });
  }
  const provider = await app.invoke('llmConfig:addProvider', { name: 'Bench', kind: 'openai', baseUrl: `${fake.url}/v1`, models: ['fake-model'], defaultModel: 'fake-model' });
  await app.invoke('llmConfig:addApiKey', { providerId: provider.value.id, apiKey: KEY });
  const chat = await app.invoke('chat:create', { providerId: provider.value.id });
  await app.driver.navigate().refresh();
  await (await app.find('nav-chat')).click();
  await (await app.find('composer-input')).click();

  const tokens = replyTokens(TOKENS);
  const charsAt = [];
  for (let i = 0, chars = 0; i < tokens.length; i += 1) {
    chars += tokens[i].length;
    charsAt.push(chars);
  }
  await fake.script(KEY, [{ kind: 'slow', chunks: tokens, delay_ms: DELAY_MS }]);

  // Every frame's time; the streamed text's length every 15th frame (reading it walks the DOM).
  await app.driver.executeScript(`
    window.__bench = { frames: [], samples: [] };
    const loop = (t) => {
      const b = window.__bench;
      b.frames.push(t);
      if (b.frames.length % 15 === 0) {
        const el = document.querySelector('[data-testid="streaming-content"]');
        b.samples.push([t, el ? el.textContent.length : -1]);
      }
      if (!b.stop) requestAnimationFrame(loop);
    };
    requestAnimationFrame(loop);`);
  const box = await app.find('composer-input');
  await box.sendKeys('Write a long answer');
  const started = Date.now();
  await box.sendKeys(Key.ENTER);
  await app.driver.wait(async () => (await app.driver.findElements(By.css('[data-testid="streaming-reply"]'))).length > 0, 30_000);
  await app.driver.wait(async () => (await app.driver.findElements(By.css('[data-testid="streaming-reply"]'))).length === 0, 20 * 60_000);
  const wall = (Date.now() - started) / 1000;
  const { frames, samples } = await app.driver.executeScript('window.__bench.stop = true; return window.__bench;');

  // How far the reply was when a length was sampled: the shown text is shorter than the Markdown
  // (no markup), so by its share of the longest length shown, the reply's end.
  const streamed = samples.filter(([, len]) => len > 0);
  const longest = Math.max(...streamed.map(([, len]) => len));
  const tokenAtChars = (shown) => Math.round((shown / longest) * TOKENS);
  const report = [];
  for (const at of [1_000, 10_000, 20_000].filter((n) => n <= TOKENS)) {
    const around = streamed.filter(([, len]) => Math.abs(tokenAtChars(len) - at) <= Math.max(250, at * 0.05));
    if (around.length < 2) {
      report.push(`  @${at / 1000}k tokens: not enough samples`);
      continue;
    }
    const from = around[0][0];
    const to = around[around.length - 1][0];
    const intervals = [];
    for (let i = 1; i < frames.length; i += 1) if (frames[i] >= from && frames[i] <= to) intervals.push(frames[i] - frames[i - 1]);
    const dropped = intervals.filter((ms) => ms > 34).length;
    const tokensShown = tokenAtChars(around[around.length - 1][1]) - tokenAtChars(around[0][1]);
    report.push(
      `  @${String(at / 1000).padStart(2)}k tokens: frame median ${quantile(intervals, 0.5).toFixed(1)} ms, p95 ${quantile(intervals, 0.95).toFixed(1)} ms, worst ${Math.max(...intervals).toFixed(1)} ms; ` +
        `${dropped}/${intervals.length} frames over 34 ms; ${(tokensShown / ((to - from) / 1000)).toFixed(0)} tokens/s shown`,
    );
  }
  const messages = await app.invoke('chat:getMessages', { chatId: chat.value.id });
  const saved = messages.value.at(-1);
  console.log(`streamed ${TOKENS} tokens (${charsAt.at(-1)} characters, one event every ${DELAY_MS} ms) in ${wall.toFixed(1)} s; saved reply: ${saved.status}, ${saved.content.length} characters`);
  console.log(report.join('\n'));
  const all = [];
  for (let i = 1; i < frames.length; i += 1) all.push(frames[i] - frames[i - 1]);
  console.log(`  whole stream: ${all.length} frames, median ${quantile(all, 0.5).toFixed(1)} ms, ${all.filter((ms) => ms > 34).length} over 34 ms, worst ${Math.max(...all).toFixed(1)} ms`);
} finally {
  await app.stop();
  fake.stop();
}
