import { describe, expect, it } from 'vitest';
import { LOCALES, translate, type Locale, type MessageKey, type Vars } from '..';
import type { BreakageKind, ErrorDetails, Issue, IssueCode, IssueParams, ReplyError } from '../../ipc/bindings';
import { IpcError } from '../../ipc/client';
import { formatClockTime } from '../format';
import { errorText, issueText, issueWithField, probeText, replyErrorText, type Translate } from '../problems';

/*
 * Every code the backend sends, worded in each of the four languages: the words come from the
 * dictionary chosen by the code (and its parameters), never from the backend's English `message`,
 * which is a sentinel here and must not show, except for a code this build does not know.
 */

const ENGLISH = 'BACKEND ENGLISH FALLBACK';
const tOf = (locale: Locale): Translate => (key: MessageKey, vars?: Vars) => translate(locale, key, vars);
const number = (locale: Locale, n: number) => new Intl.NumberFormat(translate(locale, 'intl.tag')).format(n);
const issue = (code: IssueCode, params?: IssueParams, path = ''): Issue => ({ path, code, ...(params ? { params } : {}), message: ENGLISH });

/** [code, params, the dictionary key it must be worded with, its variables per language, the English words]. */
type IssueCase = [IssueCode, IssueParams | undefined, MessageKey, (l: Locale) => Vars | undefined, string];
const ISSUES: IssueCase[] = [
  ['required', undefined, 'issue.required', () => undefined, 'This is required.'],
  ['not_null', undefined, 'issue.notNull', () => undefined, 'A value is missing.'],
  ['wrong_type', { expected: 'integer', got: 'string' }, 'issue.wrongType', (l) => ({ expected: translate(l, 'type.integer') }), 'Expected a whole number.'],
  ['wrong_type', { expected: 'boolean' }, 'issue.wrongType', (l) => ({ expected: translate(l, 'type.boolean') }), 'Expected yes or no.'],
  ['unknown_field', undefined, 'issue.unknownField', () => undefined, 'Keypool does not know this field.'],
  ['not_an_object', { got: 'list' }, 'issue.notAnObject', () => undefined, 'The request was malformed.'],
  ['blank', undefined, 'issue.blank', () => undefined, 'Enter something here.'],
  ['too_short', { min: 2 }, 'issue.tooShort', () => ({ min: 2 }), 'At least 2 characters.'],
  ['too_long', { max: 4096 }, 'issue.tooLong', (l) => ({ max: number(l, 4096) }), 'At most 4,096 characters.'],
  ['too_small', { min: 1 }, 'issue.tooSmall', () => ({ min: 1 }), 'At least 1.'],
  ['too_large', { max: 100_000 }, 'issue.tooLarge', (l) => ({ max: number(l, 100_000) }), 'At most 100,000.'],
  ['key_has_spaces', undefined, 'error.apiKeySpaces', () => undefined, 'A key has no spaces or line breaks. To add several at once, use “Import keys”.'],
  ['bad_env_name', undefined, 'error.envName', () => undefined, 'After $ write an environment variable name: letters, digits and _, not starting with a digit (e.g. $OPENAI_API_KEY).'],
  ['bad_url', undefined, 'issue.badUrl', () => undefined, 'Enter a URL such as https://api.openai.com/v1.'],
  ['not_https', undefined, 'issue.notHttps', () => undefined, 'Use an https:// address.'],
  ['http_not_local', undefined, 'error.baseUrlPlainHttp', () => undefined, translate('en', 'error.baseUrlPlainHttp')],
  ['no_host', undefined, 'issue.noHost', () => undefined, 'The URL needs a host, such as https://api.openai.com/v1.'],
  ['not_a_model', undefined, 'error.defaultModelNotListed', () => undefined, 'The default model must be one of the models.'],
  ['ids_mismatch', { count: 3 }, 'issue.idsMismatch', () => undefined, 'The keys changed in the meantime. Reload and try again.'],
  ['nothing_to_change', { fields: ['title'] }, 'issue.nothingToChange', () => undefined, 'There is nothing to change.'],
  ['provider_deleted', undefined, 'issue.providerDeleted', () => undefined, 'The provider of this chat was deleted: choose another one.'],
  ['nothing_to_answer', undefined, 'issue.nothingToAnswer', () => undefined, 'There is no message to answer: write one.'],
  ['no_models', undefined, 'issue.noModels', () => undefined, 'This provider lists no models: type the model’s name.'],
  ['range_order', undefined, 'issue.rangeOrder', () => undefined, 'The start must be before the end.'],
  ['too_many_buckets', { max: 2000 }, 'issue.tooManyBuckets', (l) => ({ max: number(l, 2000) }), 'Too long a range (at most 2,000 points): choose a shorter range or larger steps.'],
  ['cannot_write', { reason: 'Permission denied (os error 13)' }, 'issue.cannotWriteBecause', () => ({ reason: 'Permission denied (os error 13)' }), 'The file could not be written (Permission denied (os error 13)).'],
  ['cannot_write', undefined, 'issue.cannotWrite', () => undefined, 'The file could not be written.'],
  ['unsupported_file', undefined, 'issue.unsupportedFile', () => undefined, 'This is neither an image Keypool takes (PNG, JPEG, WebP, GIF) nor a UTF-8 text file.'],
  ['file_too_large', { max: 20_971_520 }, 'issue.fileTooLarge', () => ({ max: '20' }), 'The file is larger than 20 MB.'],
  ['file_too_large', { max: 524_288 }, 'issue.fileTooLarge', (l) => ({ max: new Intl.NumberFormat(translate(l, 'intl.tag')).format(0.5) }), 'The file is larger than 0.5 MB.'],
  ['image_unreadable', { reason: 'unexpected end of file' }, 'issue.imageUnreadableBecause', () => ({ reason: 'unexpected end of file' }), 'The image cannot be read (unexpected end of file).'],
  ['image_unreadable', undefined, 'issue.imageUnreadable', () => undefined, 'The image cannot be read.'],
  ['host_change', undefined, 'issue.hostChange', () => undefined, 'This would send the provider’s keys to another host: confirm it first.'],
  ['bad_glob', undefined, 'issue.badGlob', () => undefined, translate('en', 'issue.badGlob')],
  ['unknown_provider', undefined, 'issue.unknownProvider', () => undefined, 'No such provider: choose one of the list.'],
  ['token_mismatch', undefined, 'issue.tokenMismatch', () => undefined, translate('en', 'issue.tokenMismatch')],
  ['token_required', undefined, 'issue.tokenRequired', () => undefined, 'Paste the local API’s token: no connected agent holds it yet.'],
  ['local_api_off', undefined, 'issue.localApiOff', () => undefined, 'Turn the local API on first: agents are given its address and token.'],
  ['invalid', undefined, 'issue.invalid', () => undefined, 'This value is not valid.'],
  ['azure_resource_url', undefined, 'error.azureResourceUrl', () => undefined, translate('en', 'error.azureResourceUrl')],
  ['bedrock_region_url', undefined, 'error.bedrockRegionUrl', () => undefined, translate('en', 'error.bedrockRegionUrl')],
];

