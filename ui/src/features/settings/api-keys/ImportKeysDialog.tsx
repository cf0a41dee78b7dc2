import { useEffect, useId, useRef, useState, type ChangeEvent, type FormEvent } from 'react';
import { Dialog } from '../../../components/Dialog';
import { Field } from '../../../components/Field';
import { useI18n } from '../../../i18n/I18nProvider';
import type { MessageKey } from '../../../i18n';
import { errorText, fieldError, formatNumber } from '../../../i18n/problems';
import { type KeyImportPreview, type KeyImportProgress, LIMITS } from '../../../ipc/bindings';
import { KeyWeightField } from './KeyFields';
import { QuotaGroupField } from './QuotaGroupField';
import { IMPORT_PREFIX_MAX, parseImportForm, type ImportForm, type ImportSettings } from './schema';

/** The import's commands, for one provider (the section binds them to the backend). */
export interface KeyImportApi {
  preview: (text: string) => Promise<KeyImportPreview>;
  start: (importId: string, settings: ImportSettings) => Promise<KeyImportProgress>;
  cancel: (importId: string) => Promise<KeyImportProgress>;
  /** Subscribes to the progress of imports; returns the unsubscribe. */
  onProgress: (handler: (progress: KeyImportProgress) => void) => () => void;
}

interface Props {
  api: KeyImportApi;
  /** Called when the dialog closes: `started` when an import ran (keys may have been added). */
  onClose: (started: boolean) => void;
  returnFocus?: () => HTMLElement | null | undefined;
}

/** Files read in the window: as large as the backend takes a text (10 000 keys take about 2 MB). */
const MAX_FILE_BYTES = LIMITS.importText.maxBytes;
/** New keys listed by preview in the dialog; the count says how many more there are. */
const PREVIEW_LISTED = 20;
/** Unrecognised line numbers named; the count says the rest. */
const LINES_LISTED = 12;

/** What the dialog shows of an import's progress (whose provider it is, the dialog knows). */
type Progress = Omit<KeyImportProgress, 'providerId'>;

type Phase =
  | { kind: 'edit' }
  | { kind: 'running'; progress: Progress; cancelling: boolean }
  | { kind: 'finished'; progress: Progress; error?: string };

const BUCKETS: { field: keyof Progress; label: MessageKey; testId: string }[] = [
  { field: 'valid', label: 'import.valid', testId: 'import-valid' },
  { field: 'invalid', label: 'import.invalid', testId: 'import-invalid' },
  { field: 'rateLimited', label: 'import.rateLimited', testId: 'import-rate-limited' },
  { field: 'unreachable', label: 'import.unreachable', testId: 'import-unreachable' },
  { field: 'added', label: 'import.added', testId: 'import-added' },
  { field: 'duplicates', label: 'import.duplicates', testId: 'import-duplicates' },
];

/**
 * Import many keys: paste any text or read a file, see what the backend finds in it (new keys,
 * repeats, keys already in the pool, lines it could not read) before anything is saved, choose
 * the weight, label prefix and quota group for all, then follow the import's progress (the keys
 * are validated first unless the user says not to). Cancel stops it; what was saved stays.
 * The text stays in this dialog and goes only to the backend; previews are what it sends back.
 */
