import { useI18n } from '../../i18n/I18nProvider';

/** The chat page. Conversations arrive with the chat feature; this is its frame. */
export function ChatPage() {
  const { t } = useI18n();
  return (
    <section className="chat" aria-labelledby="chat-title" data-testid="chat-page">
      <header className="page__header">
        <h1 id="chat-title">{t('chat.title')}</h1>
      </header>
      <div className="empty-state">
        <h2>{t('chat.emptyTitle')}</h2>
        <p>{t('chat.emptyBody')}</p>
      </div>
    </section>
  );
}