describe('issues, worded from their code in every language', () => {
  it('covers every issue code the backend has', () => {
    const codes: IssueCode[] = ['required', 'not_null', 'wrong_type', 'unknown_field', 'not_an_object', 'blank', 'too_short', 'too_long', 'too_small', 'too_large', 'key_has_spaces', 'bad_env_name', 'bad_url', 'not_https', 'http_not_local', 'no_host', 'not_a_model', 'ids_mismatch', 'nothing_to_change', 'provider_deleted', 'nothing_to_answer', 'no_models', 'range_order', 'too_many_buckets', 'cannot_write', 'unsupported_file', 'file_too_large', 'image_unreadable', 'host_change', 'bad_glob', 'unknown_provider', 'token_mismatch', 'token_required', 'local_api_off', 'invalid', 'azure_resource_url', 'bedrock_region_url'];
    expect(new Set(ISSUES.map(([code]) => code))).toEqual(new Set(codes));
  });

  for (const locale of LOCALES) {
    it.each(ISSUES)(`${locale}: %s %j`, (code, params, key, vars, english) => {
      const text = issueText(tOf(locale), issue(code, params));
      expect(text).toBe(translate(locale, key, vars(locale)));
      expect(text).not.toContain(ENGLISH);
      if (locale === 'en') expect(text).toBe(english);
      else if (!['too_short', 'too_small'].includes(code)) expect(text, 'translated, not the English').not.toBe(english);
    });
  }

  it('names the field for an issue shown away from it, in the UI’s language', () => {
    expect(issueWithField(tOf('en'), issue('too_large', { max: 100 }, 'weight'))).toBe('Weight: At most 100.');
    expect(issueWithField(tOf('ru'), issue('too_large', { max: 100 }, 'weight'))).toBe('Вес: Не больше 100.');
    expect(issueWithField(tOf('ja'), issue('blank', undefined, 'models[1]'))).toBe('モデル：入力してください。');
    expect(issueWithField(tOf('zh'), issue('required', undefined, 'somethingNew')), 'an unknown field by its path').toBe('somethingNew：此项为必填。');
  });

  it('shows the backend’s words only for a code this build does not know', () => {
    const future = { path: '', code: 'from_the_future' as IssueCode, message: 'a rule added later' };
    expect(issueText(tOf('ja'), future)).toBe('a rule added later');
  });
});