export function ImportKeysDialog({ api, onClose, returnFocus }: Props) {
  const { t } = useI18n();
  const fileId = useId();
  const previewId = useId();
  const [text, setText] = useState('');
  const [form, setForm] = useState<ImportForm>({ weight: '1', labelPrefix: '', quotaGroup: '', validate: true, keepRejectedDisabled: false });
  const [errors, setErrors] = useState<Partial<Record<keyof ImportForm | 'text', string>>>({});
  const [fileNote, setFileNote] = useState<string>();
  const [preview, setPreview] = useState<KeyImportPreview | null>(null);
  const [checking, setChecking] = useState(false);
  const [phase, setPhase] = useState<Phase>({ kind: 'edit' });
  const textarea = useRef<HTMLTextAreaElement>(null);
  const closeButton = useRef<HTMLButtonElement>(null);
  const importId = preview?.importId ?? null;

  // Progress events of this import; another import's are not ours.
  useEffect(() => {
    if (!importId) return;
    return api.onProgress((progress) => {
      if (progress.importId !== importId) return;
      setPhase((current) => {
        if (current.kind === 'edit') return current;
        if (progress.state === 'running') return current.kind === 'running' ? { ...current, progress } : current;
        return { kind: 'finished', progress };
      });
    });
  }, [api, importId]);

  // The summary takes focus: its Close is what is left to do.
  useEffect(() => {
    if (phase.kind === 'finished') closeButton.current?.focus();
  }, [phase.kind]);

  const setField = <F extends keyof ImportForm>(field: F, value: ImportForm[F]) => {
    setForm((f) => ({ ...f, [field]: value }));
    setErrors(({ [field]: _, ...rest }) => rest);
  };

  function changeText(next: string) {
    setText(next);
    setPreview(null); // what was found was found in the old text
    setErrors(({ text: _, ...rest }) => rest);
  }

  async function readFile(event: ChangeEvent<HTMLInputElement>) {
    const file = event.target.files?.[0];
    event.target.value = ''; // the same file can be chosen again
    if (!file) return;
    if (file.size > MAX_FILE_BYTES) {
      setFileNote(undefined);
      setErrors((e) => ({ ...e, text: t('import.fileTooLarge', { size: MAX_FILE_BYTES / (1024 * 1024) }) }));
      return;
    }
    try {
      changeText(await file.text());
      setFileNote(t('import.fileRead', { name: file.name }));
    } catch {
      setFileNote(undefined);
      setErrors((e) => ({ ...e, text: t('import.fileUnreadable', { name: file.name }) }));
    }
  }

  function checked(): ImportSettings | null {
    const parsed = parseImportForm(form);
    if (parsed.ok) return parsed.value;
    const worded: typeof errors = {};
    for (const [field, key] of Object.entries(parsed.errors) as [keyof ImportForm, MessageKey][]) {
      worded[field] = t(key, key === 'import.prefixTooLong' ? { max: IMPORT_PREFIX_MAX } : undefined);
    }
    setErrors((e) => ({ ...e, ...worded }));
    return null;
  }

  async function findKeys() {
    if (text.trim() === '') {
      setErrors((e) => ({ ...e, text: t('import.none') }));
      textarea.current?.focus();
      return;
    }
    setChecking(true);
    try {
      const found = await api.preview(text);
      setPreview(found);
      if (found.found === 0) setErrors((e) => ({ ...e, text: t('import.none') }));
    } catch (error) {
      setErrors((e) => ({ ...e, text: fieldError(t, error, 'text') ?? errorText(t, error) }));
    } finally {
      setChecking(false);
    }
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (checking) return;
    if (!preview) return void findKeys();
    const settings = checked();
    if (!settings || preview.new.length === 0) return;
    const empty: Progress = {
      importId: preview.importId,
      total: preview.new.length,
      checked: 0,
      valid: 0,
      invalid: 0,
      rateLimited: 0,
      unreachable: 0,
      added: 0,
      duplicates: 0,
      state: 'running',
    };
    setPhase({ kind: 'running', progress: empty, cancelling: false });
    try {
      const started = await api.start(preview.importId, settings);
      setPhase((current) => (started.state === 'running' ? (current.kind === 'running' ? { ...current, progress: started } : current) : { kind: 'finished', progress: started }));
    } catch (error) {
      const field = (['weight', 'labelPrefix', 'quotaGroup'] as const).find((f) => fieldError(t, error, f));
      if (field) {
        setErrors((e) => ({ ...e, [field]: fieldError(t, error, field) }));
        setPhase({ kind: 'edit' });
      } else {
        setPhase({ kind: 'finished', progress: empty, error: errorText(t, error) });
      }
    }
  }

  async function cancel() {
    if (phase.kind !== 'running' || !importId) return;
    setPhase({ ...phase, cancelling: true });
    try {
      const last = await api.cancel(importId);
      setPhase({ kind: 'finished', progress: last });
    } catch (error) {
      setPhase((current) => (current.kind === 'running' ? { kind: 'finished', progress: current.progress, error: errorText(t, error) } : current));
    }
  }

  const started = phase.kind !== 'edit';
  const close = () => {
    if (phase.kind === 'running') return; // Cancel first: closing must not hide a running import
    onClose(started);
  };

  return (
    <Dialog title={t('import.title')} onClose={close} initialFocus={textarea} returnFocus={returnFocus} testId="import-keys-dialog">
      {phase.kind === 'edit' ? (
        <form className="dialog__form" onSubmit={submit} noValidate>
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
                onChange={(e) => changeText(e.target.value)}
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
              onChange={(e) => void readFile(e)}
              data-testid="import-file"
            />
          </div>

          {preview && preview.found > 0 && <PreviewSummary preview={preview} id={previewId} />}

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
            <QuotaGroupField
              value={form.quotaGroup}
              onChange={(value) => setField('quotaGroup', value)}
              hint={t('bulk.quotaGroupHint')}
              error={errors.quotaGroup}
              testId="import-group"
            />
          </div>
          <CheckField
            label={t('import.validate')}
            hint={t('import.validateHint')}
            checked={form.validate}
            onChange={(value) => setField('validate', value)}
            testId="import-validate"
          />
          <CheckField
            label={t('import.keepRejected')}
            hint={t('import.keepRejectedHint')}
            checked={form.keepRejectedDisabled}
            onChange={(value) => setField('keepRejectedDisabled', value)}
            testId="import-keep-rejected"
          />
          <div className="dialog__actions">
            <button type="button" className="button" onClick={close} data-testid="import-close">
              {t('common.cancel')}
            </button>
            {preview && preview.new.length > 0 ? (
              <button type="submit" className="button button--primary" aria-describedby={previewId} data-testid="import-start">
                {t('import.start', { count: preview.new.length })}
              </button>
            ) : (
              <button type="submit" className="button button--primary" aria-busy={checking || undefined} data-testid="import-check">
                {checking ? t('import.checking') : t('import.check')}
              </button>
            )}
          </div>
        </form>
      ) : (
        <div className="dialog__form">
          <ImportProgress progress={phase.progress} />
          {phase.kind === 'finished' && (
            <p className={phase.error ? 'form-error' : 'import-summary'} role={phase.error ? 'alert' : 'status'} data-testid="import-summary">
              {phase.error
                ? t('import.failed', { message: phase.error })
                : phase.progress.state === 'cancelled'
                  ? t('import.cancelled', { count: phase.progress.added })
                  : phase.progress.state === 'failed'
                    ? t('import.failed', { message: t('error.unexpected') })
                    : t('import.done', { count: phase.progress.added })}
            </p>
          )}
          <div className="dialog__actions">
            {phase.kind === 'running' ? (
              <button type="button" className="button" aria-busy={phase.cancelling || undefined} onClick={() => void cancel()} data-testid="import-cancel">
                {phase.cancelling ? t('import.cancelling') : t('import.cancel')}
              </button>
            ) : (
              <button ref={closeButton} type="button" className="button button--primary" onClick={close} data-testid="import-done">
                {t('import.close')}
              </button>
            )}
          </div>
        </div>
      )}
    </Dialog>
  );
}

