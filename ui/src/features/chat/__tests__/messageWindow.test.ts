import { describe, expect, it } from 'vitest';
import { AT_END, bounded, earlier, LIMIT, later, OPENING, pinOf, STEP, showing, spanOf } from '../messageWindow';

const chat = (length: number) => Array.from({ length }, (_, i) => ({ id: `m${i}` }));

describe('message window', () => {
  it('opens a long chat at its end', () => {
    expect(spanOf(chat(1000), AT_END)).toEqual({ start: 1000 - OPENING, end: 1000 });
  });

  it('shows a short chat whole', () => {
    expect(spanOf(chat(OPENING - 1), AT_END)).toEqual({ start: 0, end: OPENING - 1 });
    expect(spanOf([], AT_END)).toEqual({ start: 0, end: 0 });
  });

  it('stays at its first message while messages arrive below, and follows the end', () => {
    const messages = chat(1000);
    const pin = pinOf(messages, spanOf(messages, AT_END));
    expect(pin.lastId, 'a window at the end names no last message: it follows the end').toBeNull();
    expect(spanOf(chat(1002), pin), 'two more messages do not move the start; they join below').toEqual({ start: 1000 - OPENING, end: 1002 });
  });

  it('keeps its last message when it does not reach the end: a reader far up is not moved by replies', () => {
    const messages = chat(1000);
    const pin = pinOf(messages, { start: 100, end: 140 });
    expect(pin).toEqual({ firstId: 'm100', lastId: 'm139' });
    expect(spanOf(chat(1002), pin)).toEqual({ start: 100, end: 140 });
  });

  it('goes back to the end when its first message is gone (another chat, a deleted message)', () => {
    expect(spanOf(chat(500), { firstId: 'm900', lastId: null })).toEqual({ start: 500 - OPENING, end: 500 });
    expect(spanOf(chat(500), { firstId: 'elsewhere', lastId: 'm20' })).toEqual({ start: 500 - OPENING, end: 500 });
  });

  it('reaches the end again when its last message is gone', () => {
    expect(spanOf(chat(500), { firstId: 'm100', lastId: 'elsewhere' })).toEqual({ start: 100, end: 500 });
  });

  it('grows upward a step at a time, down to the first message', () => {
    expect(earlier({ start: 960, end: 1000 })).toEqual({ start: 960 - STEP, end: 1000 });
    expect(earlier({ start: 10, end: 50 }), 'never before the first message').toEqual({ start: 0, end: 50 });
  });

  it('grows downward a step at a time, up to the end', () => {
    expect(later({ start: 100, end: 140 }, 1000)).toEqual({ start: 100, end: 140 + STEP });
    expect(later({ start: 970, end: 990 }, 1000), 'never past the last message').toEqual({ start: 970, end: 1000 });
  });

  it('keeps a window of up to LIMIT messages whole, however far they are from the view', () => {
    const span = { start: 100, end: 100 + LIMIT };
    expect(bounded(span, { start: 110, end: 115 })).toBe(span);
  });

  it('drops the messages far from the view once it holds more than LIMIT', () => {
    const span = { start: 100, end: 100 + LIMIT + STEP };
    expect(bounded(span, { start: 100, end: 120 }), 'far below, after scrolling up').toEqual({ start: 100, end: 120 });
    expect(bounded(span, { start: 140, end: 100 + LIMIT + STEP }), 'far above, after scrolling down').toEqual({ start: 140, end: 100 + LIMIT + STEP });
    expect(bounded(span, { start: 100, end: 100 + LIMIT + STEP }), 'nothing is far: nothing goes').toBe(span);
  });

  it('never drops to an empty window', () => {
    const span = { start: 0, end: LIMIT + 5 };
    const kept = bounded(span, { start: LIMIT + 10, end: LIMIT + 12 });
    expect(kept.end - kept.start, 'the view is never without its messages').toBeGreaterThan(0);
  });

  it('shows a message outside it in a window of its own, a little context above', () => {
    expect(showing(100, { start: 960, end: 1000 }, 1000)).toEqual({ start: 98, end: 98 + OPENING });
    expect(showing(1, { start: 960, end: 1000 }, 1000)).toEqual({ start: 0, end: OPENING });
    expect(showing(998, { start: 100, end: 140 }, 1000), 'near the end, up to the end').toEqual({ start: 996, end: 1000 });
    const span = { start: 960, end: 1000 };
    expect(showing(970, span, 1000), 'a message already shown changes nothing').toBe(span);
  });
});
