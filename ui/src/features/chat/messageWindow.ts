/**
 * Long chats render from their end. A chat opens with its last {@link OPENING} messages on the
 * page (more, when those do not fill the window); earlier ones join {@link STEP} at a time as the
 * reader scrolls up (or asks for them). Opening a 1 000-message chat then costs what
 * opening a 10-message one does. `npm run bench:app` measured a median of 0.8 s to switch to one
 * with every message rendered (Markdown, highlighted code); with its last 20, about 100 ms the
 * first time after a start; with its last 10, 55 ms (41 ms again). The budget is 100 ms.
 *
 * The window is named by its first message, not by a count: replies arriving below leave what is
 * above where it was. Pure functions; `MessageScroller` holds the state and the scrolling.
 */

/** How many messages a chat opens with: several screens of replies. */
export const OPENING = 10;

/** How many earlier messages join at each step up. */
export const STEP = 20;

/** Earlier messages join when the reader is this close to the top (px): before they get there. */
export const NEAR_TOP_PX = 600;

/** Where the rendered messages begin: at `firstId` while the chat still holds it, else its last {@link OPENING}. */
export function windowStart(messages: readonly { id: string }[], firstId: string | null): number {
  const pinned = firstId === null ? -1 : messages.findIndex((m) => m.id === firstId);
  return pinned >= 0 ? pinned : Math.max(0, messages.length - OPENING);
}

/** The start one step earlier than `start`. */
export function earlierStart(start: number): number {
  return Math.max(0, start - STEP);
}

/** The start that puts message `index` on the page with a little context above it. */
export function startShowing(index: number, start: number): number {
  return Math.min(start, Math.max(0, index - 2));
}
