import { forwardRef, useImperativeHandle, useLayoutEffect, useRef, useState, type ReactNode } from 'react';
import { useI18n } from '../../i18n/I18nProvider';
import type { Conversation } from './conversation';
import { AT_END, bounded, earlier, FAR_PX, LIMIT, later, NEAR_PX, pinOf, showing, spanOf, type Pin, type Span } from './messageWindow';

export interface MessageScrollerHandle {
  /** Scrolls the message into view and marks it for a moment; false when the chat does not hold it. */
  reveal: (messageId: string) => boolean;
}

interface Props {
  conversation: Conversation;
  /**
   * Renders the messages of `span` (see messageWindow.ts), each an element with its id as
   * `data-message-id`, in order; and the reply being written when the span reaches the end.
   */
  children: (span: Span) => ReactNode;
}

/** A message on screen before the window moved, and where it was: it is put back there after. */
interface Anchor {
  id: string;
  top: number;
}

const itemOf = (box: HTMLElement, id: string) => box.querySelector<HTMLElement>(`[data-message-id=${JSON.stringify(id)}]`);

/**
 * The scrolling message area. It follows new text while the reader is at the bottom (checked
 * after every render: new messages, streamed text, another chat all render it), and keeps a long
 * chat on the page only around the view (messageWindow.ts): messages join above and below as the
 * reader scrolls toward them, far ones leave, and the message at the top of the view stays where
 * it was on screen through both. Far up, "Jump to the latest message" goes back to the end, and so
 * does sending (a reply starts). One per chat (give it the chat's id as `key`), so a chat opens at
 * its bottom.
 */
