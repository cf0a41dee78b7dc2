import { act } from 'react';
import { createRoot } from 'react-dom/client';
import renderMarkdown from 'react-markdown';
import remarkGfm from 'remark-gfm';
import { it } from 'vitest';
import { I18nProvider } from '../src/i18n/I18nProvider';
import { Markdown } from '../src/features/chat/markdown/Markdown';

/*
 * How long one more token of a streaming reply costs to render, at 1k, 10k and 20k tokens: the
 * reply's Markdown (block split, parse of the last block, React reconcile, DOM commit in jsdom).
 * Each token is rendered on its own (the app renders at most once per animation frame, so this is
 * the worst case). For comparison, the naive way: the whole reply parsed and rendered again.
 *
 *   npx vitest run --config ui/bench/vitest.config.ts
 */

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

/** A long reply as models write them: prose, lists, tables, code blocks, in turn. */
function replyText(tokens: number): string[] {
  const sections = [
    '## Section {n}\n\nThe pool spreads requests over keys by weight and keeps each chat on one key, so the provider’s prompt cache stays warm. When a key is rate-limited it cools down, and the reply moves on.\n\n',
    '- first point about **keys** and `weights`\n- second point, with a [link](https://example.test/docs/{n})\n- third point\n\n',
    '| Key | Weight | Requests |\n|---|---:|---:|\n| key A | 3 | 1,204 |\n| key B | 1 | 402 |\n| key C | 2 | 815 |\n\n',
    '```ts\nexport function pick(keys: Key[], now: number): Key | null {\n  const open = keys.filter((k) => k.until <= now);\n  return open.sort((a, b) => b.weight - a.weight)[0] ?? null;\n}\n```\n\n',
    'In short: a 429 puts the key to rest; a 401 turns it off; everything else is retried once.\n\n',
  ];
  const out: string[] = [];
  for (let n = 0; out.length < tokens; n += 1) {
    const text = sections[n % sections.length].replaceAll('{n}', String(n));
    // ~4 characters a token, cut at word edges where there are some, as tokenizers do.
    for (const piece of text.match(/\s*\S{1,4}|\s+/g) ?? []) {
      out.push(piece);
      if (out.length === tokens) break;
    }
  }
  return out;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function mount() {
  const host = document.createElement('div');
  document.body.appendChild(host);
  const root = createRoot(host);
  return {
    render: (node: React.ReactNode) => act(() => root.render(<I18nProvider initial="en">{node}</I18nProvider>)),
    unmount: () => {
      act(() => root.unmount());
      host.remove();
    },
  };
}

const CHECKPOINTS = [1_000, 10_000, 20_000];
const SAMPLE = 200;

it('streams 20 000 tokens: time per token at 1k, 10k and 20k', () => {
  const tokens = replyText(CHECKPOINTS[CHECKPOINTS.length - 1] + SAMPLE);
  const results: Record<string, string> = {};

  // Keypool: every token rendered, from the first to the last.
  const view = mount();
  let text = '';
  const times: number[] = [];
  const started = performance.now();
  for (const token of tokens) {
    text += token;
    const t0 = performance.now();
    view.render(<Markdown source={text} streaming />);
    times.push(performance.now() - t0);
  }
  const total = performance.now() - started;
  view.unmount();
  for (const at of CHECKPOINTS) results[`keypool @${at / 1000}k`] = `${median(times.slice(at - SAMPLE / 2, at + SAMPLE / 2)).toFixed(3)} ms/token`;
  results['keypool whole stream'] = `${(total / 1000).toFixed(1)} s for ${tokens.length} tokens`;

  // Naive: the whole reply parsed and rendered on each token (measured around each checkpoint).
  for (const at of CHECKPOINTS) {
    const naive = mount();
    const samples: number[] = [];
    let prefix = tokens.slice(0, at - 10).join('');
    for (const token of tokens.slice(at - 10, at + 10)) {
      prefix += token;
      const t0 = performance.now();
      naive.render(renderMarkdown({ children: prefix, remarkPlugins: [remarkGfm] }));
      samples.push(performance.now() - t0);
    }
    naive.unmount();
    results[`naive @${at / 1000}k`] = `${median(samples).toFixed(3)} ms/token`;
  }
  console.log('\nstreaming benchmark (jsdom, median over the tokens around each point)');
  for (const [what, value] of Object.entries(results)) console.log(`  ${what.padEnd(24)} ${value}`);
});
