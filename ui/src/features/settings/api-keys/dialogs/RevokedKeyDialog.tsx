import { useEffect, useId, useRef, useState } from 'react';
import { Dialog } from '../../../../components/Dialog';
import { formatClockTime } from '../../../../i18n/format';
import { useI18n } from '../../../../i18n/I18nProvider';
import { errorText, probeText } from '../../../../i18n/problems';
import type { KeyTestResult } from '../../../../ipc/bindings';

interface Props {
  /** How the key is known. */
  name: string;
  provider: string;
  /** The status it was refused with (`401`, `403`). */
  status: string;
  /** When it was switched off (backend clock), if known. */
  at: number | null;
  /** Backend clock minus UI clock. */
  offset: number;
  /** Tests the key against its provider. */
  onTest: () => Promise<KeyTestResult>;
  /** Switches it back on; resolves once the list shows it. */
  onEnable: () => Promise<unknown>;
  onClose: () => void;
  returnFocus?: () => HTMLElement | null | undefined;
}

type Check = { kind: 'idle' } | { kind: 'testing' } | { kind: 'done'; result: KeyTestResult } | { kind: 'failed'; message: string };

/**
 * Asks before switching back on a key the provider refused (it may have been revoked), and
 * offers to test it first: accepted, "Turn on" is the way on; still refused, it says why and
 * turning it on stays the user's call.
 */
export function RevokedKeyDialog({ name, provider, status, at, offset, onTest, onEnable, onClose, returnFocus }: Props) {
  const { t, intlTag } = useI18n();
  const bodyId = useId();
  const testButton = useRef<HTMLButtonElement>(null);
  const enableButton = useRef<HTMLButtonElement>(null);
  const [check, setCheck] = useState<Check>({ kind: 'idle' });
  const [enabling, setEnabling] = useState(false);
  const [problem, setProblem] = useState<string>();
  const now = Date.now() + offset;
  const time = at === null ? '—' : formatClockTime(at, now, intlTag);
  const accepted = check.kind === 'done' && check.result.ok;

  // The test button goes once the key is accepted: the focus moves to the way on.
  useEffect(() => {
    if (accepted) enableButton.current?.focus();
  }, [accepted]);

  async function test() {
    setCheck({ kind: 'testing' });
    try {
      setCheck({ kind: 'done', result: await onTest() });
    } catch (error) {
      setCheck({ kind: 'failed', message: errorText(t, error) });
    }
  }

  async function enable() {
    if (enabling) return;
    setEnabling(true);
    setProblem(undefined);
    try {
      await onEnable();
      onClose();
    } catch (error) {
      setProblem(t('pool.actionFailed', { message: errorText(t, error) }));
      setEnabling(false);
    }
  }

  let verdict: string | null = null;
  if (check.kind === 'done') {
    const { result } = check;
    verdict = result.ok
      ? t('revoked.accepted')
      : t('revoked.stillRefused', { reason: result.problem ? probeText(t, result.problem, result.status, result.message) : t('error.provider') });
  } else if (check.kind === 'failed') {
    verdict = t('pool.actionFailed', { message: check.message });
  }

  return (
    <Dialog title={t('revoked.title', { name })} role="alertdialog" onClose={onClose} initialFocus={testButton} returnFocus={returnFocus} describedBy={bodyId} testId="revoked-key-dialog">
      <p id={bodyId} className="dialog__body">
        {t('revoked.body', { provider, status, time })}
      </p>
      <p className={`dialog__body${accepted ? ' key-test--ok' : check.kind === 'idle' || check.kind === 'testing' ? '' : ' key-test--bad'}`} role="status" data-testid="revoked-key-verdict">
        {check.kind === 'testing' ? t('revoked.testing') : verdict}
      </p>
      {problem && (
        <p className="form-error" role="alert">
          {problem}
        </p>
      )}
      <div className="dialog__actions">
        <button type="button" className="button" onClick={onClose} data-testid="revoked-key-cancel">
          {t('common.cancel')}
        </button>
        {!accepted && (
          <>
            <button type="button" className="button" onClick={() => void enable()} aria-busy={enabling || undefined} data-testid="revoked-key-enable-anyway">
              {t('revoked.enableAnyway')}
            </button>
            <button
              ref={testButton}
              type="button"
              className="button button--primary"
              onClick={() => void test()}
              aria-busy={check.kind === 'testing' || undefined}
              disabled={check.kind === 'testing'}
              data-testid="revoked-key-test"
            >
              {check.kind === 'testing' ? t('revoked.testing') : t('revoked.test')}
            </button>
          </>
        )}
        {accepted && (
          <button ref={enableButton} type="button" className="button button--primary" onClick={() => void enable()} aria-busy={enabling || undefined} data-testid="revoked-key-enable">
            {t('revoked.enable')}
          </button>
        )}
      </div>
    </Dialog>
  );
}
