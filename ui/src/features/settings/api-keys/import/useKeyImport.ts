import { type ChangeEvent, type FormEvent, useEffect, useState } from 'react';
import type { MessageKey } from '../../../../i18n';
import { useI18n } from '../../../../i18n/I18nProvider';
import { errorText, fieldError } from '../../../../i18n/problems';
import { type KeyImportPreview, type KeyImportProgress, type KeyReading, LIMITS } from '../../../../ipc/bindings';
import { IpcError } from '../../../../ipc/client';
import { focusAfterRemoval, type ImportPhase, keptKeys, noProgress, progressed, refusedCount, withoutLeftOut } from './importPhase';
import { IMPORT_PREFIX_MAX, parseImportForm, type ImportForm, type ImportSettings } from '../fields/schema';

/** The import's commands, for one provider (the section binds them to the backend). */
export interface KeyImportApi {
  preview: (text: string, reading: KeyReading) => Promise<KeyImportPreview>;
  /** Starts the previewed import, less the keys of the preview left out (by index). */
  start: (importId: string, settings: ImportSettings, leftOut: number[]) => Promise<KeyImportProgress>;
  cancel: (importId: string) => Promise<KeyImportProgress>;
  /** Subscribes to the progress of imports; returns the unsubscribe. */
  onProgress: (handler: (progress: KeyImportProgress) => void) => () => void;
}

/** Files read in the window: as large as the backend takes a text (10 000 keys take about 2 MB). */
const MAX_FILE_BYTES = LIMITS.importText.maxBytes;

export type ImportErrors = Partial<Record<keyof ImportForm | 'text', string>>;

/**
 * An import of many keys, from the text to its end: the text (typed, pasted or read from a file),
 * how it is read (the keys of the provider's shape, `shapes` as the form names it, or one per line
 * when the user chooses it), what the backend found in it and which of those the user left out,
 * the settings for all, and the import's phase as its answers and progress events move it.
 * `focusText` is called when the text is what needs fixing.
 */
