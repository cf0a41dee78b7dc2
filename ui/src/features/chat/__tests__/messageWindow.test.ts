import { describe, expect, it } from 'vitest';
import { earlierStart, OPENING, STEP, startShowing, windowStart } from '../messageWindow';

const chat = (length: number) => Array.from({ length }, (_, i) => ({ id: `m${i}` }));

describe('message window', () => {
  it('opens a long chat at its end', () => {
    expect(windowStart(chat(1000), null)).toBe(1000 - OPENING);
  });

  it('shows a short chat whole', () => {
    expect(windowStart(chat(OPENING - 1), null)).toBe(0);
    expect(windowStart([], null)).toBe(0);
  });

  it('stays at its first message while messages arrive below', () => {
    const messages = chat(1000);
    const start = windowStart(messages, null);
    const pinned = messages[start].id;
    expect(windowStart(chat(1002), pinned), 'two more messages do not move the start').toBe(start);
  });

  it('goes back to the end when its first message is gone (another chat, a deleted message)', () => {
    expect(windowStart(chat(500), 'm900')).toBe(500 - OPENING);
    expect(windowStart(chat(500), 'elsewhere')).toBe(500 - OPENING);
  });

  it('grows upward a step at a time, down to the first message', () => {
    expect(earlierStart(960)).toBe(960 - STEP);
    expect(earlierStart(10), 'never before the first message').toBe(0);
  });

  it('grows to show a message above it with a little context, never shrinking', () => {
    expect(startShowing(100, 960)).toBe(98);
    expect(startShowing(1, 960)).toBe(0);
    expect(startShowing(970, 960), 'a message already shown changes nothing').toBe(960);
  });
});
