import { useId, useRef, useState } from 'react';
import { ConfirmDeleteDialog } from '../../components/ConfirmDeleteDialog';
import { useI18n } from '../../i18n/I18nProvider';
import { formatNumber } from '../../i18n/problems';
import { usageApi } from '../../ipc/usage';

/**
 * Two cells of the General grid: deleting the whole usage history at once (the retention above
 * deletes it day by day), after a confirmation, and saying how many records went.
 */
export function UsageHistoryPurge() {
  const { t } = useI18n();
  const labelId = useId();
  const button = useRef<HTMLButtonElement>(null);
  const [asking, setAsking] = useState(false);
  const [deleted, setDeleted] = useState<number | null>(null);

  return (
    <>
      <span id={labelId}>{t('general.usageHistory')}</span>
      <div className="general__inline">
        <button
          ref={button}
          type="button"
          className="button button--quiet-danger"
          aria-describedby={labelId}
          onClick={() => {
            setDeleted(null);
            setAsking(true);
          }}
          data-testid="usage-purge"
        >
          {t('general.usagePurge')}
        </button>
        <span className="general__status" role="status" data-testid="usage-purge-status">
          {deleted === null ? '' : t('general.usagePurged', { count: formatNumber(t, deleted) })}
        </span>
      </div>
      {asking && (
        <ConfirmDeleteDialog
          title={t('general.usagePurgeTitle')}
          body={t('general.usagePurgeBody')}
          confirmLabel={t('general.usagePurgeConfirm')}
          failure={(message) => t('general.usagePurgeFailed', { message })}
          testId="usage-purge"
          onConfirm={async () => setDeleted((await usageApi.purge()).attempts)}
          onClose={() => setAsking(false)}
          returnFocus={() => button.current}
        />
      )}
    </>
  );
}
