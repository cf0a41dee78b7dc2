import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { Locale } from '../../../i18n';
import { I18nProvider } from '../../../i18n/I18nProvider';
import type { Message } from '../../../ipc/bindings';
import { emptyConversation, type Conversation, type Notice, type Streaming } from '../conversation';
import { Messages } from '../Messages';

const streaming = (fields: Partial<Streaming>): Conversation => ({
  ...emptyConversation,
  loaded: true,
  streaming: { text: '', keyLabel: null, providerLevel: false, notices: [], waiting: null, stopping: false, turn: 'ask', ...fields },
});

function renderIn(locale: Locale, conversation: Conversation) {
  render(
    <I18nProvider initial={locale}>
      <Messages conversation={conversation} onAnswerAgain={() => {}} onEdit={async () => true} onOpenSettings={() => {}} />
    </I18nProvider>,
  );
}

// The offset puts the UI clock exactly on the backend's, less 0.5 s already gone: 4 s show as 0:04.
const inFourSeconds = () => ({ until: 10_000, deadline: 30_000, offset: 10_000 - 4_000 - Date.now() + 500 });
const outOfCredit: Notice = { kind: 'failover', keyLabel: 'A', status: 402, reason: 'quota_exhausted', message: 'insufficient_quota', nextKeyLabel: 'B' };

describe('waiting and out-of-credit wording', () => {
  const cases: [Locale, string, string, string][] = [
    ['en', 'Waiting for a free key… 0:04', 'Waiting for a key in use to free up… at most 0:20', 'A is out of credit (402), retried on B'],
    ['zh', '正在等待空闲的 Key… 0:04', '正在等待使用中的 Key 空出… 最多 0:20', 'A 额度已用尽（402），已改用 B 重试'],
    ['ja', '空いているキーを待っています… 0:04', '使用中のキーが空くのを待っています… 最長 0:20', 'A はクレジットが尽きました（402）。B で再試行しました'],
    ['ru', 'Ждём свободный ключ… 0:04', 'Ждём, пока освободится занятый ключ… не дольше 0:20', 'A: закончился баланс (402), повтор на B'],
  ];

  it.each(cases)('%s: a wait with a known end counts down to it', (locale, known) => {
    renderIn(locale, streaming({ waiting: inFourSeconds(), keyLabel: 'A' }));
    expect(screen.getByRole('timer')).toHaveTextContent(known);
    expect(screen.queryByTestId('streaming-key'), 'while waiting, no key is writing').not.toBeInTheDocument();
  });

  it.each(cases)('%s: a wait for a request in flight counts down to the most it waits', (locale, _known, busy) => {
    const backendNow = 50_000;
    renderIn(locale, streaming({ waiting: { until: null, deadline: backendNow + 20_000, offset: backendNow - Date.now() } }));
    expect(screen.getByRole('timer')).toHaveTextContent(busy);
  });

  it.each(cases)('%s: a key out of credit is named as such', (locale, _known, _busy, notice) => {
    renderIn(locale, streaming({ notices: [outOfCredit] }));
    expect(screen.getByTestId('chat-notice')).toHaveTextContent(notice);
  });
});

describe('which key writes', () => {
  it('says a reply to a server that needs no key goes without one', () => {
    renderIn('en', streaming({ keyLabel: 'Local', keyless: true }));
    expect(screen.getByTestId('streaming-key'), 'no key is named: none is used').toHaveTextContent('Writing without a key…');
  });

  it('names the key writing otherwise', () => {
    renderIn('en', streaming({ keyLabel: 'prod', keyless: false }));
    expect(screen.getByTestId('streaming-key'), 'the pool key is named').toHaveTextContent('Writing with prod…');
  });

  it.each([
    ['en', 'sk-…ted1 was rate-limited (429); tried again on it after a wait'],
    ['ru', 'sk-…ted1'],
  ] as [Locale, string][])('%s: a wait on the same key is not worded as a failover', (locale, words) => {
    const waited: Notice = { kind: 'failover', keyLabel: 'sk-…ted1', status: 429, reason: 'rate_limited', message: '', nextKeyLabel: 'sk-…ted1', sameKey: true };
    renderIn(locale, streaming({ notices: [waited] }));
    expect(screen.getByTestId('chat-notice'), 'the key is named once').toHaveTextContent(words);
    expect(screen.getByTestId('chat-notice').textContent?.split('sk-…ted1').length, 'and only once: it did not move to itself').toBe(2);
  });
});

describe('what a reply cost', () => {
  const reply = (usage: Message['usage']): Conversation => ({
    ...emptyConversation,
    loaded: true,
    messages: [
      {
        id: 'm1',
        chatId: 'c1',
        role: 'assistant',
        content: 'Hi.',
        status: 'complete',
        error: null,
        errorCode: null,
        errorDetails: null,
        keyLabel: 'A',
        providerKey: false,
        createdAt: 1,
        usage,
        attachments: [],
      },
    ],
  });

  it.each([
    ['en', 'Cached 1,205 of 1,211 input tokens, 42 out'],
    ['zh', '输入 1,211 tokens 中 1,205 命中缓存，输出 42'],
    ['ja', '入力 1,211 トークンのうち 1,205 がキャッシュ、出力 42'],
    ['ru', 'Из кэша 1 205 из 1 211 входных токенов, на выходе: 42'],
  ] as [Locale, string][])('%s: tokens in and out, and the part of the prompt the cache served', (locale, text) => {
    renderIn(locale, reply({ inputTokens: 1211, cachedTokens: 1205, outputTokens: 42 }));
    expect(screen.getByTestId('message-usage').textContent?.replace(/\u00a0|\u202f/g, ' ')).toBe(text);
  });

  it('says nothing of the cache when it served nothing', () => {
    renderIn('en', reply({ inputTokens: 11, cachedTokens: 0, outputTokens: 3 }));
    expect(screen.getByTestId('message-usage')).toHaveTextContent('11 tokens in, 3 out');
  });

  it('shows no usage for a reply the provider reported none for', () => {
    renderIn('en', reply(null));
    expect(screen.getByTestId('message-key')).toHaveTextContent('Key: A');
    expect(screen.queryByTestId('message-usage')).not.toBeInTheDocument();
  });
});
