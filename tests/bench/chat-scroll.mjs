// A long chat read as a reader reads it: written through chat:send against the fake provider,
// then scrolled through a page at a time, up to its first message and back down to its last.
// Used by app.mjs (`npm run bench:app`) and chat-memory.mjs (that part alone).
import { settledMemory } from './memory.mjs';

export const question = (i) => `Question ${i}: how should the pool spread requests over keys with weights 3, 2 and 1 when one key is cooling down?`;
export const answer = (i) =>
  `Answer ${i}. With weights **3, 2 and 1** the pool sends half of the requests to the first key, a third to the second and a sixth to the third.\n\n` +
  '- a cooling key drops out until its cooldown ends\n- the chat keeps its key while it can, so the prompt cache stays warm\n\n' +
  '```rust\nlet share = weight as f64 / total as f64;\n```\n\nWhen the cooling key returns, the shares are as before.';

/** Sends `turns` questions to `chatId` through chat:send, as the composer does, from the page. */
export async function fillChat(app, chatId, turns, first) {
  const result = await app.driver.executeAsyncScript(
    `const [chatId, turns, first, questions, done] = arguments;
     const ipc = window.__TAURI_INTERNALS__;
     (async () => {
       for (let i = 0; i < turns; i += 1) {
         const channel = ipc.transformCallback(() => {});
         const reply = await ipc.invoke('chat:send', { request: { chatId, content: questions[i] }, onEvent: '__CHANNEL__:' + channel });
         ipc.unregisterCallback?.(channel);
         if (reply.status !== 'complete') throw new Error('reply ' + (first + i) + ': ' + JSON.stringify(reply));
       }
     })().then(() => done({ ok: true }), (e) => done({ ok: false, error: String(e?.message ?? JSON.stringify(e)) }));`,
    chatId,
    turns,
    first,
    Array.from({ length: turns }, (_, i) => question(first + i)),
  );
  if (!result.ok) throw new Error(`filling the chat failed: ${result.error}`);
}

/**
 * Scrolls the open chat a page (90 % of the box) at a time, as Page Up / Page Down or a wheel
 * does, `direction` 'up' until message `untilId` is on the page and the box is at its top, 'down'
 * until it is and the box is at its bottom; each step waits for two frames, so whatever the step
 * made the page add or drop is in. Answers the ids of every message that was on the page on the
 * way, the steps taken, and the jumps: steps after which the message at the top of the view did
 * not move by exactly what was scrolled (more than 2 px off), which a reader sees as the view
 * jumping, and the first few of them (`jumped`: the step, how far off, where).
 */
export async function scrollThrough(app, direction, untilId) {
  const result = await app.driver.executeAsyncScript(
    `const [direction, untilId, done] = arguments;
     const box = document.querySelector('.conversation__scroll');
     const seen = new Set();
     const messages = () => document.querySelectorAll('[data-testid="message"]');
     const note = () => { for (const m of messages()) seen.add(m.dataset.messageId); };
     const frames = () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(resolve, 0))));
     const topInView = () => {
       const edge = box.getBoundingClientRect().top;
       for (const m of messages()) {
         const top = m.getBoundingClientRect().top;
         if (top >= edge) return { id: m.dataset.messageId, top };
       }
       return null;
     };
     const arrived = () => {
       const shown = document.querySelector('[data-message-id="' + untilId + '"]') !== null;
       const end = direction === 'up' ? box.scrollTop <= 0 : box.scrollHeight - box.scrollTop - box.clientHeight < 2;
       return shown && end;
     };
     (async () => {
       let steps = 0;
       let jumps = 0;
       const jumped = [];
       let still = 0;
       note();
       while (!arrived()) {
         if (steps > 20000 || still > 50) throw new Error('scrolling ' + direction + ' stalled after ' + steps + ' steps, ' + seen.size + ' messages seen');
         const anchor = topInView();
         const before = box.scrollTop;
         box.scrollTop = before + (direction === 'up' ? -1 : 1) * box.clientHeight * 0.9;
         const moved = box.scrollTop - before;
         still = moved === 0 ? still + 1 : 0;
         await frames();
         steps += 1;
         note();
         const now = anchor && document.querySelector('[data-message-id="' + anchor.id + '"]');
         const off = now ? now.getBoundingClientRect().top - (anchor.top - moved) : 0;
         if (Math.abs(off) > 2) {
           jumps += 1;
           if (jumped.length < 10) jumped.push({ step: steps, off: Math.round(off), scrollTop: Math.round(box.scrollTop), rendered: messages().length });
         }
       }
       return { seen: [...seen], steps, jumps, jumped };
     })().then(done, (e) => done({ error: String(e?.message ?? e) }));`,
    direction,
    untilId,
  );
  if (result.error) throw new Error(result.error);
  return result;
}

const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

/**
 * What showing a long chat's messages keeps: memory settled with the chat open at its end, then
 * again after scrolling up through every message to the first, and again back down at the last.
 * Per 1 000 messages brought onto the page on the way up (each message counted once, however
 * often it came and went). `chat` holds the ids of its first and last messages. Answers the
 * growth (RSS, bytes per 1 000, the larger of the two ends: what the reader is left with) and the
 * lines to print, under `title`.
 */
export async function messagesShown(app, chat, title = 'Memory per 1 000 chat messages shown') {
  const pid = app.processId();
  const count = () => app.driver.executeScript(`return document.querySelectorAll('[data-testid="message"]').length;`);
  const openedWith = await count();
  const open = await settledMemory(pid);
  const up = await scrollThrough(app, 'up', chat.firstId);
  const top = await settledMemory(pid);
  const down = await scrollThrough(app, 'down', chat.lastId);
  const bottom = await settledMemory(pid);
  const rendered = await count();
  const added = up.seen.length - openedWith;
  const per1000 = (m, key) => ((m[key] - open[key]) * 1000) / added;
  const growth = Math.max(per1000(top, 'rss'), per1000(bottom, 'rss'));
  const lines = [
    `\n${title} (${chat.count} messages; ${up.seen.length} shown on the way up, ${added} of them not on the page when it opened)`,
    `  ${'at the first message (scrolled up)'.padEnd(44)} PSS ${mib(per1000(top, 'pss'))}, RSS ${mib(per1000(top, 'rss'))}`,
    `  ${'back at the last message (scrolled down)'.padEnd(44)} PSS ${mib(per1000(bottom, 'pss'))}, RSS ${mib(per1000(bottom, 'rss'))}`,
    `  ${'scrolled a page at a time'.padEnd(44)} ${up.steps} pages up, ${down.steps} down; the view jumped ${up.jumps + down.jumps} times; ${rendered} messages on the page at the end`,
  ];
  return { growth, lines };
}
