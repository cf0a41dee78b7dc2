import { useEffect, useId, useRef, useState } from 'react';
import { CopyButton } from '../../../components/CopyButton';
import { Dialog } from '../../../components/Dialog';
import { useI18n } from '../../../i18n/I18nProvider';
import { errorText } from '../../../i18n/problems';

/** Asking whether to replace the token, or showing a token (its one showing). */
export type TokenDialogMode = { kind: 'ask' } | { kind: 'shown'; token: string };

interface Props {
  mode: TokenDialogMode;
  /** Makes the new token, when asking; a dialog that only shows a token needs none. */
  onRegenerate?: () => Promise<string>;
  onClose: () => void;
  /** The title when showing a token: the endpoint's own by default. */
  title?: string;
}

/**
 * The local API's token, shown once: a new token appears here and nowhere else, with a Copy
 * button and a warning that it cannot be shown again. Regenerating asks first (the old token
 * stops working at once; Cancel has the focus), then shows the new one in the same dialog, so
 * focus stays inside and goes back to what opened it when it closes.
 */
export function TokenDialog({ mode: initial, onRegenerate, onClose, title }: Props) {
  const { t } = useI18n();
  const [mode, setMode] = useState(initial);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const bodyId = useId();
  const warningId = useId();
  const tokenId = useId();
  /** The one element focused on opening: Cancel when asking, the token when showing it. */
  const first = useRef<HTMLElement | null>(null);
  /** Set when a confirmation turns into the new token: its buttons are gone, the token takes the focus. */
  const revealed = useRef(false);

  useEffect(() => {
    if (mode.kind === 'shown' && revealed.current) {
      revealed.current = false;
      first.current?.focus();
    }
  }, [mode]);

  async function regenerate() {
    if (busy || !onRegenerate) return;
    setBusy(true);
    setError(undefined);
    try {
      const token = await onRegenerate();
      revealed.current = true;
      setMode({ kind: 'shown', token });
    } catch (e) {
      setError(t('localApi.regenerateFailed', { message: errorText(t, e) }));
    } finally {
      setBusy(false);
    }
  }

  if (mode.kind === 'ask') {
    return (
      <Dialog title={t('localApi.regenerateTitle')} role="alertdialog" onClose={onClose} initialFocus={first} describedBy={bodyId} testId="local-api-regenerate-dialog">
        <p id={bodyId} className="dialog__body">
          {t('localApi.regenerateBody')}
        </p>
        {error && (
          <p className="form-error" role="alert">
            {error}
          </p>
        )}
        <div className="dialog__actions">
          <button
            ref={(node) => {
              first.current = node;
            }}
            type="button"
            className="button"
            onClick={onClose}
            data-testid="local-api-regenerate-cancel"
          >
            {t('common.cancel')}
          </button>
          <button type="button" className="button button--danger" onClick={() => void regenerate()} aria-busy={busy || undefined} data-testid="local-api-regenerate-confirm">
            {t('localApi.regenerateConfirm')}
          </button>
        </div>
      </Dialog>
    );
  }

  return (
    <Dialog title={title ?? t('localApi.tokenTitle')} onClose={onClose} initialFocus={first} describedBy={warningId} testId="local-api-token-dialog">
      <p id={warningId} className="local-api__warning" data-testid="local-api-token-warning">
        {t('localApi.tokenWarning')}
      </p>
      <div className="field">
        <label className="field__label" htmlFor={tokenId}>
          {t('localApi.tokenLabel')}
        </label>
        {/* A text area, so the whole token is in sight (it does not fit one line of the dialog). */}
        <textarea
          ref={(node) => {
            first.current = node;
          }}
          id={tokenId}
          className="input input--mono local-api__token-value"
          readOnly
          rows={2}
          spellCheck={false}
          value={mode.token}
          onFocus={(e) => e.currentTarget.select()}
          data-testid="local-api-token"
        />
      </div>
      <div className="dialog__actions local-api__token-actions">
        <CopyButton text={() => mode.token} label={t('localApi.copyToken')} className="button" testId="local-api-token-copy" />
        <button type="button" className="button button--primary" onClick={onClose} data-testid="local-api-token-done">
          {t('localApi.tokenDone')}
        </button>
      </div>
    </Dialog>
  );
}
