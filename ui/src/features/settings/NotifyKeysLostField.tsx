import { useId, useState } from 'react';
import { Switch } from '../../components/Switch';
import { useI18n } from '../../i18n/I18nProvider';
import { errorText } from '../../i18n/problems';
import type { Settings, UpdateSettingsArgs } from '../../ipc/bindings';

interface Props {
  stored: boolean;
  onSave: (changes: UpdateSettingsArgs) => Promise<Settings>;
}

/**
 * Settings → General: whether the pool's losses (a key refused or out of credit, a provider left
 * without a usable key) are told as desktop notifications; on unless switched off. A failed save
 * says so and the switch shows what is stored.
 */
export function NotifyKeysLostField({ stored, onSave }: Props) {
  const { t } = useI18n();
  const labelId = useId();
  const hintId = useId();
  const [busy, setBusy] = useState<boolean | null>(null);
  const [error, setError] = useState<string>();

  async function change(on: boolean) {
    if (busy !== null) return;
    setBusy(on);
    setError(undefined);
    try {
      await onSave({ notifyKeysLost: on });
    } catch (e) {
      setError(t('general.notifyKeysLostFailed', { message: errorText(t, e) }));
    } finally {
      setBusy(null);
    }
  }

  return (
    <>
      <span className="general__label--top" id={labelId}>
        {t('general.notifyKeysLost')}
      </span>
      <div className="general__control">
        <Switch checked={busy ?? stored} onChange={(on) => void change(on)} label={t('general.notifyKeysLost')} busy={busy !== null} testId="notify-keys-lost" describedBy={hintId} />
        {error && (
          <p className="field__error" role="alert" data-testid="notify-keys-lost-error">
            {error}
          </p>
        )}
        <p className="field__hint" id={hintId}>
          {t('general.notifyKeysLostHint')}
        </p>
      </div>
    </>
  );
}
