import { type RefObject, useId } from 'react';
import { Field } from '../../../../components/Field';
import type { MessageKey } from '../../../../i18n';
import { useI18n } from '../../../../i18n/I18nProvider';
import type { KeyReading } from '../../../../ipc/bindings';
import { CheckField } from '../../../../components/CheckField';
import { ImportPreview } from './ImportPreview';
import { KeyWeightField } from '../fields/KeyFields';
import { QuotaGroupField } from '../fields/QuotaGroupField';
import type { KeyImport } from './useKeyImport';

interface Props {
  keyImport: KeyImport;
  textarea: RefObject<HTMLTextAreaElement | null>;
  /** What the provider's keys start with (`sk-…`). */
  shapes: string;
  onCancel: () => void;
}

const READINGS: { reading: KeyReading; label: MessageKey }[] = [
  { reading: 'shapes', label: 'import.readingShapes' },
  { reading: 'one_per_line', label: 'import.readingLines' },
];

/**
 * The text (typed, pasted or read from a file), how it is read, what the backend found in it
 * (every key that would be sent, masked, each removable), and the settings for all the new keys.
 * Submitting finds the keys first; once found, it starts the import of those kept.
 */
export function ImportForm({ keyImport, textarea, shapes, onCancel }: Props) {
  const { t } = useI18n();
  const fileId = useId();
  const previewId = useId();
  const readingId = useId();
  const { text, form, errors, fileNote, preview, kept, checking, setField } = keyImport;
  return (
    <form className="dialog__form" onSubmit={keyImport.submit} noValidate>
      <Field label={t('import.text')} hint={fileNote ? `${t('import.textHint')} ${fileNote}` : t('import.textHint')} error={errors.text} testId="import-text">
        {({ id, describedBy, invalid }) => (
          <textarea
            ref={textarea}
            id={id}
            className="input input--mono textarea"
            rows={6}
            spellCheck={false}
            autoComplete="off"
            aria-invalid={invalid || undefined}
            aria-describedby={describedBy}
            value={text}
            onChange={(e) => keyImport.changeText(e.target.value)}
            data-testid="import-text-input"
          />
        )}
      </Field>
      <div className="import-file">
        <label htmlFor={fileId} className="button button--small import-file__button">
          {t('import.file')}
        </label>
        <input
          id={fileId}
          type="file"
          className="visually-hidden"
          accept=".txt,.csv,.json,text/plain,text/csv,application/json"
          onChange={(e) => void keyImport.readFile(e)}
          data-testid="import-file"
        />
      </div>

      <fieldset className="import-reading" aria-labelledby={`${readingId}-legend`} aria-describedby={`${readingId}-hint`} data-testid="import-reading">
        <span id={`${readingId}-legend`} className="field__label">
          {t('import.reading')}
        </span>
        {READINGS.map(({ reading, label }) => (
          <label key={reading} className="radio">
            <input
              type="radio"
              name={`${readingId}-reading`}
              value={reading}
              checked={keyImport.reading === reading}
              onChange={() => keyImport.chooseReading(reading)}
              data-testid={`import-reading-${reading}`}
            />{' '}
            {t(label, { shapes })}
          </label>
        ))}
        <p id={`${readingId}-hint`} className="muted field__hint">
          {keyImport.reading === 'shapes' ? t('import.readingShapesHint') : t('import.readingLinesHint')}
        </p>
      </fieldset>

      {preview && preview.found > 0 && (
        <ImportPreview
          preview={preview}
          kept={kept}
          leftOutCount={keyImport.leftOutCount}
          onRemove={keyImport.leaveOut}
          onPutBack={keyImport.putBack}
          refocus={keyImport.refocus}
          id={previewId}
        />
      )}

      <div className="import-fields">
        <KeyWeightField value={form.weight} error={errors.weight} onChange={(value) => setField('weight', value)} testId="import-weight" />
        <Field label={t('import.labelPrefix')} hint={t('import.labelPrefixHint')} error={errors.labelPrefix} testId="import-prefix">
          {({ id, describedBy, invalid }) => (
            <input
              id={id}
              className="input"
              autoComplete="off"
              aria-invalid={invalid || undefined}
              aria-describedby={describedBy}
              value={form.labelPrefix}
              onChange={(e) => setField('labelPrefix', e.target.value)}
              data-testid="import-prefix-input"
            />
          )}
        </Field>
        <QuotaGroupField value={form.quotaGroup} onChange={(value) => setField('quotaGroup', value)} hint={t('bulk.quotaGroupHint')} error={errors.quotaGroup} testId="import-group" />
      </div>
      <CheckField label={t('import.validate')} hint={t('import.validateHint')} checked={form.validate} onChange={(value) => setField('validate', value)} testId="import-validate" />
      <CheckField
        label={t('import.keepRejected')}
        hint={t('import.keepRejectedHint')}
        checked={form.keepRejectedDisabled}
        onChange={(value) => setField('keepRejectedDisabled', value)}
        testId="import-keep-rejected"
      />
      <div className="dialog__actions">
        <button type="button" className="button" onClick={onCancel} data-testid="import-close">
          {t('common.cancel')}
        </button>
        {preview && preview.new.length > 0 ? (
          <button type="submit" className="button button--primary" disabled={kept.length === 0} aria-describedby={previewId} data-testid="import-start">
            {t('import.start', { count: kept.length })}
          </button>
        ) : (
          <button type="submit" className="button button--primary" aria-busy={checking || undefined} data-testid="import-check">
            {checking ? t('import.checking') : t('import.check')}
          </button>
        )}
      </div>
    </form>
  );
}