const upstream = (problem: Extract<ErrorDetails, { kind: 'upstream' }>['problem'], status: number | null = null, message = ENGLISH): IpcError =>
  new IpcError('provider', ENGLISH, [], { kind: 'upstream', status, problem, message });

/** [what, the error, the English words, the Russian, the Japanese, the Chinese]. */
const ERRORS: [string, IpcError, string, string, string, string][] = [
  ['validation', new IpcError('validation', ENGLISH, [issue('too_small', { min: 1 }, 'weight'), issue('blank', undefined, 'label')]), 'Weight: At least 1. Label: Enter something here.', 'Вес: Не меньше 1. Название: Заполните это поле.', '重み：1 以上にしてください。 ラベル：入力してください。', '权重：不能小于 1。 标签：请填写此项。'],
  ['not found: chat', new IpcError('not_found', ENGLISH, [], { kind: 'notFound', what: 'chat' }), 'This chat no longer exists.', 'Этого чата больше нет.', 'このチャットはもう存在しません。', '此对话已不存在。'],
  ['not found: key', new IpcError('not_found', ENGLISH, [], { kind: 'notFound', what: 'API key' }), 'This key is no longer in the pool.', 'Этого ключа больше нет в пуле.', 'このキーはもうプールにありません。', '此 Key 已不在 Key 池中。'],
  ['not found: something new', new IpcError('not_found', ENGLISH, [], { kind: 'notFound', what: 'widget' }), 'It no longer exists.', 'Этого больше нет.', 'もう存在しません。', '它已不存在。'],
  ['duplicate key', new IpcError('conflict', ENGLISH, [], { kind: 'conflict', conflict: 'duplicate_key' }), 'This key is already in the provider’s pool.', 'Этот ключ уже есть в пуле провайдера.', 'このキーはすでにプロバイダーのプールにあります。', '此 Key 已在该提供商的 Key 池中。'],
  ['reply in progress', new IpcError('conflict', ENGLISH, [], { kind: 'conflict', conflict: 'reply_in_progress' }), 'A reply is already being written in this chat: wait for it, or stop it.', 'В этом чате уже пишется ответ: дождитесь его или остановите.', 'このチャットではすでに返信を生成中です。終わるのを待つか、停止してください。', '此对话中已有回复正在生成：请等待它完成，或停止它。'],
  ['storage', new IpcError('storage', ENGLISH), 'The database could not be read or written. Details are in the log.', 'Не удалось прочитать или записать базу данных. Подробности — в журнале.', 'データベースの読み書きができませんでした。詳細はログにあります。', '无法读取或写入数据库。详情见日志。'],
  ['no available key', new IpcError('no_available_key', ENGLISH), 'No key is available right now.', 'Сейчас нет доступного ключа.', '今使えるキーがありません。', '当前没有可用的 Key。'],
  ['internal', new IpcError('internal', ENGLISH), 'Something went wrong inside Keypool. Details are in the log.', 'Внутренняя ошибка Keypool. Подробности — в журнале.', 'Keypool の内部で問題が発生しました。詳細はログにあります。', 'Keypool 内部出错。详情见日志。'],
  ['provider, no details', new IpcError('provider', ENGLISH), 'The provider did not answer as expected.', 'Провайдер ответил не так, как ожидалось.', 'プロバイダーから想定どおりの応答がありませんでした。', '提供商的响应不符合预期。'],
  ['upstream: refused, with its words', upstream({ kind: 'refused' }, 401, 'Incorrect API key provided'), 'The provider refused (HTTP 401). The provider said: “Incorrect API key provided”', 'Провайдер отказал (HTTP 401). Ответ провайдера: «Incorrect API key provided»', 'プロバイダーに拒否されました（HTTP 401）。 プロバイダーの応答：「Incorrect API key provided」', '提供商拒绝了请求（HTTP 401）。 提供商的原话：“Incorrect API key provided”'],
  ['upstream: variable not set', upstream({ kind: 'envUnset', var: 'OPENAI_API_KEY' }), 'The environment variable OPENAI_API_KEY is not set.', 'Переменная окружения OPENAI_API_KEY не задана.', '環境変数 OPENAI_API_KEY が設定されていません。', '环境变量 OPENAI_API_KEY 未设置。'],
  ['upstream: redirected', upstream({ kind: 'redirected' }, 302), 'The provider redirected to another address (HTTP 302); no key was sent there.', 'Провайдер перенаправил на другой адрес (HTTP 302); туда ключ не отправлен.', 'プロバイダーが別のアドレスへリダイレクトしました（HTTP 302）。そこへはキーを送っていません。', '提供商重定向到了另一个地址（HTTP 302）；没有向那里发送 Key。'],
  ['upstream: unreadable', upstream({ kind: 'unreadable' }, 200), 'The provider’s answer could not be read.', 'Не удалось прочитать ответ провайдера.', 'プロバイダーの応答を読み取れませんでした。', '无法读取提供商的响应。'],
  ['upstream: out of credit', upstream({ kind: 'outOfCredit' }, 429), 'The key is out of credit.', 'На ключе закончился баланс.', 'このキーはクレジットが尽きています。', '此 Key 额度已用尽。'],
  ['upstream: no connection', upstream({ kind: 'unreachable', breakage: 'connect' }), 'Could not connect to the provider.', 'Не удалось подключиться к провайдеру.', 'プロバイダーに接続できませんでした。', '无法连接到提供商。'],
];