/** What the backend found in the text, before anything is saved. */
function PreviewSummary({ preview, id }: { preview: KeyImportPreview; id: string }) {
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

/** The import's progress: a bar (done of total) and the count of each bucket. */
function ImportProgress({ progress }: { progress: Progress }) {
  const { t } = useI18n();
  const labelId = useId();
  // Without validation nothing is checked: what is done is then what was saved or found again.
  const done = Math.min(Math.max(progress.checked, progress.added + progress.duplicates), progress.total);
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
        aria-valuetext={t('import.progressText', { checked: formatNumber(t, done), total: formatNumber(t, progress.total) })}
        data-testid="import-progressbar"
      >
        <span className="import-progress__fill" style={{ width: progress.total > 0 ? `${(100 * done) / progress.total}%` : '0%' }} />
      </div>
      <p className="muted import-progress__text">{t('import.progressText', { checked: formatNumber(t, done), total: formatNumber(t, progress.total) })}</p>
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

/** A labelled checkbox with its hint. */
function CheckField({ label, hint, checked, onChange, testId }: { label: string; hint: string; checked: boolean; onChange: (checked: boolean) => void; testId: string }) {
  const id = useId();
  return (
    <div className="check-field">
      <input id={id} type="checkbox" className="checkbox" checked={checked} aria-describedby={`${id}-hint`} onChange={(e) => onChange(e.target.checked)} data-testid={testId} />
      <div>
        <label htmlFor={id}>{label}</label>
        <p id={`${id}-hint`} className="muted field__hint">
          {hint}
        </p>
      </div>
    </div>
  );
}
