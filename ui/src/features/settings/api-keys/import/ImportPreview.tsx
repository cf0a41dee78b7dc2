import { useEffect, useRef, useState } from 'react';
import { useI18n } from '../../../../i18n/I18nProvider';
import { formatNumber } from '../../../../i18n/problems';
import type { ImportKeyPreview, KeyImportPreview } from '../../../../ipc/bindings';

/** Keys listed at first; "Show more" lists this many more each time. */
const FIRST_LISTED = 50;
const MORE_LISTED = 200;
/** Unrecognised line numbers named; the count says the rest. */
const LINES_LISTED = 12;

interface Props {
  preview: KeyImportPreview;
  /** The new keys the user kept (the preview's, less those removed). */
  kept: ImportKeyPreview[];
  leftOutCount: number;
  onRemove: (index: number) => void;
  onPutBack: () => void;
  /** After a removal or a put-back: the row (by index) whose Remove takes the focus; `null`: none. */
  refocus: { index: number | null } | null;
  /** Names its counts (Import describes itself by them). */
  id: string;
}

/**
 * What the backend found in the text, before anything is sent or saved: the counts, and every key
 * that would be sent to the provider and saved, masked, each with its Remove.
 */
export function ImportPreview({ preview, kept, leftOutCount, onRemove, onPutBack, refocus, id }: Props) {
  const { t } = useI18n();
  const [listed, setListed] = useState(FIRST_LISTED);
  const section = useRef<HTMLElement>(null);
  const lines = preview.unrecognisedLines;

  // The focus stays in the list as rows leave it: on the next row's Remove, or on Put back when
  // none is left.
  useEffect(() => {
    if (!refocus) return;
    const root = section.current;
    const target = refocus.index === null ? root?.querySelector<HTMLElement>('[data-testid="import-put-back"]') : root?.querySelector<HTMLElement>(`[data-key-index="${refocus.index}"]`);
    target?.focus();
  }, [refocus]);

  return (
    <section ref={section} className="import-preview" aria-labelledby={`${id}-title`} data-testid="import-preview">
      <h3 id={`${id}-title`} className="import-preview__title">
        {t('import.preview')}
      </h3>
      <ul id={id} className="import-preview__counts" aria-live="polite">
        <li data-testid="import-found">{t('import.found', { count: formatNumber(t, preview.found) })}</li>
        <li data-testid="import-new">{t('import.new', { count: formatNumber(t, kept.length) })}</li>
        <li data-testid="import-dup-paste">{t('import.dupPaste', { count: formatNumber(t, preview.duplicatesInPaste) })}</li>
        <li data-testid="import-dup-pool">{t('import.dupPool', { count: formatNumber(t, preview.duplicatesInPool) })}</li>
        <li data-testid="import-unrecognised">
          {t('import.unrecognised', { count: formatNumber(t, lines.length) })}
          {lines.length > 0 && (
            <>
              {' '}
              <span className="muted">
                ({t('import.unrecognisedLines', { count: Math.min(lines.length, LINES_LISTED), lines: lines.slice(0, LINES_LISTED).join(', ') })}
                {lines.length > LINES_LISTED ? `, ${t('import.more', { count: lines.length - LINES_LISTED })}` : ''})
              </span>
            </>
          )}
        </li>
      </ul>
      {preview.new.length === 0 ? (
        <p className="muted" data-testid="import-no-new">
          {t('import.noNew')}
        </p>
      ) : (
        <>
          <p id={`${id}-list`} className="import-preview__list-title">
            {t('import.toSend')}
          </p>
          <ol className="import-preview__keys" aria-labelledby={`${id}-list`} data-testid="import-new-keys">
            {kept.slice(0, listed).map((key) => (
              <li key={key.index} className="import-preview__key" data-testid="import-new-key">
                <code>{key.preview}</code>
                <button
                  type="button"
                  className="button button--small button--quiet"
                  aria-label={t('import.remove', { key: key.preview })}
                  onClick={() => onRemove(key.index)}
                  data-key-index={key.index}
                  data-testid="import-remove-key"
                >
                  {t('import.removeShort')}
                </button>
              </li>
            ))}
          </ol>
          {kept.length > listed && (
            <button type="button" className="button button--small" onClick={() => setListed((n) => n + MORE_LISTED)} data-testid="import-show-more">
              {t('import.showMore', { count: formatNumber(t, Math.min(MORE_LISTED, kept.length - listed)), rest: formatNumber(t, kept.length - listed) })}
            </button>
          )}
          {leftOutCount > 0 && (
            <p className="import-preview__left-out" data-testid="import-left-out">
              {t('import.leftOut', { count: formatNumber(t, leftOutCount) })}{' '}
              <button type="button" className="button button--small" onClick={onPutBack} data-testid="import-put-back">
                {t('import.putBack')}
              </button>
            </p>
          )}
        </>
      )}
    </section>
  );
}
