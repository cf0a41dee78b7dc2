import { formatCountdown } from '../../clock';
import { CopyButton } from '../../components/CopyButton';
import { Icon } from '../../components/Icon';
import { useBackendNow, useCountdown } from '../../hooks/useCountdown';
import { useI18n } from '../../i18n/I18nProvider';
import { errorText, formatNumber, keylessServerDown, keylessServerDownText, type ReplyProvider, replyErrorDeadlines, replyErrorNeedsSettings, replyErrorText } from '../../i18n/problems';
import type { Message, MessageUsage } from '../../ipc/bindings';
import { IpcError } from '../../ipc/client';
import { answeredByProviderKey, editable, regenerable, type Conversation, type Notice, type Waiting } from './conversation';
import { Markdown } from './markdown/LazyMarkdown';
import type { Span } from './messageWindow';
import { UserMessage } from './UserMessage';

interface Props {
  conversation: Conversation;
  /** The messages on the page (MessageScroller's window); the reply being written shows when it reaches the end. All when absent. */
  span?: Span;
  /** Answers the last user message again: retry a failed reply, regenerate a good one. */
  onAnswerAgain: () => void;
  /** Rewrites the last user message and sends it; resolves whether it was sent. */
  onEdit: (content: string) => Promise<boolean>;
  onOpenSettings: () => void;
  /** The chat's provider, to say why a request that went without a key failed. */
  provider?: ReplyProvider;
}

/** The messages, the reply being written, and the quiet notices about keys. */
export function Messages({ conversation, span, onAnswerAgain, onEdit, onOpenSettings, provider }: Props) {
  const { t } = useI18n();
  const { messages } = conversation;
  const last = messages[messages.length - 1];
  const shown = span ? messages.slice(span.start, span.end) : messages;
  const streaming = !span || span.end === messages.length ? conversation.streaming : null;
  const editableId = editable(conversation)?.id;
  const regenerableId = regenerable(conversation)?.id;

  return (
    <ol className="messages" aria-label={t('chat.messages')}>
      {shown.map((message) =>
        message.role === 'user' ? (
          <UserMessage key={message.id} message={message} editable={message.id === editableId} onEdit={onEdit} />
        ) : (
          <li key={message.id} className={`message message--assistant message--${message.status}`} data-testid="message" data-role="assistant" data-status={message.status} data-message-id={message.id}>
            <Notices notices={conversation.notices[message.id] ?? []} />
            <span className="visually-hidden">{t('chat.assistant')}: </span>
            {message.content && (
              <div className="message__content message__content--markdown" data-testid="message-content">
                <Markdown source={message.content} />
              </div>
            )}
            {message.status === 'error' && (
              <ReplyError message={message} canRetry={message === last} onRetry={onAnswerAgain} onOpenSettings={onOpenSettings} provider={provider} />
            )}
            <div className="message__meta" data-testid="message-meta">
              {message.keyLabel && (
                <span data-testid="message-key">
                  {answeredByProviderKey(message) ? t('chat.answeredByProvider') : t('chat.answeredBy', { key: message.keyLabel })}
                </span>
              )}
              {message.usage && <ReplyUsage usage={message.usage} />}
              {message.status === 'stopped' && (
                <span className="tag" data-testid="message-stopped">
                  {t('chat.stopped')}
                </span>
              )}
              {message.content && (
                <span className="message__actions">
                  <CopyButton text={() => message.content} label={t('chat.copyReply')} className="button button--small button--quiet" testId="message-copy" />
                  {message.id === regenerableId && (
                    <button type="button" className="button button--small button--quiet" onClick={onAnswerAgain} data-testid="message-regenerate">
                      <Icon name="regenerate" size={14} />
                      {t('chat.regenerate')}
                    </button>
                  )}
                </span>
              )}
            </div>
          </li>
        ),
      )}
      {streaming && (
        <li className="message message--assistant message--streaming" data-testid="streaming-reply" aria-busy="true">
          <Notices notices={streaming.notices} />
          <div className="message__content message__content--markdown" data-testid="streaming-content">
            <Markdown source={streaming.text} streaming />
            <span className="message__caret" aria-hidden="true" />
          </div>
          {streaming.waiting ? (
            <WaitingLine waiting={streaming.waiting} />
          ) : (
            <p className="message__meta" data-testid="streaming-key">
              {streaming.keyLabel === null
                ? t('chat.selectingKey')
                : streaming.keyless
                  ? t('chat.writingKeyless')
                  : streaming.providerLevel
                    ? t('chat.writingProvider')
                    : t('chat.writing', { key: streaming.keyLabel })}
            </p>
          )}
        </li>
      )}
    </ol>
  );
}

