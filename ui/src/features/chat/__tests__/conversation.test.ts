import { describe, expect, it } from 'vitest';
import type { ChatEvent, Message } from '../../../ipc/bindings';
import { answeredByProviderKey, conversationReducer, editable, emptyConversation, regenerable, retryable, type Conversation, type ConversationAction, type Notice } from '../conversation';
import { noticeText } from '../Messages';
import { translate, type MessageKey } from '../../../i18n';
import { initialModel } from '../models';
import { matchingModels, mergedModels } from '../../models/modelOptions';
import { provider } from '../../../test/fakeBackend';

const message = (fields: Partial<Message>): Message => ({
  id: 'm',
  chatId: 'c',
  role: 'assistant',
  content: '',
  status: 'complete',
  error: null,
  errorCode: null,
  errorDetails: null,
  keyLabel: null,
  providerKey: false,
  createdAt: 0,
  usage: null,
  attachments: [],
  ...fields,
});

/** English words, as the page shows them. */
const t = (key: MessageKey, vars?: Record<string, string | number>) => translate('en', key, vars);

const user = message({ id: 'u1', role: 'user', content: 'Hi' });
const fold = (state: Conversation, ...actions: ConversationAction[]) => actions.reduce(conversationReducer, state);
/** An event as it arrives; `receivedAt` is the UI clock then (it matters only to waiting). */
const ev = (event: ChatEvent, receivedAt = 0): ConversationAction => ({ type: 'event', event, receivedAt });