export function useKeyImport(api: KeyImportApi, shapes: string, focusText: () => void) {
  const { t } = useI18n();
  const [text, setText] = useState('');
  const [reading, setReading] = useState<KeyReading>('shapes');
  /** The preview's keys the user removed from the list, by index: never sent. */
  const [leftOut, setLeftOut] = useState<ReadonlySet<number>>(new Set());
  /** After a removal, the row (by index) whose Remove takes the focus; `index: null`: none is left. A new object each time. */
  const [refocus, setRefocus] = useState<{ index: number | null } | null>(null);
  const [form, setForm] = useState<ImportForm>({ weight: '1', labelPrefix: '', quotaGroup: '', validate: true, keepRejectedDisabled: false });
  const [errors, setErrors] = useState<ImportErrors>({});
  const [fileNote, setFileNote] = useState<string>();
  const [preview, setPreview] = useState<KeyImportPreview | null>(null);
  const [checking, setChecking] = useState(false);
  const [phase, setPhase] = useState<ImportPhase>({ kind: 'edit' });
  /** The settings the last import ran with. */
  const [settingsUsed, setSettingsUsed] = useState<ImportSettings | null>(null);
  /** The keys a finished import refused and did not keep: the text found again, less the pool. */
  const [left, setLeft] = useState<KeyImportPreview | null>(null);
  const importId = preview?.importId ?? null;
  const fail = (field: keyof ImportErrors, message: string | undefined) => setErrors((e) => ({ ...e, [field]: message }));

  // Progress events of this import; another import's are not ours.
  useEffect(() => {
    if (!importId) return;
    return api.onProgress((progress) => {
      if (progress.importId === importId) setPhase((current) => progressed(current, progress));
    });
  }, [api, importId]);

  // An import that refused keys without keeping them: which ones, found by reading the text
  // again (what is new to the pool now is what was not added), masked as every preview is.
  const finishedRefusing =
    phase.kind === 'finished' && !phase.error && phase.progress.state === 'done' && refusedCount(phase.progress) > 0 && settingsUsed?.keepRejectedDisabled === false;
  useEffect(() => {
    if (!finishedRefusing) return;
    let live = true;
    api.preview(text, reading).then(
      (found) => {
        // The keys left out keep their index in a preview of the same text: still left out.
        const kept = withoutLeftOut(found, leftOut);
        if (live) setLeft(kept.new.length > 0 ? kept : null);
      },
      () => live && setLeft(null),
    );
    return () => {
      live = false;
    };
  }, [api, text, reading, leftOut, finishedRefusing]);

  /** Imports the refused keys after all, switched off with their reason (checked again). */
  async function keepLeft() {
    if (!left || !settingsUsed) return;
    const settings: ImportSettings = { ...settingsUsed, validate: true, keepRejectedDisabled: true };
    await run(left, settings);
  }

  async function run(found: KeyImportPreview, settings: ImportSettings) {
    setSettingsUsed(settings);
    setPreview(found);
    setLeft(null);
    const empty = noProgress(withoutLeftOut(found, leftOut));
    setPhase({ kind: 'running', progress: empty, cancelling: false });
    try {
      const started = await api.start(found.importId, settings, [...leftOut]);
      setPhase((current) => progressed(current, started));
    } catch (error) {
      const field = (['weight', 'labelPrefix', 'quotaGroup'] as const).find((f) => fieldError(t, error, f));
      if (field) {
        fail(field, fieldError(t, error, field));
        setPhase({ kind: 'edit' });
      } else {
        setPhase({ kind: 'finished', progress: empty, error: errorText(t, error) });
      }
    }
  }

  function changeText(next: string) {
    setText(next);
    forgetPreview(); // what was found was found in the old text
  }

  /** What was found, and what was left out of it, belong to the text as it was read. */
  function forgetPreview() {
    setPreview(null);
    setLeftOut(new Set());
    setErrors(({ text: _, ...rest }) => rest);
  }

  /** Reads the text another way (the keys of the provider's shape, or one per line). */
  function chooseReading(next: KeyReading) {
    if (next === reading) return;
    setReading(next);
    forgetPreview();
  }

  /** Takes the key of `index` off the list: it is neither checked nor saved. */
  function leaveOut(index: number) {
    if (!preview) return;
    setRefocus({ index: focusAfterRemoval(keptKeys(preview, leftOut), index) });
    setLeftOut((current) => new Set(current).add(index));
  }

  async function readFile(event: ChangeEvent<HTMLInputElement>) {
    const file = event.target.files?.[0];
    event.target.value = ''; // the same file can be chosen again
    if (!file) return;
    if (file.size > MAX_FILE_BYTES) {
      setFileNote(undefined);
      return fail('text', t('import.fileTooLarge', { size: MAX_FILE_BYTES / (1024 * 1024) }));
    }
    try {
      changeText(await file.text());
      setFileNote(t('import.fileRead', { name: file.name }));
    } catch {
      setFileNote(undefined);
      fail('text', t('import.fileUnreadable', { name: file.name }));
    }
  }

  function checked(): ImportSettings | null {
    const parsed = parseImportForm(form);
    if (parsed.ok) return parsed.value;
    const worded: ImportErrors = {};
    for (const [field, key] of Object.entries(parsed.errors) as [keyof ImportForm, MessageKey][]) {
      worded[field] = t(key, key === 'import.prefixTooLong' ? { max: IMPORT_PREFIX_MAX } : undefined);
    }
    setErrors((e) => ({ ...e, ...worded }));
    return null;
  }

  async function findKeys() {
    if (text.trim() === '') {
      fail('text', t('import.none'));
      return focusText();
    }
    setChecking(true);
    try {
      const found = await api.preview(text, reading);
      setPreview(found);
      if (found.found === 0) fail('text', noneFound());
    } catch (error) {
      const none = error instanceof IpcError && error.issueAt('text')?.code === 'no_keys_found';
      fail('text', none ? noneFound() : (fieldError(t, error, 'text') ?? errorText(t, error)));
      if (none) focusText();
    } finally {
      setChecking(false);
    }
  }

  /** No key in the text, said for the way it was read. */
  function noneFound(): string {
    return reading === 'shapes' ? t('import.noneOfShape', { shapes }) : t('import.none');
  }

  /** The form's submit: finds the keys in the text first, then starts the import of those kept. */
  async function submit(event: FormEvent) {
    event.preventDefault();
    if (checking) return;
    if (!preview) return void findKeys();
    const settings = checked();
    if (!settings || keptKeys(preview, leftOut).length === 0) return;
    await run(preview, settings);
  }

  async function cancel() {
    if (phase.kind !== 'running' || !importId) return;
    setPhase({ ...phase, cancelling: true });
    try {
      setPhase({ kind: 'finished', progress: await api.cancel(importId) });
    } catch (error) {
      setPhase((current) => (current.kind === 'running' ? { kind: 'finished', progress: current.progress, error: errorText(t, error) } : current));
    }
  }

  return {
    text,
    form,
    errors,
    fileNote,
    preview,
    reading,
    chooseReading,
    /** The preview's keys the user kept, masked: what the import will send and save. */
    kept: preview ? keptKeys(preview, leftOut) : [],
    leftOutCount: leftOut.size,
    leaveOut,
    refocus,
    putBack: () => {
      setLeftOut(new Set());
      setRefocus({ index: preview?.new[0]?.index ?? null });
    },
    checking,
    phase,
    changeText,
    readFile,
    setField: <F extends keyof ImportForm>(field: F, value: ImportForm[F]) => {
      setForm((f) => ({ ...f, [field]: value }));
      setErrors(({ [field]: _, ...rest }) => rest);
    },
    submit,
    cancel,
    /** The keys the finished import refused and did not keep, masked; null when none. */
    left,
    keepLeft,
  };
}

export type KeyImport = ReturnType<typeof useKeyImport>;