describe('errors, worded from code and details in every language', () => {
  it.each(ERRORS)('%s', (_what, error, en, ru, ja, zh) => {
    const expected: Record<Locale, string> = { en, ru, ja, zh };
    for (const locale of LOCALES) {
      const text = errorText(tOf(locale), error);
      expect(text, locale).toBe(expected[locale]);
      expect(text, `${locale}: no backend English`).not.toContain(ENGLISH);
    }
  });

  it('words every way a connection can break', () => {
    const kinds: BreakageKind[] = ['connect', 'timeout', 'body', 'request', 'not_json', 'no_text', 'ended_early', 'stream', 'too_large', 'prompt_blocked', 'reply_blocked'];
    for (const locale of LOCALES) {
      const texts = kinds.map((breakage) => probeText(tOf(locale), { kind: 'unreachable', breakage }, null, ENGLISH));
      expect(new Set(texts).size, `${locale}: each breakage has its own words`).toBe(kinds.length);
      for (const text of texts) expect(text).not.toContain(ENGLISH);
    }
  });

  it('shows the backend’s words only for an error code this build does not know, or a thrown non-error', () => {
    expect(errorText(tOf('ru'), new IpcError('from_the_future' as IpcError['code'], 'new words'))).toBe('new words');
    expect(errorText(tOf('en'), new Error('boom'))).toBe('Something unexpected went wrong.');
  });
});

const NOW = Date.UTC(2026, 10, 29, 18, 48, 3);
const clock = (locale: Locale) => ({ now: NOW, intlTag: translate(locale, 'intl.tag') });
const at = (locale: Locale, time: number) => formatClockTime(time, NOW, translate(locale, 'intl.tag'));

/** The example the issue gives: one key free again in 9:58, one disabled after a 401. */
const BUSY: ReplyError = {
  kind: 'allBlocked',
  provider: 'Fake',
  keys: [
    { name: 'key A', state: 'cooling', until: NOW + 598_000, status: null, tried: true },
    { name: 'key B', state: 'disabled', until: null, status: 401, tried: true },
  ],
  firstFreeAt: NOW + 598_000,
  last: { status: 429, message: 'Rate limit reached' },
};

