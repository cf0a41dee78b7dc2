import { useI18n } from '../../../i18n/I18nProvider';
import { formatNumber } from '../../../i18n/problems';
import type { KeyImportPreview } from '../../../ipc/bindings';

/** New keys listed by preview in the dialog; the count says how many more there are. */
const PREVIEW_LISTED = 20;
/** Unrecognised line numbers named; the count says the rest. */
const LINES_LISTED = 12;

/** What the backend found in the text, before anything is saved. `id` names its counts (Import describes itself by them). */
export function ImportPreview({ preview, id }: { preview: KeyImportPreview; id: string }) {
  const { t } = useI18n();
  const listed = preview.new.slice(0, PREVIEW_LISTED);
  const lines = preview.unrecognisedLines;
  return (
    <section className="import-preview" aria-labelledby={`${id}-title`} data-testid="import-preview">
      <h3 id={`${id}-title`} className="import-preview__title">
        {t('import.preview')}
      </h3>
      <ul id={id} className="import-preview__counts" aria-live="polite">
        <li data-testid="import-found">{t('import.found', { count: formatNumber(t, preview.found) })}</li>
        <li data-testid="import-new">{t('import.new', { count: formatNumber(t, preview.new.length) })}</li>
        <li data-testid="import-dup-paste">{t('import.dupPaste', { count: formatNumber(t, preview.duplicatesInPaste) })}</li>
        <li data-testid="import-dup-pool">{t('import.dupPool', { count: formatNumber(t, preview.duplicatesInPool) })}</li>
        <li data-testid="import-unrecognised">
          {t('import.unrecognised', { count: formatNumber(t, lines.length) })}
          {lines.length > 0 && (
            <>
              {' '}
              <span className="muted">
                ({t('import.unrecognisedLines', { lines: lines.slice(0, LINES_LISTED).join(', ') })}
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
        <ol className="import-preview__keys" data-testid="import-new-keys">
          {listed.map((key) => (
            <li key={key.index}>
              <code>{key.preview}</code>
            </li>
          ))}
          {preview.new.length > PREVIEW_LISTED && <li className="muted">{t('import.more', { count: preview.new.length - PREVIEW_LISTED })}</li>}
        </ol>
      )}
    </section>
  );
}
