import { useId, useRef, useState } from 'react';
import { Dialog } from '../../../../components/Dialog';
import { useI18n } from '../../../../i18n/I18nProvider';
import { errorText } from '../../../../i18n/problems';
import type { KeyTestResult } from '../../../../ipc/bindings';

interface Props {
  provider: string;
  /** Every key to turn on. */
  ids: readonly string[];
  /** Those of them the provider refused (401, 403) before Keypool switched them off. */
  refused: readonly string[];
  /** Tests keys against their provider. */
  onTest: (ids: string[]) => Promise<KeyTestResult[]>;
  /** Switches keys on; resolves once the list shows them. */
  onEnable: (ids: string[]) => Promise<unknown>;
  onClose: () => void;
  returnFocus?: () => HTMLElement | null | undefined;
}

type Check = { kind: 'idle' } | { kind: 'testing' } | { kind: 'done'; accepted: string[] } | { kind: 'failed'; message: string };

/**
 * Bulk Enable asks what turning one refused key on asks: some of the selected keys were switched
 * off after the provider refused them (they may have been revoked). Test them first (those still
 * refused are then left off unless the user says otherwise), or turn every one on anyway.
 */
export function BulkRevokedDialog({ provider, ids, refused, onTest, onEnable, onClose, returnFocus }: Props) {
  const { t } = useI18n();
  const bodyId = useId();
  const testButton = useRef<HTMLButtonElement>(null);
  const [check, setCheck] = useState<Check>({ kind: 'idle' });
  const [enabling, setEnabling] = useState(false);
  const [problem, setProblem] = useState<string>();

  async function test() {
    setCheck({ kind: 'testing' });
    try {
      // The results come in the order of the ids asked.
      const results = await onTest([...refused]);
      setCheck({ kind: 'done', accepted: refused.filter((_, i) => results[i]?.ok) });
    } catch (error) {
      setCheck({ kind: 'failed', message: errorText(t, error) });
    }
  }

  async function enable(which: string[]) {
    if (enabling) return;
    setEnabling(true);
    setProblem(undefined);
    try {
      await onEnable(which);
      onClose();
    } catch (error) {
      setProblem(t('pool.actionFailed', { message: errorText(t, error) }));
      setEnabling(false);
    }
  }

  const tested = check.kind === 'done' ? check : null;
  const stillRefused = tested ? refused.filter((id) => !tested.accepted.includes(id)) : [];
  const others = ids.filter((id) => !stillRefused.includes(id));
  let verdict: string | null = null;
  if (tested) verdict = t('bulkRevoked.tested', { accepted: tested.accepted.length, refused: stillRefused.length });
  else if (check.kind === 'failed') verdict = t('pool.actionFailed', { message: check.message });

  return (
    <Dialog title={t('bulkRevoked.title', { count: refused.length })} role="alertdialog" onClose={onClose} initialFocus={testButton} returnFocus={returnFocus} describedBy={bodyId} testId="bulk-revoked-dialog">
      <p id={bodyId} className="dialog__body">
        {t('bulkRevoked.body', { provider, count: refused.length, total: ids.length })}
      </p>
      <p className="dialog__body" role="status" data-testid="bulk-revoked-verdict">
        {check.kind === 'testing' ? t('revoked.testing') : verdict}
      </p>
      {problem && (
        <p className="form-error" role="alert">
          {problem}
        </p>
      )}
      <div className="dialog__actions">
        <button type="button" className="button" onClick={onClose} data-testid="bulk-revoked-cancel">
          {t('common.cancel')}
        </button>
        <button type="button" className="button" onClick={() => void enable([...ids])} aria-busy={enabling || undefined} data-testid="bulk-revoked-enable-all">
          {t('bulkRevoked.enableAll', { count: ids.length })}
        </button>
        {tested ? (
          <button type="button" className="button button--primary" onClick={() => void enable(others)} disabled={others.length === 0} aria-busy={enabling || undefined} data-testid="bulk-revoked-enable-accepted">
            {t('bulkRevoked.enableAccepted', { count: others.length })}
          </button>
        ) : (
          <button
            ref={testButton}
            type="button"
            className="button button--primary"
            onClick={() => void test()}
            aria-busy={check.kind === 'testing' || undefined}
            disabled={check.kind === 'testing'}
            data-testid="bulk-revoked-test"
          >
            {check.kind === 'testing' ? t('revoked.testing') : t('bulkRevoked.test', { count: refused.length })}
          </button>
        )}
      </div>
    </Dialog>
  );
}