describe('failed replies, worded from their kind, with countdowns and local times', () => {
  it('words “all keys busy” as the issue asks, in every language', () => {
    expect(replyErrorText(tOf('en'), BUSY, clock('en'))).toBe(
      'All keys are busy: key A is free again in 9:58; key B was disabled after a 401. The last answer was HTTP 429. The provider said: “Rate limit reached”',
    );
    expect(replyErrorText(tOf('ru'), BUSY, clock('ru'))).toBe(
      'Все ключи заняты: key A освободится через 9:58; key B отключён после ошибки 401. Последний ответ — HTTP 429. Ответ провайдера: «Rate limit reached»',
    );
    expect(replyErrorText(tOf('ja'), BUSY, clock('ja'))).toBe(
      'すべてのキーが使用中です：key A はあと 9:58 で空きます、key B は 401 の後に無効になりました。 最後の応答は HTTP 429 でした。 プロバイダーの応答：「Rate limit reached」',
    );
    expect(replyErrorText(tOf('zh'), BUSY, clock('zh'))).toBe(
      '所有 Key 都不可用：key A 将在 9:58 后空闲；key B 因 401 已被停用。 最后一次响应为 HTTP 429。 提供商的原话：“Rate limit reached”',
    );
  });

  it('says every key is disabled, and the way out, and whether the provider-level key was tried', () => {
    const dead: ReplyError = {
      kind: 'allBlocked',
      provider: 'OpenRouter',
      keys: [
        { name: 'a', state: 'disabled', until: null, status: 401, tried: false },
        { name: 'b', state: 'disabled', until: null, status: 401, tried: false },
      ],
      firstFreeAt: null,
      last: null,
    };
    expect(replyErrorText(tOf('en'), dead, clock('en'))).toBe(
      'Every key of OpenRouter is disabled: a was disabled after a 401; b was disabled after a 401. Test them, replace them or turn them on in Settings → Providers.',
    );
    expect(replyErrorText(tOf('en'), dead, clock('en'), { apiKeyPreview: 'sk-or…1234' })).toMatch(/ Its provider-level key was not tried: it is used only while the pool holds no keys\.$/);
    expect(replyErrorText(tOf('en'), dead, clock('en'), { apiKeyPreview: null }), 'no provider-level key: nothing to say of it').not.toMatch(/provider-level/);
    for (const locale of LOCALES) expect(replyErrorText(tOf(locale), dead, clock(locale)), locale).toContain('OpenRouter');
  });

  it('counts down: a cooling key that is free by now says so', () => {
    const later = { now: NOW + 600_000, intlTag: 'en' };
    expect(replyErrorText(tOf('en'), BUSY, later)).toMatch(/^All keys are busy: key A is free again; key B/);
  });

  it('words every state a blocked key can be in, and when the first frees up', () => {
    const error: ReplyError = {
      kind: 'allBlocked',
      provider: 'Fake',
      keys: [
        { name: 'a', state: 'tried', until: null, status: null, tried: true },
        { name: 'b', state: 'spent', until: NOW + 65_000, status: null, tried: false },
        { name: 'c', state: 'busy', until: null, status: null, tried: false },
        { name: 'd', state: 'disabled', until: null, status: null, tried: false },
        { name: 'e', state: 'exhausted', until: NOW + 3_600_000, status: null, tried: false },
        { name: 'f', state: 'cooling', until: NOW + 5_000, status: null, tried: false },
      ],
      firstFreeAt: NOW + 5_000,
      last: null,
    };
    expect(replyErrorText(tOf('en'), error, clock('en'))).toBe(
      `All keys are busy: a was tried for this reply and failed; b has used up its limit, refilled in 1:05; c is busy with other replies; d is switched off; e is out of credit (next check at ${at('en', NOW + 3_600_000)}); f is free again in 0:05. The first one is free again at ${at('en', NOW + 5_000)}.`,
    );
    for (const locale of LOCALES) {
      const text = replyErrorText(tOf(locale), error, clock(locale));
      for (const name of ['a', 'b', 'c', 'd', 'e', 'f']) expect(text, `${locale} names ${name}`).toMatch(new RegExp(`(^|[：: ;；、])${name}[ :：]`));
      expect(text, `${locale}: local times`).toContain(at(locale, NOW + 3_600_000));
    }
  });

  it('says a model whose day is used up is so until the day ends, in local time, in every language', () => {
    const dayEnd = NOW + 14 * 3_600_000;
    const error: ReplyError = {
      kind: 'allBlocked',
      provider: 'Google Gemini',
      keys: [
        { name: 'a', state: 'used_up', until: dayEnd, status: null, tried: true },
        { name: 'b', state: 'used_up', until: null, status: null, tried: false },
      ],
      firstFreeAt: dayEnd,
      last: null,
    };
    expect(replyErrorText(tOf('en'), error, clock('en'))).toBe(`All keys are busy: a: daily quota used up until ${at('en', dayEnd)}; b: daily quota used up.`);
    const words: Record<Locale, string> = {
      en: 'daily quota used up until',
      ru: 'дневная квота исчерпана до',
      ja: '1日のクォータを使い切りました',
      zh: '每日配额已用完',
    };
    for (const locale of LOCALES) {
      const text = replyErrorText(tOf(locale), error, clock(locale));
      expect(text, locale).toContain(words[locale]);
      expect(text, `${locale}: the day's end as a local time, not a countdown`).toContain(at(locale, dayEnd));
      expect(text, `${locale}: not a spent window`).not.toContain(translate(locale, 'blocked.spentNoTime', { name: 'a' }));
    }
    const tomorrow = { now: dayEnd, intlTag: 'en' };
    expect(replyErrorText(tOf('en'), error, tomorrow), 'a new day: free again').toMatch(/^All keys are busy: a is free again; b/);
  });

  it('says a safety block is the provider’s filter, not an answer without text', () => {
    for (const locale of LOCALES) {
      const t = tOf(locale);
      const prompt = replyErrorText(t, { kind: 'unreachable', breakage: 'prompt_blocked' }, clock(locale));
      const reply = replyErrorText(t, { kind: 'interrupted', breakage: 'reply_blocked' }, clock(locale));
      const noText = replyErrorText(t, { kind: 'unreachable', breakage: 'no_text' }, clock(locale));
      expect(prompt, locale).toBe(translate(locale, 'breakage.promptBlocked'));
      expect(reply, locale).toBe(`${translate(locale, 'reply.interrupted')} ${translate(locale, 'breakage.replyBlocked')}`);
      expect(new Set([prompt, noText]).size, `${locale}: its own words`).toBe(2);
    }
    expect(replyErrorText(tOf('en'), { kind: 'unreachable', breakage: 'prompt_blocked' }, clock('en'))).toBe(
      'The provider’s safety filter blocked the prompt: no reply was written.',
    );
  });

  /** [kind, the error, the English words]; each must be worded in every language from its own key. */
  const REPLIES: [string, ReplyError, string][] = [
    ['noKeys', { kind: 'noKeys', provider: 'Fake' }, 'Fake has no API keys: add one in Settings → Providers.'],
    ['providerKeyUnresolved', { kind: 'providerKeyUnresolved', provider: 'Fake', var: 'FAKE_KEY' }, 'The pool of Fake is empty and its provider-level key reads the environment variable FAKE_KEY, which is not set.'],
    ['keyUnresolved', { kind: 'keyUnresolved', key: 'prod', var: 'PROD_KEY' }, 'prod reads the environment variable PROD_KEY, which is not set.'],
    ['refused', { kind: 'refused', status: 400, message: 'model not found' }, 'The provider refused the request (HTTP 400). The provider said: “model not found”'],
    ['imagesRefused', { kind: 'imagesRefused', status: 400, message: 'Invalid content type.' }, 'The model refused the request with images (HTTP 400): it probably does not take images. Choose a model that does, or send the message without them. The key was not affected. The provider said: “Invalid content type.”'],
    ['redirected', { kind: 'redirected', status: 301 }, 'The provider redirected the request to another address (HTTP 301); Keypool sent no key there.'],
    ['unreachable', { kind: 'unreachable', breakage: 'timeout' }, 'The provider did not answer in time.'],
    ['interrupted by the connection', { kind: 'interrupted', breakage: 'ended_early' }, 'The reply broke off; the text so far is kept. The provider’s answer ended before it was complete.'],
    ['interrupted by a refusal', { kind: 'interrupted', status: 529, message: 'Overloaded' }, 'The reply broke off; the text so far is kept. The provider refused the request (HTTP 529). The provider said: “Overloaded”'],
    ['storage', { kind: 'storage' }, 'The pool’s keys could not be read from the database. Details are in the log.'],
    ['other (saved before codes)', { kind: 'other', message: 'old English words' }, 'old English words'],
  ];

  it.each(REPLIES)('%s', (_kind, error, english) => {
    expect(replyErrorText(tOf('en'), error, clock('en'))).toBe(english);
    for (const locale of LOCALES.filter((l) => l !== 'en')) {
      const text = replyErrorText(tOf(locale), error, clock(locale));
      if (error.kind === 'other') expect(text, 'an old row keeps what it was saved with').toBe(english);
      else expect(text, `${locale} is not English`).not.toBe(english);
    }
  });
});
