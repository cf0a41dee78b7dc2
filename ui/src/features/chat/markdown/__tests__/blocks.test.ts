import { describe, expect, it } from 'vitest';
import { extendSplit, splitBlocks, tailOf, type Split } from '../blocks';

const blocksOf = (text: string) => {
  const split = splitBlocks(text);
  return [...split.blocks, tailOf(split).source];
};

const SAMPLE = [
  '# Title\n\nFirst paragraph\nstill the first.\n\n',
  '- a\n- b\n\n  continued in b\n\n',
  '```py\ndef f():\n\n    return 1\n```\n\n',
  '| a | b |\n|---|---|\n| 1 | 2 |\n\n',
  '    indented code\n\n    more of it\n\n',
  'A [ref link][r] and text.\n\n[r]: https://example.test/r\n\nLast words',
].join('');

describe('cutting a reply into blocks', () => {
  it('cuts at blank lines before a line at the margin', () => {
    expect(blocksOf('one\n\ntwo\n\nthree')).toEqual(['one\n\n', 'two\n\n', 'three']);
  });

  it('keeps a fenced code block whole across blank lines, and a fence of tildes or longer backticks', () => {
    expect(blocksOf('```\na\n\nb\n```\n\nafter')).toEqual(['```\na\n\nb\n```\n\n', 'after']);
    expect(blocksOf('~~~~\n```\n\nx\n~~~~\n\nafter')).toEqual(['~~~~\n```\n\nx\n~~~~\n\n', 'after']);
  });

  it('keeps indented continuations (a list item’s second paragraph, indented code) with what they continue', () => {
    expect(blocksOf('- item\n\n  more of the item\n\nnext')).toEqual(['- item\n\n  more of the item\n\n', 'next']);
    expect(blocksOf('    code\n\n    code\n\ntext')).toEqual(['    code\n\n    code\n\n', 'text']);
  });

  it('puts the pieces back together exactly', () => {
    expect(blocksOf(SAMPLE).join('')).toBe(SAMPLE);
  });

  it('collects reference definitions so every block can resolve them', () => {
    const split = splitBlocks(SAMPLE);
    expect([...split.definitions, ...tailOf(split).definitions]).toEqual(['[r]: https://example.test/r']);
  });

  it('continued from any earlier cut, gives the same blocks as cutting from scratch', () => {
    for (let step = 1; step <= 7; step += 3) {
      let split: Split | null = null;
      for (let end = 0; end <= SAMPLE.length; end += step) {
        split = extendSplit(split, SAMPLE.slice(0, end));
        const scratch = splitBlocks(SAMPLE.slice(0, end));
        expect(split.blocks, `at ${end} by ${step}`).toEqual(scratch.blocks);
        expect(split.tailStart, `at ${end} by ${step}`).toBe(scratch.tailStart);
        expect(split.definitions, `at ${end} by ${step}`).toEqual(scratch.definitions);
      }
    }
  });

  it('starts over for another text (a new reply), and keeps finished blocks while text is added', () => {
    const first = extendSplit(null, 'one\n\ntwo\n\nthr');
    const grown = extendSplit(first, 'one\n\ntwo\n\nthree');
    expect(grown.blocks, 'the finished blocks are the very same array').toBe(first.blocks);
    expect(extendSplit(grown, 'new\n\nreply').blocks).toEqual(['new\n\n']);
  });

  it('says when the last block is a code fence still being written, with its language and code so far', () => {
    expect(tailOf(splitBlocks('text\n\n```ts\nconst a = 1;\nconst')).openFence).toEqual({ language: 'ts', code: 'const a = 1;\nconst' });
    expect(tailOf(splitBlocks('```ts\nx\n```')).openFence, 'a closed fence is finished').toBeNull();
    expect(tailOf(splitBlocks('``` a`b\n')).openFence, 'backticks in the info string: not a fence').toBeNull();
  });
});
