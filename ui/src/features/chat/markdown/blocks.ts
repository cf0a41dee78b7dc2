/*
 * A Markdown reply cut into top-level blocks, so a streaming reply re-parses only its last block:
 * the blocks before it are finished (text only ever grows at the end) and keep their rendering.
 *
 * A cut is made only at a blank line outside a fenced code block, before a line that starts at the
 * left margin: every Markdown block construct that can span a blank line (a fence, an indented
 * continuation of a list item or an indented code block) stays whole. What a cut can change: a
 * loose list becomes several lists (each keeps its numbering), and a reference link whose
 * definition is in another block; definitions are therefore collected and given to every block.
 * Pure; `extendSplit` continues from the previous split in time proportional to the last block.
 */

export interface Split {
  text: string;
  /** The finished blocks, in order; their concatenation is `text.slice(0, tailStart)`. */
  blocks: string[];
  /** Where the last block begins; it may still grow. */
  tailStart: number;
  /** Reference definitions (`[id]: url`) of the finished blocks, one per line. */
  definitions: string[];
}

/** The last block, when it is a fenced code block not closed yet. */
export interface OpenFence {
  /** The info string's first word (the language), or ''. */
  language: string;
  /** The code so far. */
  code: string;
}

const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const DEFINITION = /^ {0,3}\[[^\]\n]+\]:[ \t]*\S/;

interface Fence {
  char: string;
  length: number;
  info: string;
  /** Where the code starts: after the opening line. */
  codeStart: number;
}

function closesFence(line: string, fence: Fence): boolean {
  const match = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(line);
  return match !== null && match[1][0] === fence.char && match[1].length >= fence.length;
}

function opensFence(line: string, lineEnd: number): Fence | null {
  const match = FENCE_OPEN.exec(line);
  if (!match) return null;
  const marker = match[1];
  const info = match[2];
  // A backtick fence's info string may not hold a backtick (that is inline code instead).
  if (marker[0] === '`' && info.includes('`')) return null;
  return { char: marker[0], length: marker.length, info: info.trim(), codeStart: lineEnd + 1 };
}

const isBlank = (line: string) => /^[ \t]*$/.test(line);

interface Scan {
  blocks: string[];
  tailStart: number;
  /** The definitions of the finished blocks found. */
  definitions: string[];
  /** The definitions in the last block. */
  tailDefinitions: string[];
  /** The fence open at the end of the text, if any. */
  fence: Fence | null;
}

/**
 * Scans `text` from `start` (a block boundary, outside any fence). A last line without its line
 * break is still being written, unless `whole`: then it is as final as the others.
 */
function scan(text: string, start: number, whole = false): Scan {
  const blocks: string[] = [];
  const definitions: string[] = [];
  let current: string[] = [];
  let blockStart = start;
  let fence: Fence | null = null;
  let afterBlank = false;
  let i = start;
  while (i < text.length) {
    const newline = text.indexOf('\n', i);
    const complete = newline !== -1;
    const end = complete ? newline : text.length;
    const line = text.slice(i, end);
    if (fence) {
      if (closesFence(line, fence)) fence = null;
    } else if (isBlank(line)) {
      // Only a finished line is known to be blank; a partial one may still get text.
      if (complete) afterBlank = true;
    } else {
      if (afterBlank && !/^[ \t]/.test(line) && i > blockStart) {
        blocks.push(text.slice(blockStart, i));
        definitions.push(...current);
        current = [];
        blockStart = i;
      }
      afterBlank = false;
      if ((complete || whole) && DEFINITION.test(line)) current.push(line.trim());
      fence = opensFence(line, end);
      if (fence && !complete) fence.codeStart = text.length;
    }
    i = complete ? newline + 1 : text.length;
  }
  return { blocks, tailStart: blockStart, definitions, tailDefinitions: current, fence };
}

/** Cuts `text` into blocks from scratch. */
export function splitBlocks(text: string): Split {
  const { blocks, tailStart, definitions } = scan(text, 0);
  return { text, blocks, tailStart, definitions };
}

/**
 * The split of `text`, continued from `previous` when `text` only added to its end; else from
 * scratch (another reply). Work is proportional to the last block and what was added.
 */
export function extendSplit(previous: Split | null, text: string): Split {
  if (!previous || text.length < previous.text.length || !grewFrom(previous, text)) return splitBlocks(text);
  if (text.length === previous.text.length) return previous;
  const more = scan(text, previous.tailStart);
  return {
    text,
    blocks: more.blocks.length === 0 ? previous.blocks : [...previous.blocks, ...more.blocks],
    tailStart: more.tailStart,
    definitions: more.definitions.length === 0 ? previous.definitions : [...previous.definitions, ...more.definitions],
  };
}

/** Whether `text` continues `previous.text`: the last block (and the start) are the same. */
function grewFrom(previous: Split, text: string): boolean {
  const head = Math.min(64, previous.tailStart);
  return (
    text.startsWith(previous.text.slice(previous.tailStart), previous.tailStart) && text.slice(0, head) === previous.text.slice(0, head)
  );
}

/** What the last block holds that matters beyond it: an open code fence, reference definitions. */
export interface Tail {
  source: string;
  /** Set when the last block is a fenced code block not closed yet (its code is still coming). */
  openFence: OpenFence | null;
  definitions: string[];
}

/** The last block, looked at (work proportional to it); `whole` when the text is complete. */
export function tailOf(split: Split, whole = false): Tail {
  const { fence, tailDefinitions: definitions } = scan(split.text, split.tailStart, whole);
  const source = split.text.slice(split.tailStart);
  if (!fence) return { source, openFence: null, definitions };
  const code = split.text.slice(Math.min(fence.codeStart, split.text.length));
  return { source, openFence: { language: fence.info.split(/\s+/)[0] ?? '', code }, definitions };
}
