import { formatCountdown } from '../../clock';
import { useCountdown } from '../../hooks/useCountdown';
import { useI18n } from '../../i18n/I18nProvider';
import type { Message } from '../../ipc/bindings';
import { answeredByProviderKey, type Conversation, type Notice, type Waiting } from './conversation';

interface Props {
  conversation: Conversation;
  onRetry: () => void;
  onOpenSettings: () => void;
}

/** The messages, the reply being written, and the quiet notices about keys. */
export function Messages({ conversation, onRetry, onOpenSettings }: Props) {
  const { t } = useI18n();
  const { messages, streaming } = conversation;
  const last = messages[messages.length - 1];

  return (
    <ol className="messages" aria-label={t('chat.messages')}>
      {messages.map((message) =>
        message.role === 'user' ? (
          <li key={message.id} className="message message--user" data-testid="message" data-role="user">
            <span className="visually-hidden">{t('chat.you')}: </span>
            <div className="message__content" data-testid="message-content">
              {message.content}
            </div>
          </li>
        ) : (
          <li key={message.id} className={`message message--assistant message--${message.status}`} data-testid="message" data-role="assistant" data-status={message.status}>
            <Notices notices={conversation.notices[message.id] ?? []} />
            <span className="visually-hidden">{t('chat.assistant')}: </span>
            {message.content && (
              <div className="message__content" data-testid="message-content">
                {message.content}
              </div>
            )}
            {message.status === 'error' && (
              <ReplyError message={message} canRetry={message === last} onRetry={onRetry} onOpenSettings={onOpenSettings} />
            )}
            <p className="message__meta" data-testid="message-meta">
              {message.keyLabel && (
                <span data-testid="message-key">
                  {answeredByProviderKey(message) ? t('chat.answeredByProvider') : t('chat.answeredBy', { key: message.keyLabel })}
                </span>
              )}
              {message.status === 'stopped' && (
                <span className="tag" data-testid="message-stopped">
                  {t('chat.stopped')}
                </span>
              )}
            </p>
          </li>
        ),
      )}
      {streaming && (
        <li className="message message--assistant message--streaming" data-testid="streaming-reply" aria-busy="true">
          <Notices notices={streaming.notices} />
          <div className="message__content" data-testid="streaming-content">
            {streaming.text}
            <span className="message__caret" aria-hidden="true" />
          </div>
          {streaming.waiting ? (
            <WaitingLine waiting={streaming.waiting} />
          ) : (
            <p className="message__meta" data-testid="streaming-key">
              {streaming.keyLabel === null
                ? t('chat.selectingKey')
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
        <li key={i} className="notice" data-testid="chat-notice" data-kind={notice.kind} title={notice.kind === 'failover' ? notice.message : undefined}>
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
      return next ? t('chat.notice.rateLimited', vars) : t('chat.notice.rateLimitedNoNext', vars);
  }
}

function ReplyError({ message, canRetry, onRetry, onOpenSettings }: { message: Message; canRetry: boolean; onRetry: () => void; onOpenSettings: () => void }) {
  const { t } = useI18n();
  return (
    <div className="message__error" role="alert" data-testid="message-error">
      <p>
        <strong>{t('chat.failed')}</strong> {message.error}
      </p>
      <div className="message__error-actions">
        {canRetry && (
          <button type="button" className="button" onClick={onRetry} data-testid="chat-retry">
            {t('chat.retry')}
          </button>
        )}
        {message.errorCode === 'no_available_key' && (
          <button type="button" className="link-button" onClick={onOpenSettings} data-testid="chat-open-settings">
            {t('chat.openSettings')}
          </button>
        )}
      </div>
    </div>
  );
}
