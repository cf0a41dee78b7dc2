import { Icon } from '../../components/Icon';
import { useI18n } from '../../i18n/I18nProvider';
import type { Chat, Provider } from '../../ipc/bindings';

interface Props {
  chat: Chat;
  provider: Provider | undefined;
  canExport: boolean;
  onSystemPrompt: () => void;
  onExport: () => void;
}

/** The chosen conversation's title, provider and model, and its tools (system prompt, export). */
export function ConversationHeader({ chat, provider, canExport, onSystemPrompt, onExport }: Props) {
  const { t } = useI18n();
  return (
    <header className="conversation__header">
      <div className="conversation__heading">
        <h2 data-testid="conversation-title">{chat.title}</h2>
        <p className="muted" data-testid="conversation-model">
          {provider ? t('chat.providerModel', { provider: provider.name, model: chat.model }) : chat.model}
          {chat.systemPrompt && (
            <span className="tag conversation__prompt-tag" title={chat.systemPrompt} data-testid="conversation-has-prompt">
              {t('systemPrompt.set')}
            </span>
          )}
        </p>
      </div>
      <div className="conversation__tools">
        <button type="button" className="button button--small" aria-haspopup="dialog" onClick={onSystemPrompt} data-testid="chat-system-prompt">
          <Icon name="prompt" size={16} />
          {t('systemPrompt.button')}
        </button>
        <button type="button" className="button button--small" onClick={onExport} disabled={!canExport} data-testid="chat-export">
          <Icon name="download" size={16} />
          {t('chat.export')}
        </button>
      </div>
    </header>
  );
}
