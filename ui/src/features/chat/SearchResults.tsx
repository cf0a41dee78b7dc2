import { useI18n } from '../../i18n/I18nProvider';
import { errorText } from '../../i18n/problems';
import type { SearchState } from './useChatSearch';

interface Props {
  query: string;
  state: SearchState;
  selectedId: string | null;
  /** Opens the chat, at the matching message when there is one. */
  onOpen: (chatId: string, messageId: string | null) => void;
}

/** The chats a search found: the title (the query marked) and the first matching message, cut around it. */
export function SearchResults({ query, state, selectedId, onOpen }: Props) {
  const { t } = useI18n();
  if (state.kind === 'off') return null;
  if (state.kind === 'failed') {
    return (
      <p className="form-error" role="alert" data-testid="chat-search-error">
        {t('search.failed', { message: errorText(t, state.error) })}
      </p>
    );
  }
  const results = state.results;
  return (
    <div className="search-results" data-testid="chat-search-results">
      <p className="muted search-results__count" role="status" data-testid="chat-search-status">
        {results === null ? t('search.searching') : results.length === 0 ? t('search.none', { query: query.trim() }) : t('search.count', { count: results.length })}
      </p>
      {results && results.length > 0 && (
        <ul className="chat-list" aria-label={t('search.label')}>
          {results.map((result) => (
            <li key={result.chat.id} className="chat-list__item" aria-current={result.chat.id === selectedId ? 'true' : undefined}>
              <button
                type="button"
                className="chat-list__select search-result"
                onClick={() => onOpen(result.chat.id, result.snippet?.messageId ?? null)}
                data-testid="chat-search-result"
                data-chat-id={result.chat.id}
              >
                <span className="chat-list__title">{result.inTitle ? <Marked text={result.chat.title} query={query.trim()} /> : result.chat.title}</span>
                {result.snippet && (
                  <span className="search-result__snippet" data-testid="chat-search-snippet">
                    {result.snippet.before}
                    <mark>{result.snippet.matched}</mark>
                    {result.snippet.after}
                  </span>
                )}
                {result.messageCount > 1 && <span className="search-result__count">{t('search.messages', { count: result.messageCount })}</span>}
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** `text` with each occurrence of `query` (any case) marked. */
export function Marked({ text, query }: { text: string; query: string }) {
  const parts = markedParts(text, query);
  return (
    <>
      {parts.map((part, i) =>
        // biome-ignore lint/suspicious/noArrayIndexKey: the parts of one string, in order; they have no identity of their own
        part.marked ? <mark key={i}>{part.text}</mark> : <span key={i}>{part.text}</span>,
      )}
    </>
  );
}

/** Cuts `text` at each occurrence of `query`, ignoring case. Pure. */
export function markedParts(text: string, query: string): { text: string; marked: boolean }[] {
  const needle = query.toLowerCase();
  if (!needle) return [{ text, marked: false }];
  const haystack = text.toLowerCase();
  // Lower-casing may change lengths (rare scripts); then mark nothing rather than the wrong letters.
  if (haystack.length !== text.length) return [{ text, marked: false }];
  const parts: { text: string; marked: boolean }[] = [];
  let from = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) {
    if (at > from) parts.push({ text: text.slice(from, at), marked: false });
    parts.push({ text: text.slice(at, at + needle.length), marked: true });
    from = at + needle.length;
  }
  if (from < text.length) parts.push({ text: text.slice(from), marked: false });
  return parts;
}
