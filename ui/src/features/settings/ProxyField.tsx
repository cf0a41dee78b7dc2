import { useEffect, useId, useState } from 'react';
import { useI18n } from '../../i18n/I18nProvider';
import type { ProxySetting, ProxyMode, UpdateSettingsArgs } from '../../ipc/bindings';
import { errorText, fieldError } from '../../i18n/problems';

interface Props {
  stored: ProxySetting;
  onSave: (changes: UpdateSettingsArgs) => Promise<unknown>;
}

const MODES: readonly ProxyMode[] = ['none', 'system', 'url'];

/**
 * Settings → General → Proxy: none (the default), the system's, or an address, for provider
 * requests over https (never for this machine). A choice is saved at once; an address when it is
 * committed (Enter, or leaving the field), and the backend's refusal is shown at the field with
 * the stored choice kept.
 */
export function ProxyField({ stored, onSave }: Props) {
  const { t } = useI18n();
  const legendId = useId();
  const urlId = useId();
  const hintId = useId();
  const errorId = useId();
  const [mode, setMode] = useState<ProxyMode>(stored.mode);
  const [url, setUrl] = useState(stored.url ?? '');
  const [error, setError] = useState<string>();
  const [saved, setSaved] = useState(false);

  useEffect(() => {
    setMode(stored.mode);
    setUrl(stored.url ?? '');
  }, [stored.mode, stored.url]);

  async function save(proxy: ProxySetting) {
    setError(undefined);
    setSaved(false);
    try {
      await onSave({ proxy });
      setSaved(true);
    } catch (e) {
      setError(fieldError(t, e, 'proxy') ?? fieldError(t, e, 'proxy.url') ?? errorText(t, e));
    }
  }

  function choose(next: ProxyMode) {
    setMode(next);
    if (next !== 'url') void save({ mode: next });
    else if (url.trim() !== '') void save({ mode: 'url', url: url.trim() });
  }

  function commitUrl() {
    const trimmed = url.trim();
    if (trimmed === '' || (stored.mode === 'url' && stored.url === trimmed)) return;
    void save({ mode: 'url', url: trimmed });
  }

  const describedBy = [error ? errorId : null, hintId].filter(Boolean).join(' ');
  return (
    <>
      <span className="general__label--top" id={legendId}>
        {t('general.proxy')}
      </span>
      <fieldset className="general__control general__proxy" aria-labelledby={legendId} aria-describedby={hintId} data-testid="proxy-setting">
        {MODES.map((option) => (
          <label key={option} className="radio">
            <input
              type="radio"
              name={`${legendId}-mode`}
              value={option}
              checked={mode === option}
              onChange={() => choose(option)}
              data-testid={`proxy-mode-${option}`}
            />{' '}
            {t(`general.proxy.${option}`)}
          </label>
        ))}
        {mode === 'url' && (
          <>
            <label htmlFor={urlId} className="visually-hidden">
              {t('general.proxy.address')}
            </label>
            <input
              id={urlId}
              className="input input--mono"
              inputMode="url"
              spellCheck={false}
              autoCapitalize="off"
              placeholder="http://proxy.example:3128"
              aria-invalid={error ? true : undefined}
              aria-describedby={describedBy}
              value={url}
              onChange={(e) => {
                setUrl(e.target.value);
                setSaved(false);
              }}
              onBlur={commitUrl}
              onKeyDown={(e) => {
                if (e.key === 'Enter') {
                  e.preventDefault();
                  commitUrl();
                }
              }}
              data-testid="proxy-url"
            />
          </>
        )}
        {error && (
          <p className="field__error" id={errorId} role="alert" data-testid="proxy-error">
            {error}
          </p>
        )}
        {saved && !error && (
          <p className="general__status" role="status" data-testid="proxy-saved">
            {t('general.saved')}
          </p>
        )}
        <p className="field__hint" id={hintId}>
          {t('general.proxyHint')}
        </p>
      </fieldset>
    </>
  );
}