/**
 * What a reply cost in tokens, and how much of its prompt the provider's cache served: the proof
 * that keeping the chat on one key keeps the cache warm ("cached 5 of 11 input tokens").
 */
function ReplyUsage({ usage }: { usage: MessageUsage }) {
  const { t } = useI18n();
  const n = (value: number) => formatNumber(t, value);
  return (
    <span data-testid="message-usage" data-cached={usage.cachedTokens} data-input={usage.inputTokens} data-output={usage.outputTokens}>
      {usage.cachedTokens > 0
        ? t('chat.usageCached', { cached: n(usage.cachedTokens), input: n(usage.inputTokens), output: n(usage.outputTokens) })
        : t('chat.usage', { input: n(usage.inputTokens), output: n(usage.outputTokens) })}
    </span>
  );
}

/**
 * Every key is spent, cooling or busy: the reply waits, counting down on the backend's clock to
 * when a key frees up, or (waiting for a request in flight to end) to the most it will wait.
 */
function WaitingLine({ waiting }: { waiting: Waiting }) {
  const { t } = useI18n();
  const left = useCountdown(waiting.until ?? waiting.deadline, waiting.offset);
  const time = formatCountdown(left);
  return (
    // role="timer": a countdown that screen readers do not announce every second.
    <p className="message__meta message__waiting" role="timer" data-testid="chat-waiting" data-until={waiting.until === null ? 'busy' : 'known'}>
      {waiting.until === null ? t('chat.waitingBusy', { time }) : t('chat.waiting', { time })}
    </p>
  );
}

function Notices({ notices }: { notices: Notice[] }) {
  const { t } = useI18n();
  if (notices.length === 0) return null;
  return (
    <ul className="notices">
      {notices.map((notice, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: a reply's notices are only appended (the last one may gain its next key), so an index names the same notice on every render
        <li key={i} className="notice" data-testid="chat-notice" data-kind={notice.kind} title={notice.kind === 'failover' && notice.message ? t('provider.said', { message: notice.message }) : undefined}>
          {noticeText(notice, t)}
        </li>
      ))}
    </ul>
  );
}

export function noticeText(notice: Notice, t: ReturnType<typeof useI18n>['t']): string {
  if (notice.kind === 'rebound') return t('chat.notice.rebound', { key: notice.keyLabel });
  const vars = { key: notice.keyLabel, status: notice.status, next: notice.nextKeyLabel ?? '' };
  const next = notice.nextKeyLabel !== null;
  switch (notice.reason) {
    case 'auth_rejected':
      return next ? t('chat.notice.authRejected', vars) : t('chat.notice.authRejectedNoNext', vars);
    case 'quota_exhausted':
      return next ? t('chat.notice.quotaExhausted', vars) : t('chat.notice.quotaExhaustedNoNext', vars);
    case 'rate_limited':
      if (notice.sameKey) return t('chat.notice.rateLimitedWaited', vars);
      return next ? t('chat.notice.rateLimited', vars) : t('chat.notice.rateLimitedNoNext', vars);
  }
}

/**
 * A failed reply, worded from its error's kind and parameters: which key frees up when (a live
 * countdown on the backend clock), which were disabled and why, what the provider said.
 */
function ReplyError({
  message,
  canRetry,
  onRetry,
  onOpenSettings,
  provider,
}: {
  message: Message;
  canRetry: boolean;
  onRetry: () => void;
  onOpenSettings: () => void;
  provider?: ReplyProvider;
}) {
  const { t, intlTag } = useI18n();
  const error = message.errorDetails;
  // Times in errors are the backend's; the UI runs on the same machine, so its clock is the same.
  const now = useBackendNow(0, error ? replyErrorDeadlines(error) : []);
  // Without details (never from this backend) the code still words it; the English only as a last resort.
  // A request that went without a key to a local server that is not running: what to start.
  const text = error
    ? provider && keylessServerDown(error, provider)
      ? keylessServerDownText(t, provider)
      : replyErrorText(t, error, { now, intlTag }, provider)
    : message.errorCode
      ? errorText(t, new IpcError(message.errorCode, message.error ?? ''))
      : (message.error ?? '');
  return (
    <div className="message__error" role="alert" data-testid="message-error" data-kind={error?.kind}>
      <p>
        <strong>{t('chat.failed')}</strong> <span data-testid="message-error-text">{text}</span>
      </p>
      <div className="message__error-actions">
        {canRetry && (
          <button type="button" className="button" onClick={onRetry} data-testid="chat-retry">
            {t('chat.retry')}
          </button>
        )}
        {replyErrorNeedsSettings(error, message.errorCode) && (
          <button type="button" className="link-button" onClick={onOpenSettings} data-testid="chat-open-settings">
            {t('chat.openSettings')}
          </button>
        )}
      </div>
    </div>
  );
}
