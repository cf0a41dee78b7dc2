import { useId, useRef } from 'react';
import { Dialog } from '../../../components/Dialog';
import { useI18n } from '../../../i18n/I18nProvider';
import { type HostMove, hostOf, type SentKey } from './hostChange';

interface Props {
  move: HostMove;
  /** `true` sends the update with `confirmHostChange`; `false` saves nothing. */
  onAnswer: (send: boolean) => void;
}

/**
 * Asks before a provider's keys go to another host: says from where to where, lists the keys that
 * would be sent, and offers "Send keys to <host>" or Cancel. Cancel has the initial focus, so
 * Enter never sends keys by accident; Escape and a click beside the dialog cancel too.
 */
export function HostChangeDialog({ move, onAnswer }: Props) {
  const { t } = useI18n();
  const bodyId = useId();
  const listId = useId();
  const cancel = useRef<HTMLButtonElement>(null);
  const host = hostOf(move.to);

  function name(key: SentKey): string {
    switch (key.kind) {
      case 'named':
        return key.name;
      case 'providerKey':
        return t('hostChange.providerKey', { preview: key.preview });
      case 'newProviderKey':
        return t('hostChange.newProviderKey');
    }
  }

  return (
    <Dialog
      title={t('hostChange.title', { host })}
      role="alertdialog"
      onClose={() => onAnswer(false)}
      initialFocus={cancel}
      describedBy={`${bodyId} ${listId}`}
      testId="host-change-dialog"
    >
      <p id={bodyId} className="dialog__body">
        {t('hostChange.body', { from: move.from, to: move.to, host })}
      </p>
      <ul id={listId} className="host-change__keys" aria-label={t('hostChange.keys', { host })} data-testid="host-change-keys">
        {move.keys.map((key, index) => (
          // Names may repeat (two unlabeled keys with the same preview): the position tells them apart.
          // biome-ignore lint/suspicious/noArrayIndexKey: the list is fixed while the dialog is open
          <li key={index}>{name(key)}</li>
        ))}
      </ul>
      <div className="dialog__actions">
        <button ref={cancel} type="button" className="button" onClick={() => onAnswer(false)} data-testid="host-change-cancel">
          {t('common.cancel')}
        </button>
        <button type="button" className="button button--danger" onClick={() => onAnswer(true)} data-testid="host-change-confirm">
          {t('hostChange.confirm', { host })}
        </button>
      </div>
    </Dialog>
  );
}
