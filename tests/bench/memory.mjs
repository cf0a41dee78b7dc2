// The memory of the app under measurement: the app process plus the WebKit processes it started
// (web content, network), as PSS (pages shared between processes split among them: the fair
// total) and RSS (what `top` shows; shared pages counted in every process).
import { readFileSync } from 'node:fs';
import { descendantsOf } from '../e2e/desktop.mjs';

const pause = (millis) => new Promise((resolve) => setTimeout(resolve, millis));

function rollup(pid) {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kib = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0) * 1024;
  return { name: readFileSync(`/proc/${pid}/comm`, 'utf8').trim(), rss: kib('Rss'), pss: kib('Pss') };
}

/** The memory of the app and every process under it. */
export function memory(pid) {
  const processes = [pid, ...descendantsOf(pid)].flatMap((p) => {
    try {
      return [rollup(p)];
    } catch {
      return []; // ended meanwhile
    }
  });
  const total = (key) => processes.reduce((sum, p) => sum + p[key], 0);
  return { rss: total('rss'), pss: total('pss'), processes };
}

/** Memory once it stops moving: sampled every 500 ms until two samples differ by < 1 % (≤ 30 s). */
export async function settledMemory(pid) {
  let last = memory(pid);
  for (let i = 0; i < 60; i += 1) {
    await pause(500);
    const now = memory(pid);
    if (Math.abs(now.pss - last.pss) / last.pss < 0.01) return now;
    last = now;
  }
  return last;
}

