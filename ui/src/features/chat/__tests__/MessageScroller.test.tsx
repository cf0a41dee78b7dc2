import { act, render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { createRef } from 'react';
import { describe, expect, it } from 'vitest';
import { I18nProvider } from '../../../i18n/I18nProvider';
import type { Message } from '../../../ipc/bindings';
import { emptyConversation, type Conversation } from '../conversation';
import { MessageScroller, type MessageScrollerHandle } from '../MessageScroller';
import { OPENING, STEP } from '../messageWindow';

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
        {(shown) => (
          <ol>
            {shown.messages.map((m) => (
              <li key={m.id} data-testid="message" data-message-id={m.id}>
                {m.content}
              </li>
            ))}
          </ol>
        )}
      </MessageScroller>
    </I18nProvider>
  );
}

const shownIds = () => screen.queryAllByTestId('message').map((li) => li.dataset.messageId);

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

  it('adds earlier messages when the reader scrolls near the top', () => {
    const { container } = render(ui(conversationOf(1000)));
    const box = container.querySelector('.conversation__scroll') as HTMLElement;
    act(() => {
      box.scrollTop = 0;
      box.dispatchEvent(new Event('scroll'));
    });
    expect(shownIds()).toHaveLength(OPENING + STEP);
  });
});
