/**
 * A long chat is on the page only around where the reader is. It opens with its last
 * {@link OPENING} messages (more, when those do not fill the box); earlier ones join {@link STEP}
 * at a time as the reader scrolls up (or asks for them), later ones the same way on the way back
 * down; and once more than {@link LIMIT} are on the page, those farther than {@link FAR_PX} from
 * the view leave it. Opening a 1 000-message chat then costs what opening a 10-message one does
 * (`npm run bench:app` measured a median of 0.8 s to switch to one with every message rendered,
 * Markdown and highlighted code; with its last 10, 55 ms), and reading it from its first message
 * to its last keeps no more on the page than a few screens (with every message kept, each one
 * shown held about 155 KiB in the web process: 155 MiB for a 1 000-message chat).
 *
 * The window is named by its first message and its last (none: it reaches the chat's end and
 * follows it), not by counts: replies arriving below leave what is above where it was, and a
 * reader far up is not moved by them. Pure functions; `MessageScroller` holds the window, measures
 * the page and keeps the view still while messages join and leave.
 */

/** How many messages a chat opens with: several screens of replies. */
export const OPENING = 10;

/** How many messages join at each step up or down. */
export const STEP = 20;

/** Messages join when the reader is this close to the window's top or bottom edge (px): before they get there. */
export const NEAR_PX = 600;

/**
 * Messages wholly this far (px) above or below the view leave the page. Farther than
 * {@link NEAR_PX}: what is left beyond the view is more than brings messages back, so a window
 * never drops what it would add again at once.
 */
export const FAR_PX = 2400;

/** Up to this many messages stay on the page however far they are (a short chat never changes). */
export const LIMIT = 40;

/** The messages on the page: `start` to `end` (not included) of the chat. */
export interface Span {
  start: number;
  end: number;
}

/** The window across renders: its first message, and its last (null: the chat's end, followed). */
export interface Pin {
  firstId: string | null;
  lastId: string | null;
}

export const AT_END: Pin = { firstId: null, lastId: null };

/**
 * Where the window is in `messages`: from `firstId` while the chat still holds it (else the last
 * {@link OPENING}), to `lastId` while it holds that after it (else the end).
 */
export function spanOf(messages: readonly { id: string }[], pin: Pin): Span {
  const first = pin.firstId === null ? -1 : messages.findIndex((m) => m.id === pin.firstId);
  if (first < 0) return { start: Math.max(0, messages.length - OPENING), end: messages.length };
  const last = pin.lastId === null ? -1 : messages.findIndex((m) => m.id === pin.lastId);
  return { start: first, end: last >= first ? last + 1 : messages.length };
}

/** The pin that names `span` of `messages`. */
export function pinOf(messages: readonly { id: string }[], span: Span): Pin {
  return { firstId: messages[span.start]?.id ?? null, lastId: span.end >= messages.length ? null : (messages[span.end - 1]?.id ?? null) };
}

/** The window a step earlier: messages join above. */
export function earlier(span: Span): Span {
  return { start: Math.max(0, span.start - STEP), end: span.end };
}

/** The window a step later: messages join below, up to the chat's end. */
export function later(span: Span, length: number): Span {
  return { start: span.start, end: Math.min(length, span.end + STEP) };
}

/**
 * The window without its far messages: when it holds more than {@link LIMIT}, only `near` stays
 * (the messages within {@link FAR_PX} of the view, measured by the scroller), never less than
 * the view itself needs.
 */
export function bounded(span: Span, near: Span): Span {
  if (span.end - span.start <= LIMIT) return span;
  const start = Math.max(span.start, Math.min(near.start, span.end - 1));
  const end = Math.min(span.end, Math.max(near.end, start + 1));
  return start === span.start && end === span.end ? span : { start, end };
}

/** The window that shows message `index`: the same when it does, else one around it, a little context above. */
export function showing(index: number, span: Span, length: number): Span {
  if (index >= span.start && index < span.end) return span;
  const start = Math.max(0, index - 2);
  return { start, end: Math.min(length, Math.max(index + 1, start + OPENING)) };
}
