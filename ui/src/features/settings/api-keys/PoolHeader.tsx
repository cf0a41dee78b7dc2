import type { Ref } from 'react';
import { Icon } from '../../../components/Icon';
import { useI18n } from '../../../i18n/I18nProvider';
import { formatCount } from '../../../i18n/format';

interface Props {
  titleId: string;
  /** The keys switched on and all of them; null while there is nothing to count. */
  counts: { enabled: number; total: number } | null;
  onImport: () => void;
  onAdd: () => void;
  /** Add key: where focus goes back when a dialog's own opener is gone. */
  addButton: Ref<HTMLButtonElement>;
}

/** The pool's title, how many keys are on, and the ways to add keys. */
export function PoolHeader({ titleId, counts, onImport, onAdd, addButton }: Props) {
  const { t, intlTag } = useI18n();
  return (
    <header className="pool__header">
      <div>
        <h3 id={titleId}>{t('pool.title')}</h3>
        {counts && (
          <p className="muted pool__summary" data-testid="pool-summary">
            {t('pool.summary', { enabled: formatCount(counts.enabled, intlTag), total: formatCount(counts.total, intlTag) })}
          </p>
        )}
      </div>
      <div className="pool__actions">
        <button type="button" className="button" aria-haspopup="dialog" onClick={onImport} data-testid="import-keys">
          <Icon name="paste" size={16} />
          {t('pool.import')}
        </button>
        <button ref={addButton} type="button" className="button button--primary" onClick={onAdd} data-testid="add-key">
          <Icon name="plus" size={16} />
          {t('pool.add')}
        </button>
      </div>
    </header>
  );
}
