import { forwardRef, useImperativeHandle, useLayoutEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { useI18n } from '../../i18n/I18nProvider';
import type { Conversation } from './conversation';
import { earlierStart, NEAR_TOP_PX, startShowing, windowStart } from './messageWindow';

export interface MessageScrollerHandle {
  /** Scrolls the message into view and marks it for a moment; false when the chat does not hold it. */
  reveal: (messageId: string) => boolean;
}

interface Props {
  conversation: Conversation;
  /** Renders the conversation as far as it is on the page (its last messages; see messageWindow.ts). */
  children: (shown: Conversation) => ReactNode;
}

/**
 * The scrolling message area. It follows new text while the reader is at the bottom (checked
 * after every render: new messages, streamed text, another chat all render it), and renders a
 * long chat from its end, adding earlier messages as the reader scrolls up. One per chat (give
 * it the chat's id as `key`), so a chat opens at its bottom.
 */
export const MessageScroller = forwardRef<MessageScrollerHandle, Props>(function MessageScroller({ conversation, children }, ref) {
  const { t } = useI18n();
  const box = useRef<HTMLDivElement>(null);
  const atBottom = useRef(true);
  /** The box's scrollHeight before earlier messages were added above: to keep the view still. */
  const heightBefore = useRef<number | null>(null);
  /** A message to reveal once the window has grown to hold it. */
  const revealing = useRef<string | null>(null);
  const [firstId, setFirstId] = useState<string | null>(null);
  const { messages } = conversation;
  const start = windowStart(messages, firstId);
  // Pin the window to its first message, so replies arriving below leave what is above in place.
  // Set while rendering (React renders this component again at once, its children only once).
  const first = messages[start]?.id ?? null;
  if (first !== firstId) setFirstId(first);
  const shown = useMemo(() => (start === 0 ? conversation : { ...conversation, messages: messages.slice(start) }), [conversation, messages, start]);

  function growTo(nextStart: number) {
    if (nextStart >= start) return;
    heightBefore.current ??= box.current?.scrollHeight ?? null;
    setFirstId(messages[nextStart].id);
  }

  function mark(messageId: string): boolean {
    const target = box.current?.querySelector<HTMLElement>(`[data-message-id=${JSON.stringify(messageId)}]`);
    if (!target) return false;
    atBottom.current = false;
    target.scrollIntoView?.({ block: 'center' });
    target.classList.add('message--found');
    setTimeout(() => target.classList.remove('message--found'), 2000);
    return true;
  }

  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    if (heightBefore.current !== null) {
      el.scrollTop += el.scrollHeight - heightBefore.current;
      heightBefore.current = null;
    } else if (atBottom.current) {
      el.scrollTop = el.scrollHeight;
    }
    if (revealing.current && mark(revealing.current)) revealing.current = null;
    // A window that does not fill the box cannot be scrolled up: add earlier messages until it does.
    if (start > 0 && el.clientHeight > 0 && el.scrollHeight <= el.clientHeight) growTo(earlierStart(start));
  });

  useImperativeHandle(ref, () => ({
    reveal(messageId) {
      const index = messages.findIndex((m) => m.id === messageId);
      if (index < 0) return false;
      if (index >= start) return mark(messageId);
      revealing.current = messageId;
      growTo(startShowing(index, start));
      return true;
    },
  }));

  return (
    <div
      ref={box}
      className="conversation__scroll"
      onScroll={(e) => {
        const el = e.currentTarget;
        atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
        if (start > 0 && el.scrollTop < NEAR_TOP_PX) growTo(earlierStart(start));
      }}
    >
      {start > 0 && (
        <button type="button" className="link-button messages__earlier" onClick={() => growTo(earlierStart(start))} data-testid="messages-earlier">
          {t('chat.earlierMessages', { count: start })}
        </button>
      )}
      {children(shown)}
    </div>
  );
});
