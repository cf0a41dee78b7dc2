import { Icon } from '../../../components/Icon';
import { useI18n } from '../../../i18n/I18nProvider';
import type { AddedKeys } from './useAddedKeys';

interface Props {
  /** Said politely to assistive technology (a key saved, moved, deleted). */
  announcement: string;
  /** An action that failed, shown above the list. */
  problem: string | undefined;
  /** Keys just added, said where they can be seen. */
  added: AddedKeys | null;
}

/** What the section says about what was just done. */
export function PoolMessages({ announcement, problem, added }: Props) {
  const { t } = useI18n();
  return (
    <>
      <p className="visually-hidden" role="status" aria-live="polite" data-testid="pool-announcement">
        {announcement}
      </p>
      {problem && (
        <p className="form-error" role="alert" data-testid="pool-problem">
          {problem}
        </p>
      )}
      <p className={added ? 'pool__notice' : 'visually-hidden'} role="status" data-testid="pool-added">
        {added && (
          <>
            <Icon name="check" size={16} />
            {t('pool.addedMany', { count: added.count })}
          </>
        )}
      </p>
    </>
  );
}
