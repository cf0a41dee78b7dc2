import { useEffect, useRef } from 'react';
import { Dialog } from '../../../../components/Dialog';
import { useI18n } from '../../../../i18n/I18nProvider';
import { ImportForm } from './ImportForm';
import { ImportProgress, ImportSummary, LeftKeys } from './ImportProgress';
import { type KeyImportApi, useKeyImport } from './useKeyImport';

interface Props {
  api: KeyImportApi;
  /** What the provider's keys start with (`sk-…`): the text is read for keys of that shape unless the user chooses one per line. */
  shapes: string;
  /** Called when the dialog closes: `started` when an import ran (keys may have been added). */
  onClose: (started: boolean) => void;
  returnFocus?: () => HTMLElement | null | undefined;
}

/**
 * Import many keys: paste any text or read a file, see what the backend finds in it (the keys of
 * the provider's shape, or with the user's choice one per line; repeats, keys already in the pool,
 * lines it could not read) and every key that would be sent, masked, with a Remove each, before
 * anything is sent or saved; choose the weight, label prefix and quota group for all, then follow
 * the import's progress (the keys are validated first unless the user says not to). Cancel stops
 * it; what was saved stays. The text stays in this dialog and goes only to the backend; previews
 * are what it sends back.
 */
export function ImportKeysDialog({ api, shapes, onClose, returnFocus }: Props) {
  const { t } = useI18n();
  const textarea = useRef<HTMLTextAreaElement>(null);
  const closeButton = useRef<HTMLButtonElement>(null);
  const keyImport = useKeyImport(api, shapes, () => textarea.current?.focus());
  const { phase } = keyImport;

  // The summary takes focus: its Close is what is left to do.
  useEffect(() => {
    if (phase.kind === 'finished') closeButton.current?.focus();
  }, [phase.kind]);

  const close = () => {
    if (phase.kind === 'running') return; // Cancel first: closing must not hide a running import
    onClose(phase.kind !== 'edit');
  };

  return (
    <Dialog title={t('import.title')} onClose={close} initialFocus={textarea} returnFocus={returnFocus} testId="import-keys-dialog">
      {phase.kind === 'edit' ? (
        <ImportForm keyImport={keyImport} textarea={textarea} shapes={shapes} onCancel={close} />
      ) : (
        <div className="dialog__form">
          <ImportProgress progress={phase.progress} />
          {phase.kind === 'finished' && <ImportSummary phase={phase} />}
          {phase.kind === 'finished' && keyImport.left && <LeftKeys left={keyImport.left} progress={phase.progress} onKeep={() => void keyImport.keepLeft()} />}
          <div className="dialog__actions">
            {phase.kind === 'running' ? (
              <button type="button" className="button" aria-busy={phase.cancelling || undefined} onClick={() => void keyImport.cancel()} data-testid="import-cancel">
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
