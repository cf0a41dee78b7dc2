import { useId, useState, type FormEvent } from 'react';
import { useI18n } from '../../../../i18n/I18nProvider';
import { parseQuotaGroup, parseWeight, stepWeight } from '../fields/schema';

interface Props {
  count: number;
  /** Keys shown (the filter's); "select all" selects them when fewer are selected. */
  shownCount: number;
  /** A bulk action is running: the buttons wait for it. */
  busy: boolean;
  onSelectShown: () => void;
  onClear: () => void;
  onEnable: () => void;
  onDisable: () => void;
  onDelete: () => void;
  onWeight: (weight: number) => void;
  /** `""`: no group. */
  onGroup: (group: string) => void;
  onTest: () => void;
  onExportCsv: () => void;
  onExportFull: () => void;
}

/**
 * What can be done to the selected keys at once, shown while any is selected. The weight and the
 * group are typed here and checked like the key form's before they are sent.
 */
export function BulkBar({ count, shownCount, busy, onSelectShown, onClear, onEnable, onDisable, onDelete, onWeight, onGroup, onTest, onExportCsv, onExportFull }: Props) {
  const { t } = useI18n();
  const weightId = useId();
  const groupId = useId();
  const errorId = useId();
  const [weight, setWeight] = useState('1');
  const [group, setGroup] = useState('');
  const [error, setError] = useState<string>();

  function setWeightOfAll(event: FormEvent) {
    event.preventDefault();
    const parsed = parseWeight(weight);
    if (!parsed.ok) return setError(t(parsed.error));
    setError(undefined);
    onWeight(parsed.value);
  }

  function setGroupOfAll(event: FormEvent) {
    event.preventDefault();
    const parsed = parseQuotaGroup(group);
    if (!parsed.ok) return setError(t(parsed.error));
    setError(undefined);
    onGroup(parsed.value);
  }

  return (
    <div className="bulk-bar" role="toolbar" aria-label={t('bulkbar.label')} aria-busy={busy || undefined} data-testid="bulk-bar">
      <p className="bulk-bar__count" data-testid="bulk-count">
        {t('bulkbar.selected', { count })}
      </p>
      {count < shownCount && (
        <button type="button" className="link-button" onClick={onSelectShown} data-testid="bulk-select-shown">
          {t('bulkbar.selectAll', { count: shownCount })}
        </button>
      )}
      <button type="button" className="link-button" onClick={onClear} data-testid="bulk-clear">
        {t('bulkbar.clear')}
      </button>
      <div className="bulk-bar__actions">
        <button type="button" className="button button--small" disabled={busy} onClick={onEnable} data-testid="bulk-enable">
          {t('bulkbar.enable')}
        </button>
        <button type="button" className="button button--small" disabled={busy} onClick={onDisable} data-testid="bulk-disable">
          {t('bulkbar.disable')}
        </button>
        <button type="button" className="button button--small" disabled={busy} onClick={onTest} data-testid="bulk-test">
          {busy ? t('bulkbar.testing') : t('bulkbar.test')}
        </button>
        <button type="button" className="button button--small" disabled={busy} onClick={onExportCsv} data-testid="bulk-export-csv">
          {t('bulkbar.exportCsv')}
        </button>
        <button type="button" className="button button--small" disabled={busy} aria-haspopup="dialog" onClick={onExportFull} data-testid="bulk-export-full">
          {t('bulkbar.exportFull')}
        </button>
        <button type="button" className="button button--small button--danger" disabled={busy} aria-haspopup="dialog" onClick={onDelete} data-testid="bulk-delete">
          {t('bulkbar.delete')}
        </button>
      </div>
      <form className="bulk-bar__field" onSubmit={setWeightOfAll} noValidate>
        <label htmlFor={weightId}>{t('bulkbar.weight')}</label>
        <input
          id={weightId}
          className="input input--number"
          inputMode="numeric"
          autoComplete="off"
          value={weight}
          aria-describedby={error ? errorId : undefined}
          onChange={(e) => setWeight(e.target.value)}
          onKeyDown={(e) => {
            const next = stepWeight(weight, e.key);
            if (next !== null) {
              e.preventDefault();
              setWeight(next);
            }
          }}
          data-testid="bulk-weight-input"
        />
        <button type="submit" className="button button--small" disabled={busy} data-testid="bulk-weight">
          {t('bulkbar.setWeight')}
        </button>
      </form>
      <form className="bulk-bar__field" onSubmit={setGroupOfAll} noValidate>
        <label htmlFor={groupId}>{t('bulkbar.group')}</label>
        <input
          id={groupId}
          className="input"
          autoComplete="off"
          placeholder={t('bulkbar.groupHint')}
          value={group}
          aria-describedby={error ? errorId : undefined}
          onChange={(e) => setGroup(e.target.value)}
          data-testid="bulk-group-input"
        />
        <button type="submit" className="button button--small" disabled={busy} data-testid="bulk-group">
          {t('bulkbar.setGroup')}
        </button>
      </form>
      {error && (
        <p id={errorId} className="form-error bulk-bar__error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
