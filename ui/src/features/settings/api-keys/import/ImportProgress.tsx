import { useId } from 'react';
import type { MessageKey } from '../../../../i18n';
import { useI18n } from '../../../../i18n/I18nProvider';
import { formatNumber } from '../../../../i18n/problems';
import type { KeyImportPreview } from '../../../../ipc/bindings';
import { type ImportPhase, type Progress, refusedReason } from './importPhase';

const BUCKETS: { field: keyof Progress; label: MessageKey; testId: string }[] = [
  { field: 'valid', label: 'import.valid', testId: 'import-valid' },
  { field: 'invalid', label: 'import.invalid', testId: 'import-invalid' },
  { field: 'rateLimited', label: 'import.rateLimited', testId: 'import-rate-limited' },
  { field: 'unreachable', label: 'import.unreachable', testId: 'import-unreachable' },
  { field: 'added', label: 'import.added', testId: 'import-added' },
  { field: 'duplicates', label: 'import.duplicates', testId: 'import-duplicates' },
];

/** The import's progress: a bar (done of total) and the count of each bucket. */
export function ImportProgress({ progress }: { progress: Progress }) {
  const { t } = useI18n();
  const labelId = useId();
  // Without validation nothing is checked: what is done is then what was saved or found again.
  const done = Math.min(Math.max(progress.checked, progress.added + progress.duplicates), progress.total);
  const doneText = t('import.progressText', { checked: formatNumber(t, done), total: formatNumber(t, progress.total) });
  return (
    <div className="import-progress" data-testid="import-progress">
      <p id={labelId} className="import-progress__label">
        {progress.state === 'running' ? t('import.running') : t('import.progress')}
      </p>
      <div
        className="import-progress__bar"
        role="progressbar"
        aria-labelledby={labelId}
        aria-valuemin={0}
        aria-valuemax={progress.total}
        aria-valuenow={done}
        aria-valuetext={doneText}
        data-testid="import-progressbar"
      >
        <span className="import-progress__fill" style={{ width: progress.total > 0 ? `${(100 * done) / progress.total}%` : '0%' }} />
      </div>
      <p className="muted import-progress__text">{doneText}</p>
      <ul className="import-progress__buckets">
        {BUCKETS.map(({ field, label, testId }) => (
          <li key={field} data-testid={testId}>
            {t(label, { count: formatNumber(t, progress[field] as number) })}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** How a finished import ended: how many keys it added, or why it stopped. */
export function ImportSummary({ phase }: { phase: Extract<ImportPhase, { kind: 'finished' }> }) {
  const { t } = useI18n();
  const { progress, error } = phase;
  return (
    <p className={error ? 'form-error' : 'import-summary'} role={error ? 'alert' : 'status'} data-testid="import-summary">
      {error
        ? t('import.failed', { message: error })
        : progress.state === 'cancelled'
          ? t('import.cancelled', { count: progress.added })
          : progress.state === 'failed'
            ? t('import.failed', { message: t('error.unexpected') })
            : t('import.done', { count: progress.added })}
    </p>
  );
}

const REASONS: Record<ReturnType<typeof refusedReason>, MessageKey> = {
  invalid: 'import.reasonInvalid',
  rateLimited: 'import.reasonRateLimited',
  unreachable: 'import.reasonUnreachable',
  mixed: 'import.reasonMixed',
};

/** How many refused keys are named; the rest are counted. */
const SHOWN_LEFT = 50;

/**
 * The keys a finished import refused and did not keep, masked, with why, and the offer to add
 * them switched off after all (checked again, each with its reason).
 */
export function LeftKeys({ left, progress, onKeep }: { left: KeyImportPreview; progress: Progress; onKeep: () => void }) {
  const { t } = useI18n();
  const titleId = useId();
  const count = left.new.length;
  const more = count - SHOWN_LEFT;
  return (
    <div className="import-left" data-testid="import-left">
      <p id={titleId}>{t('import.left', { count: formatNumber(t, count), reason: t(REASONS[refusedReason(progress)]) })}</p>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling list must take the focus to be scrolled without a mouse (WCAG 2.1.1) */}
      <ul className="import-left__keys" tabIndex={0} aria-labelledby={titleId}>
        {left.new.slice(0, SHOWN_LEFT).map((key) => (
          <li key={key.index} className="input--mono" data-testid="import-left-key">
            {key.preview}
          </li>
        ))}
        {more > 0 && <li>{t('import.more', { count: formatNumber(t, more) })}</li>}
      </ul>
      <p className="field__hint">{t('import.keepLeftHint')}</p>
      <button type="button" className="button" onClick={onKeep} data-testid="import-keep-left">
        {t('import.keepLeft')}
      </button>
    </div>
  );
}