export const MessageScroller = forwardRef<MessageScrollerHandle, Props>(function MessageScroller({ conversation, children }, ref) {
  const { t } = useI18n();
  const box = useRef<HTMLDivElement>(null);
  const atBottom = useRef(true);
  const anchor = useRef<Anchor | null>(null);
  /** A message to reveal once the window holds it. */
  const revealing = useRef<string | null>(null);
  /** The window's edges when last laid out: a new window is checked for what to add or drop. */
  const laidOut = useRef<string | null>(null);
  /** What had the focus (a button, a message) left the page with the window's move: focus goes to the box. */
  const refocus = useRef(false);
  const [pin, setPin] = useState<Pin>(AT_END);
  const { messages, streaming } = conversation;
  const span = spanOf(messages, pin);
  const atEnd = span.end === messages.length;
  // Pin the window to its messages, so replies arriving below leave what is above in place.
  // Set while rendering (React renders this component again at once, its children only once).
  const current = pinOf(messages, span);
  if (current.firstId !== pin.firstId || current.lastId !== pin.lastId) setPin(current);

  /** The message at the top of the view: the first whose bottom is below the box's top edge. */
  function topOfView(): Anchor | null {
    const el = box.current;
    if (!el) return null;
    const edge = el.getBoundingClientRect().top;
    for (const item of el.querySelectorAll<HTMLElement>('[data-message-id]')) {
      const rect = item.getBoundingClientRect();
      if (rect.bottom > edge && item.dataset.messageId) return { id: item.dataset.messageId, top: rect.top };
    }
    return null;
  }

  /**
   * Moves the window; the message at the top of the view stays where it is on screen. The page is
   * still the old window until React renders the new one, so the anchor is taken now (again, if a
   * move is already waiting: the reader may have scrolled since).
   */
  function move(next: Span) {
    if (next.start === span.start && next.end === span.end) return;
    anchor.current = topOfView();
    if (leavesWithFocus(next)) refocus.current = true;
    setPin(pinOf(messages, next));
  }

  /** Whether the message holding the focus (a Copy button the reader tabbed to) leaves the page with `next`. */
  function leavesWithFocus(next: Span): boolean {
    const active = document.activeElement;
    const item = active && box.current?.contains(active) ? active.closest<HTMLElement>('[data-message-id]') : null;
    if (!item) return false;
    const index = messages.findIndex((m) => m.id === item.dataset.messageId);
    return index < next.start || index >= next.end;
  }

  /** The messages on the page within {@link FAR_PX} of the view; null when the page is not the window (yet). */
  function nearView(): Span | null {
    const el = box.current;
    if (!el) return null;
    const view = el.getBoundingClientRect();
    const items = el.querySelectorAll<HTMLElement>('[data-message-id]');
    if (items.length !== span.end - span.start) return null;
    let start = span.end;
    let end = span.start;
    items.forEach((item, i) => {
      const rect = item.getBoundingClientRect();
      if (rect.bottom >= view.top - FAR_PX && rect.top <= view.bottom + FAR_PX) {
        start = Math.min(start, span.start + i);
        end = Math.max(end, span.start + i + 1);
      }
    });
    return start < end && messages[start]?.id === items[start - span.start].dataset.messageId ? { start, end } : null;
  }

  /** Adds messages at an edge the reader is near; else drops those far from the view. */
  function follow() {
    const el = box.current;
    if (!el || el.clientHeight === 0) return;
    const below = el.scrollHeight - el.scrollTop - el.clientHeight;
    if (span.start > 0 && el.scrollTop < NEAR_PX) return move(earlier(span));
    if (!atEnd && below < NEAR_PX) return move(later(span, messages.length));
    if (span.end - span.start <= LIMIT) return; // nothing leaves: no need to measure
    const near = nearView();
    if (near) move(bounded(span, near));
  }

  /** The end of the chat, scrolled to its bottom. */
  function toLatest() {
    atBottom.current = true;
    anchor.current = null;
    if (leavesWithFocus(spanOf(messages, AT_END))) refocus.current = true;
    setPin(AT_END);
  }

  function mark(messageId: string): boolean {
    const target = box.current && itemOf(box.current, messageId);
    if (!target) return false;
    atBottom.current = false;
    target.scrollIntoView?.({ block: 'center' });
    target.classList.add('message--found');
    setTimeout(() => target.classList.remove('message--found'), 2000);
    return true;
  }

  // A reply starting (the user sent, edited or asked again) is followed from wherever the reader was.
  const replying = streaming !== null;
  const wasReplying = useRef(replying);
  useLayoutEffect(() => {
    if (replying && !wasReplying.current && !atEnd) toLatest();
    wasReplying.current = replying;
  });

  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    const kept = anchor.current;
    anchor.current = null;
    const item = kept && itemOf(el, kept.id);
    if (item) {
      el.scrollTop += item.getBoundingClientRect().top - kept.top;
    } else if (atBottom.current && atEnd) {
      el.scrollTop = el.scrollHeight;
    }
    if (revealing.current && mark(revealing.current)) revealing.current = null;
    if (refocus.current) {
      refocus.current = false;
      el.focus({ preventScroll: true });
    }
    const edges = `${span.start}:${span.end}`;
    // A window that does not fill the box cannot be scrolled up: add earlier messages until it does.
    if (span.start > 0 && el.clientHeight > 0 && el.scrollHeight <= el.clientHeight) move(earlier(span));
    else if (laidOut.current !== edges) follow();
    laidOut.current = edges;
  });

  useImperativeHandle(ref, () => ({
    reveal(messageId) {
      const index = messages.findIndex((m) => m.id === messageId);
      if (index < 0) return false;
      if (index >= span.start && index < span.end) return mark(messageId);
      revealing.current = messageId;
      anchor.current = null;
      setPin(pinOf(messages, showing(index, span, messages.length)));
      return true;
    },
  }));

  /** A button's step; when the button leaves the page with it, focus stays in the messages. */
  function step(next: Span, leaves: boolean) {
    refocus.current = leaves;
    move(next);
  }

  return (
    <div className="conversation__window">
      <div
        ref={box}
        className="conversation__scroll"
        // Until the chat's messages are read, the list is not the chat's yet.
        aria-busy={!conversation.loaded || undefined}
        data-testid="conversation-scroll"
        data-loaded={conversation.loaded}
        // Focus lands here when what had it left the page (Jump to the latest message, the last
        // step, a message far from the view).
        tabIndex={-1}
        onScroll={(e) => {
          const el = e.currentTarget;
          atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
          // A move waiting to be rendered keeps the view where the reader has scrolled it since.
          if (anchor.current) anchor.current = topOfView();
          follow();
        }}
      >
        {span.start > 0 && (
          <button type="button" className="link-button messages__earlier" onClick={() => step(earlier(span), earlier(span).start === 0)} data-testid="messages-earlier">
            {t('chat.earlierMessages', { count: span.start })}
          </button>
        )}
        {children(span)}
        {!atEnd && (
          <button
            type="button"
            className="link-button messages__later"
            onClick={() => {
              const next = later(span, messages.length);
              step(next, next.end === messages.length);
            }}
            data-testid="messages-later"
          >
            {t('chat.laterMessages', { count: messages.length - span.end })}
          </button>
        )}
      </div>
      {!atEnd && (
        <button
          type="button"
          className="button button--small messages__latest"
          onClick={() => {
            refocus.current = true;
            toLatest();
          }}
          data-testid="messages-latest"
        >
          {t('chat.jumpToLatest')}
        </button>
      )}
    </div>
  );
});
