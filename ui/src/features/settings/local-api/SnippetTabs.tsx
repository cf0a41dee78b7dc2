import { useId, useRef, useState } from 'react';
import { CopyButton } from '../../../components/CopyButton';
import { useI18n } from '../../../i18n/I18nProvider';
import type { Snippet, SnippetId } from './snippets';

/**
 * The examples as tabs: one tab per SDK and one for environment variables, the chosen one's code
 * below with a Copy button. Arrow keys, Home and End move between tabs (the ARIA tabs pattern:
 * only the chosen tab is in the Tab order).
 */
export function SnippetTabs({ items }: { items: Snippet[] }) {
  const { t } = useI18n();
  const baseId = useId();
  const [chosen, setChosen] = useState<SnippetId>(items[0].id);
  const tabs = useRef(new Map<SnippetId, HTMLButtonElement>());
  const current = items.find((s) => s.id === chosen) ?? items[0];
  const tabId = (id: SnippetId) => `${baseId}-tab-${id}`;
  const panelId = `${baseId}-panel`;

  function onKeyDown(event: React.KeyboardEvent) {
    const index = items.findIndex((s) => s.id === current.id);
    const next =
      event.key === 'ArrowRight' ? (index + 1) % items.length
      : event.key === 'ArrowLeft' ? (index - 1 + items.length) % items.length
      : event.key === 'Home' ? 0
      : event.key === 'End' ? items.length - 1
      : null;
    if (next === null) return;
    event.preventDefault();
    setChosen(items[next].id);
    tabs.current.get(items[next].id)?.focus();
  }

  const name = t(`localApi.snippet.${current.id}`);
  return (
    <div className="snippets">
      <div role="tablist" aria-label={t('localApi.snippets')} className="snippets__tabs" onKeyDown={onKeyDown}>
        {items.map((s) => (
          <button
            key={s.id}
            ref={(node) => {
              if (node) tabs.current.set(s.id, node);
              else tabs.current.delete(s.id);
            }}
            id={tabId(s.id)}
            type="button"
            role="tab"
            className="snippets__tab"
            aria-selected={s.id === current.id}
            aria-controls={panelId}
            tabIndex={s.id === current.id ? 0 : -1}
            onClick={() => setChosen(s.id)}
            data-testid={`local-api-snippet-tab-${s.id}`}
          >
            {t(`localApi.snippet.${s.id}`)}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={panelId} aria-labelledby={tabId(current.id)} className="code-block snippets__panel" data-testid="local-api-snippet" data-snippet={current.id}>
        <div className="code-block__bar">
          <span className="code-block__language">{current.language}</span>
          <CopyButton text={() => current.code} label={t('localApi.copySnippet', { name })} className="button button--small code-block__copy" testId="local-api-snippet-copy" />
        </div>
        {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a long line scrolls sideways; the keyboard must reach it to scroll */}
        <pre className="code-block__pre" tabIndex={0} data-testid="local-api-snippet-code">
          <code>{current.code}</code>
        </pre>
      </div>
    </div>
  );
}