describe('conversation reducer', () => {
  it('streams a reply: the user message, the key, the deltas, then the saved reply', () => {
    let state = fold(emptyConversation, { type: 'loaded', messages: [] }, { type: 'sending', turn: 'ask' });
    state = fold(
      state,
      ev({ type: 'userMessage', message: user }),
      ev({ type: 'keySelected', keyId: null, keyLabel: 'A', providerLevel: false, keyless: false, rebound: false, attempt: 1 }),
      ev({ type: 'delta', text: 'Hel' }),
      ev({ type: 'delta', text: 'lo' }),
    );
    expect(state.messages, 'the user message shows at once').toEqual([user]);
    expect(state.streaming?.text, 'deltas are appended in order').toBe('Hello');
    expect(state.streaming?.keyLabel).toBe('A');
    expect(state.streaming?.notices, 'a first selection is not news').toEqual([]);

    const reply = message({ id: 'a1', content: 'Hello', keyLabel: 'A' });
    state = fold(state, ev({ type: 'finished', message: reply }));
    expect(state.streaming, 'the reply is no longer streaming').toBeNull();
    expect(state.messages).toEqual([user, reply]);
  });

  it('folds a finished reply once, whether it comes from the channel, the answer, or both', () => {
    const reply = message({ id: 'a1', content: 'x' });
    const state = fold(emptyConversation, { type: 'sending', turn: 'ask' }, ev({ type: 'finished', message: reply }), ev({ type: 'finished', message: reply }));
    expect(state.messages).toEqual([reply]);
  });

  it('turns a failover and the next key into one notice kept with the saved reply', () => {
    const reply = message({ id: 'a1', content: 'ok', keyLabel: 'B' });
    const state = fold(
      emptyConversation,
      { type: 'sending', turn: 'ask' },
      ev({ type: 'keySelected', keyId: null, keyLabel: 'A', providerLevel: false, keyless: false, rebound: false, attempt: 1 }),
      ev({ type: 'failover', keyLabel: 'A', status: 429, reason: 'rate_limited', message: 'slow down' }),
      ev({ type: 'keySelected', keyId: null, keyLabel: 'B', providerLevel: false, keyless: false, rebound: true, attempt: 2 }),
      ev({ type: 'delta', text: 'ok' }),
      ev({ type: 'finished', message: reply }),
    );
    expect(state.notices.a1, 'the failover names both keys; the rebound it implies is not repeated').toEqual([
      { kind: 'failover', keyLabel: 'A', status: 429, reason: 'rate_limited', message: 'slow down', nextKeyLabel: 'B' },
    ]);
  });

  it('notes a rebound that no failover explains (the chat’s key cooled down elsewhere)', () => {
    const state = fold(
      emptyConversation,
      { type: 'sending', turn: 'ask' },
      ev({ type: 'keySelected', keyId: null, keyLabel: 'C', providerLevel: false, keyless: false, rebound: true, attempt: 1 }),
    );
    expect(state.streaming?.notices).toEqual([{ kind: 'rebound', keyLabel: 'C' }]);
  });

  it('keeps a failover with no key left as a notice without a next key', () => {
    const state = fold(
      emptyConversation,
      { type: 'sending', turn: 'ask' },
      ev({ type: 'keySelected', keyId: null, keyLabel: 'A', providerLevel: false, keyless: false, rebound: false, attempt: 1 }),
      ev({ type: 'failover', keyLabel: 'A', status: 401, reason: 'auth_rejected', message: 'bad key' }),
      ev({ type: 'finished', message: message({ id: 'a1', status: 'error', error: 'no key left', errorCode: 'no_available_key' }) }),
    );
    expect(state.notices.a1).toEqual([{ kind: 'failover', keyLabel: 'A', status: 401, reason: 'auth_rejected', message: 'bad key', nextKeyLabel: null }]);
    expect(retryable(state)?.id, 'a failed last reply can be retried').toBe('a1');
  });

  it('answering again (regenerate) drops every reply after the last question, as the backend does', () => {
    const good = message({ id: 'a1', content: 'first answer' });
    const second = message({ id: 'a2', content: 'an earlier retry' });
    const state = fold(emptyConversation, { type: 'loaded', messages: [user, good, second] }, { type: 'sending', turn: 'again' });
    expect(state.messages).toEqual([user]);
    expect(state.streaming?.turn).toBe('again');
  });

  it('an edit drops what followed the last question and takes the rewritten one in place', () => {
    const earlier = message({ id: 'u0', role: 'user', content: 'first' });
    const answer = message({ id: 'a0', content: 'answer' });
    const reply = message({ id: 'a1', content: 'old' });
    let state = fold(emptyConversation, { type: 'loaded', messages: [earlier, answer, user, reply] }, { type: 'sending', turn: 'edit' });
    expect(state.messages, 'only the last question’s replies go').toEqual([earlier, answer, user]);
    const edited = { ...user, content: 'Hi again' };
    state = fold(state, ev({ type: 'userMessage', message: edited }));
    expect(state.messages, 'the same message, rewritten, in its place').toEqual([earlier, answer, edited]);
  });

  it('offers Edit on the last question and Regenerate on a finished last reply, never while writing', () => {
    const reply = message({ id: 'a1', content: 'ok' });
    const loaded = fold(emptyConversation, { type: 'loaded', messages: [user, reply] });
    expect(editable(loaded)?.id).toBe('u1');
    expect(regenerable(loaded)?.id).toBe('a1');
    const failed = fold(emptyConversation, { type: 'loaded', messages: [user, message({ id: 'a2', status: 'error' })] });
    expect(regenerable(failed), 'a failed reply is retried instead').toBeNull();
    const writing = fold(loaded, { type: 'sending', turn: 'ask' });
    expect([editable(writing), regenerable(writing)]).toEqual([null, null]);
  });

  it('on retry drops the failed replies the backend replaces', () => {
    const failed = message({ id: 'a1', status: 'error', error: 'boom' });
    const state = fold(emptyConversation, { type: 'loaded', messages: [user, failed] }, { type: 'sending', turn: 'again' });
    expect(state.messages).toEqual([user]);
    expect(retryable(state), 'nothing to retry while a reply is written').toBeNull();
  });

  it('marks stopping, and a refused send ends the streaming state', () => {
    let state = fold(emptyConversation, { type: 'sending', turn: 'ask' }, { type: 'stopping' });
    expect(state.streaming?.stopping).toBe(true);
    state = fold(state, { type: 'rejected' });
    expect(state.streaming).toBeNull();
  });

  it('ignores stream events when no reply is being written', () => {
    const state = fold(emptyConversation, ev({ type: 'delta', text: 'late' }));
    expect(state).toEqual(emptyConversation);
  });

  it('keeps a reply streaming when the messages are loaded again', () => {
    const state = fold(emptyConversation, { type: 'sending', turn: 'ask' }, ev({ type: 'delta', text: 'part' }), { type: 'loaded', messages: [user] });
    expect(state.streaming?.text).toBe('part');
    expect(state.messages).toEqual([user]);
  });

  it('waits for a free key with the backend’s times, measuring its clock offset on arrival, until the next attempt', () => {
    let state = fold(
      emptyConversation,
      { type: 'sending', turn: 'ask' },
      ev({ type: 'keySelected', keyId: null, keyLabel: 'A', providerLevel: false, keyless: false, rebound: false, attempt: 1 }),
      ev({ type: 'failover', keyLabel: 'A', status: 429, reason: 'rate_limited', message: 'slow down' }),
      // the backend's clock says 101 000 when the UI's says 1 000: the UI is 100 s behind
      ev({ type: 'waiting', until: 105_000, deadline: 121_000, now: 101_000, seconds: 4 }, 1_000),
    );
    expect(state.streaming?.waiting, 'the times stay the backend’s; the offset converts them').toEqual({ until: 105_000, deadline: 121_000, offset: 100_000 });

    state = fold(state, ev({ type: 'keySelected', keyId: null, keyLabel: 'B', providerLevel: false, keyless: false, rebound: true, attempt: 2 }), ev({ type: 'delta', text: 'ok' }));
    expect(state.streaming?.waiting, 'the next attempt ends the wait').toBeNull();
    expect(state.streaming?.keyLabel).toBe('B');
    expect(state.streaming?.notices, 'the failover names the key that took over after the wait').toEqual([
      { kind: 'failover', keyLabel: 'A', status: 429, reason: 'rate_limited', message: 'slow down', nextKeyLabel: 'B' },
    ]);
  });

  it('words a retry on the same key after a wait as a wait, not as a failover to another key', () => {
    const state = fold(
      emptyConversation,
      { type: 'sending', turn: 'ask' },
      ev({ type: 'keySelected', keyId: 'k1', keyLabel: 'sk-…ted1', providerLevel: false, keyless: false, rebound: false, attempt: 1 }),
      ev({ type: 'failover', keyLabel: 'sk-…ted1', status: 429, reason: 'rate_limited', message: 'slow down' }),
      ev({ type: 'waiting', until: 5_000, deadline: 20_000, now: 1_000, seconds: 4 }, 1_000),
      ev({ type: 'keySelected', keyId: 'k1', keyLabel: 'sk-…ted1', providerLevel: false, keyless: false, rebound: false, attempt: 2 }),
    );
    const notice = state.streaming?.notices[0];
    expect(notice, 'the same key took the reply again: marked as such').toMatchObject({ kind: 'failover', nextKeyLabel: 'sk-…ted1', sameKey: true });
    expect(noticeText(notice as Notice, t), 'worded as a wait on that key').toBe('sk-…ted1 was rate-limited (429); tried again on it after a wait');

    const moved = fold(
      emptyConversation,
      { type: 'sending', turn: 'ask' },
      ev({ type: 'keySelected', keyId: 'k1', keyLabel: 'A', providerLevel: false, keyless: false, rebound: false, attempt: 1 }),
      ev({ type: 'failover', keyLabel: 'A', status: 429, reason: 'rate_limited', message: 'slow down' }),
      ev({ type: 'keySelected', keyId: 'k2', keyLabel: 'B', providerLevel: false, keyless: false, rebound: true, attempt: 2 }),
    );
    expect(noticeText(moved.streaming?.notices[0] as Notice, t), 'another key took over: a failover').toBe('A was rate-limited (429), retried on B');
  });

  it('waits for a request in flight (no known time), keeps waiting while stopping, and a stopped reply ends it', () => {
    let state = fold(
      emptyConversation,
      { type: 'sending', turn: 'ask' },
      ev({ type: 'waiting', until: null, deadline: 20_000, now: 0, seconds: 20 }, 0),
      { type: 'stopping' },
    );
    expect(state.streaming).toMatchObject({ stopping: true, waiting: { until: null, deadline: 20_000, offset: 0 } });

    const stopped = message({ id: 'a1', status: 'stopped' });
    state = fold(state, ev({ type: 'finished', message: stopped }));
    expect(state.streaming, 'nothing streams once the stopped reply is saved').toBeNull();
    expect(state.messages).toEqual([stopped]);
  });

  it('takes the latest wait when the reply has to wait again', () => {
    const state = fold(
      emptyConversation,
      { type: 'sending', turn: 'ask' },
      ev({ type: 'waiting', until: null, deadline: 20_000, now: 0, seconds: 20 }, 0),
      ev({ type: 'waiting', until: 8_000, deadline: 20_000, now: 5_000, seconds: 3 }, 5_050),
    );
    expect(state.streaming?.waiting).toEqual({ until: 8_000, deadline: 20_000, offset: -50 });
  });

  it('ignores a wait when no reply is being written', () => {
    expect(fold(emptyConversation, ev({ type: 'waiting', until: 1, deadline: 2, now: 0, seconds: 1 }))).toEqual(emptyConversation);
  });

  it('keeps an out-of-credit failover as a notice, like a rate limit', () => {
    const state = fold(
      emptyConversation,
      { type: 'sending', turn: 'ask' },
      ev({ type: 'keySelected', keyId: null, keyLabel: 'A', providerLevel: false, keyless: false, rebound: false, attempt: 1 }),
      ev({ type: 'failover', keyLabel: 'A', status: 402, reason: 'quota_exhausted', message: 'insufficient_quota' }),
      ev({ type: 'keySelected', keyId: null, keyLabel: 'B', providerLevel: false, keyless: false, rebound: true, attempt: 2 }),
    );
    expect(state.streaming?.notices).toEqual([
      { kind: 'failover', keyLabel: 'A', status: 402, reason: 'quota_exhausted', message: 'insufficient_quota', nextKeyLabel: 'B' },
    ]);
  });

  it('knows a reply came from the provider-level key from the saved flag, not from its label', () => {
    const streamed = fold(
      emptyConversation,
      { type: 'sending', turn: 'ask' },
      ev({ type: 'keySelected', keyId: null, keyLabel: 'provider key', providerLevel: true, keyless: false, rebound: false, attempt: 1 }),
      ev({ type: 'finished', message: message({ id: 'a1', keyLabel: 'provider key', providerKey: true }) }),
    );
    expect(answeredByProviderKey(streamed.messages[0])).toBe(true);
    expect(answeredByProviderKey(message({ keyLabel: 'provider key', providerKey: false }))).toBe(false);
    expect(answeredByProviderKey(message({ keyLabel: 'prod' }))).toBe(false);
  });
});

describe('model choice', () => {
  it('starts on the default model, else the first, else none', () => {
    expect(initialModel(provider('p', 'P', { models: ['a', 'b'], defaultModel: 'b' }))).toBe('b');
    expect(initialModel(provider('p', 'P', { models: ['a', 'b'] }))).toBe('a');
    expect(initialModel(provider('p', 'P'))).toBe('');
  });

  it('offers the provider’s own models first, then the listed ones, each once', () => {
    expect(mergedModels(['b', 'a'], ['a', 'c', 'b', 'd'])).toEqual(['b', 'a', 'c', 'd']);
  });

  it('searches models by every word typed, in any case', () => {
    const models = ['gpt-4o', 'gpt-4o-mini', 'o3-mini', 'Claude-Haiku'];
    expect(matchingModels(models, '')).toEqual(models);
    expect(matchingModels(models, 'MINI')).toEqual(['gpt-4o-mini', 'o3-mini']);
    expect(matchingModels(models, '4o mini')).toEqual(['gpt-4o-mini']);
    expect(matchingModels(models, 'haiku')).toEqual(['Claude-Haiku']);
  });
});
