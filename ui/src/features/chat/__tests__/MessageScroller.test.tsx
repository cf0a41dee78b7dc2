import { act, render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { createRef } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { I18nProvider } from '../../../i18n/I18nProvider';
import type { Message } from '../../../ipc/bindings';
import { emptyConversation, type Conversation } from '../conversation';
import { MessageScroller, type MessageScrollerHandle } from '../MessageScroller';
import { FAR_PX, LIMIT, OPENING, STEP } from '../messageWindow';

const message = (i: number): Message => ({
  id: `m${i}`,
  chatId: 'c',
  role: i % 2 ? 'assistant' : 'user',
  content: `message ${i}`,
  status: 'complete',
  error: null,
  errorCode: null,
  errorDetails: null,
  keyLabel: null,
  providerKey: false,
  createdAt: i,
  usage: null,
  attachments: [],
});
const conversationOf = (length: number): Conversation => ({
  ...emptyConversation,
  loaded: true,
  messages: Array.from({ length }, (_, i) => message(i)),
});

function ui(conversation: Conversation, ref = createRef<MessageScrollerHandle>()) {
  return (
    <I18nProvider initial="en">
      <MessageScroller ref={ref} conversation={conversation}>
        {(span) => (
          <ol>
            {conversation.messages.slice(span.start, span.end).map((m) => (
              <li key={m.id} data-testid="message" data-message-id={m.id}>
                {m.content}
                <button type="button">Copy {m.id}</button>
              </li>
            ))}
          </ol>
        )}
      </MessageScroller>
    </I18nProvider>
  );
}

const shownIds = () => screen.queryAllByTestId('message').map((li) => li.dataset.messageId);

/** Message height in the fake layout, and the box's. */
const ROW = 100;
const VIEW = 500;

/**
 * A layout for jsdom, which has none: the box is {@link VIEW} px tall, each message {@link ROW}
 * px, one under the other in page order (the buttons take no room); scrollTop is kept and
 * clamped as a browser does.
 */
function fakeLayout() {
  const scrolled = new WeakMap<Element, number>();
  const isBox = (el: Element) => el.classList.contains('conversation__scroll');
  const rows = (box: Element) => box.querySelectorAll('[data-message-id]').length;
  const boxOf = (el: Element) => el.closest('.conversation__scroll') as HTMLElement;
  const max = (box: Element) => Math.max(0, rows(box) * ROW - VIEW);
  const props: [string, PropertyDescriptor][] = [
    ['clientHeight', { get: function (this: Element) { return isBox(this) ? VIEW : 0; } }],
    ['scrollHeight', { get: function (this: Element) { return isBox(this) ? Math.max(VIEW, rows(this) * ROW) : 0; } }],
    [
      'scrollTop',
      {
        get: function (this: Element) { return Math.min(scrolled.get(this) ?? 0, max(this)); },
        set: function (this: Element, value: number) { scrolled.set(this, Math.max(0, Math.min(value, max(this)))); },
      },
    ],
  ];
  const originals = props.map(([name]) => [name, Object.getOwnPropertyDescriptor(HTMLElement.prototype, name)] as const);
  for (const [name, descriptor] of props) Object.defineProperty(HTMLElement.prototype, name, { ...descriptor, configurable: true });
  vi.spyOn(Element.prototype, 'getBoundingClientRect').mockImplementation(function (this: Element) {
    let top = 0;
    let height = 0;
    if (isBox(this)) height = VIEW;
    else if (this.hasAttribute('data-message-id')) {
      const box = boxOf(this);
      top = [...box.querySelectorAll('[data-message-id]')].indexOf(this) * ROW - box.scrollTop;
      height = ROW;
    }
    return { top, bottom: top + height, height, left: 0, right: 0, width: 0, x: 0, y: top, toJSON: () => ({}) } as DOMRect;
  });
  return () => {
    for (const [name, original] of originals) {
      if (original) Object.defineProperty(HTMLElement.prototype, name, original);
      else delete (HTMLElement.prototype as unknown as Record<string, unknown>)[name];
    }
    vi.restoreAllMocks();
  };
}

let unlayout: (() => void) | null = null;
afterEach(() => {
  unlayout?.();
  unlayout = null;
});

const boxIn = (container: HTMLElement) => container.querySelector('.conversation__scroll') as HTMLElement;

/** Scrolls the box by `by` px as a reader does; answers how far the message at the top of the view moved on screen, less what was scrolled. */
function scrollBy(box: HTMLElement, by: number): number {
  const items = [...box.querySelectorAll<HTMLElement>('[data-message-id]')];
  const first = items.find((item) => item.getBoundingClientRect().bottom > 0) ?? items[0];
  const id = first.dataset.messageId;
  const before = first.getBoundingClientRect().top;
  const from = box.scrollTop;
  let moved = 0;
  act(() => {
    box.scrollTop = from + by;
    moved = box.scrollTop - from;
    box.dispatchEvent(new Event('scroll'));
  });
  const now = box.querySelector(`[data-message-id="${id}"]`);
  return now ? now.getBoundingClientRect().top - (before - moved) : Number.NaN;
}

describe('MessageScroller', () => {
  it('renders a long chat from its end, and earlier messages on request', async () => {
    const user = userEvent.setup();
    render(ui(conversationOf(1000)));
    expect(shownIds(), 'only the last messages are on the page').toHaveLength(OPENING);
    expect(shownIds().at(-1)).toBe('m999');
    const earlier = screen.getByRole('button', { name: `Show earlier messages (${1000 - OPENING} more)` });

    await user.click(earlier);
    expect(shownIds(), 'a step more, above').toHaveLength(OPENING + STEP);
    expect(shownIds()[0]).toBe(`m${1000 - OPENING - STEP}`);
  });

  it('renders a short chat whole, with nothing to ask for', () => {
    render(ui(conversationOf(OPENING)));
    expect(shownIds()).toHaveLength(OPENING);
    expect(screen.queryByTestId('messages-earlier')).toBeNull();
  });

  it('keeps its first message when replies arrive below', () => {
    const { rerender } = render(ui(conversationOf(1000)));
    const first = shownIds()[0];
    rerender(ui(conversationOf(1002)));
    expect(shownIds()[0], 'what is above stays where it was').toBe(first);
    expect(shownIds().at(-1), 'the new messages are shown').toBe('m1001');
  });

  it('reveals a message above the window: it joins the page and is marked', () => {
    const ref = createRef<MessageScrollerHandle>();
    render(ui(conversationOf(1000), ref));
    let revealed = false;
    act(() => {
      revealed = ref.current?.reveal('m100') ?? false;
    });
    expect(revealed, 'a message of the chat can always be revealed').toBe(true);
    expect(shownIds()[0], 'with a little context above it').toBe('m98');
    expect(screen.getByText('message 100')).toHaveClass('message--found');
    expect(ref.current?.reveal('elsewhere'), 'a message the chat does not hold').toBe(false);
  });

  it('adds earlier messages when the reader scrolls near the top, leaving the view where it was', () => {
    unlayout = fakeLayout();
    const { container } = render(ui(conversationOf(1000)));
    const box = boxIn(container);
    expect(shownIds().length, 'the box is filled, and a little more').toBeGreaterThanOrEqual(VIEW / ROW);
    const shown = shownIds().length;
    act(() => {
      box.scrollTop = box.scrollHeight;
      box.dispatchEvent(new Event('scroll'));
    });
    const off = scrollBy(box, -(box.scrollTop - 10));
    expect(shownIds().length, 'a step more, above').toBeGreaterThan(shown);
    expect(off, 'the message at the top of the view did not move on screen').toBe(0);
  });

  it('keeps only the messages near the view while the reader scrolls to the first message and back', () => {
    unlayout = fakeLayout();
    const { container } = render(ui(conversationOf(300)));
    const box = boxIn(container);
    const most = Math.ceil((2 * FAR_PX + VIEW) / ROW) + 2 + STEP;
    let jumps = 0;
    let largest = 0;
    for (let i = 0; i < 1000 && !(shownIds()[0] === 'm0' && box.scrollTop === 0); i += 1) {
      if (scrollBy(box, -0.9 * VIEW) !== 0) jumps += 1;
      largest = Math.max(largest, shownIds().length);
    }
    expect(shownIds()[0], 'the first message is reached').toBe('m0');
    expect(largest, `never more than the view, ${FAR_PX} px either side and a step on the page`).toBeLessThanOrEqual(most);
    expect(shownIds(), 'the end of the chat left the page').not.toContain('m299');
    expect(screen.getByTestId('messages-later'), 'what follows can be asked for').toHaveTextContent(`(${300 - shownIds().length} more)`);
    expect(screen.getByTestId('messages-latest')).toBeInTheDocument();

    for (let i = 0; i < 1000 && !(shownIds().at(-1) === 'm299' && box.scrollTop === box.scrollHeight - VIEW); i += 1) {
      if (scrollBy(box, 0.9 * VIEW) !== 0) jumps += 1;
      largest = Math.max(largest, shownIds().length);
    }
    expect(shownIds().at(-1), 'the last message is back').toBe('m299');
    expect(largest).toBeLessThanOrEqual(most);
    expect(shownIds().length, 'back at the end, the far ones above left').toBeLessThanOrEqual(most);
    expect(jumps, 'the view never jumped: every step moved it by what was scrolled').toBe(0);
    expect(screen.queryByTestId('messages-latest'), 'at the end, nothing to jump to').toBeNull();
    expect(screen.queryByTestId('messages-later')).toBeNull();
  }, 60_000);

  it('moves the focus to the messages when the message holding it leaves the page', () => {
    unlayout = fakeLayout();
    const { container } = render(ui(conversationOf(300)));
    const box = boxIn(container);
    act(() => screen.getByRole('button', { name: 'Copy m299' }).focus());
    for (let i = 0; i < 100 && shownIds().includes('m299'); i += 1) scrollBy(box, -0.9 * VIEW);
    expect(shownIds(), 'the message far below left the page').not.toContain('m299');
    expect(document.activeElement, 'focus is not lost with it: it is on the messages').toBe(box);
  }, 60_000);

  it('jumps to the latest message from far up, focus staying in the messages', async () => {
    unlayout = fakeLayout();
    const user = userEvent.setup();
    const ref = createRef<MessageScrollerHandle>();
    const { container } = render(ui(conversationOf(1000), ref));
    act(() => {
      ref.current?.reveal('m100');
    });
    expect(shownIds(), 'far up, the end is not on the page').not.toContain('m999');
    await user.click(screen.getByTestId('messages-latest'));
    expect(shownIds().at(-1), 'the end is back').toBe('m999');
    const box = boxIn(container);
    expect(box.scrollTop, 'scrolled to the bottom').toBe(box.scrollHeight - VIEW);
    expect(document.activeElement, 'the button left the page; focus is on the messages').toBe(box);
  });

  it('goes to the end when a reply starts while the reader is far up', () => {
    unlayout = fakeLayout();
    const ref = createRef<MessageScrollerHandle>();
    const conversation = conversationOf(1000);
    const { rerender } = render(ui(conversation, ref));
    act(() => {
      ref.current?.reveal('m100');
    });
    expect(shownIds()).not.toContain('m999');
    rerender(ui({ ...conversation, streaming: { text: '', keyLabel: null, providerLevel: false, notices: [], waiting: null, stopping: false, turn: 'ask' } }, ref));
    expect(shownIds().at(-1), 'the reply is written below the last message: it is on the page').toBe('m999');
  });

  it('does not move a reader far up when replies arrive', () => {
    unlayout = fakeLayout();
    const ref = createRef<MessageScrollerHandle>();
    const { rerender } = render(ui(conversationOf(1000), ref));
    act(() => {
      ref.current?.reveal('m100');
    });
    const before = shownIds();
    rerender(ui(conversationOf(1002), ref));
    expect(shownIds(), 'the same messages, none of the new ones').toEqual(before);
  });

  it('keeps a short chat whole however it is scrolled', () => {
    unlayout = fakeLayout();
    const { container } = render(ui(conversationOf(LIMIT)));
    const box = boxIn(container);
    scrollBy(box, -10_000);
    scrollBy(box, 10_000);
    expect(shownIds(), 'nothing leaves a window of LIMIT messages').toHaveLength(LIMIT);
  });
});
