import { Icon } from '../../../components/Icon';
import { useI18n } from '../../../i18n/I18nProvider';
import type { Provider } from '../../../ipc/bindings';

/** An empty pool explained: what keys and weights do, and what is used while there are none. */
export function PoolEmpty({ provider }: { provider: Provider }) {
  const { t } = useI18n();
  return (
    <div className="pool__empty" data-testid="pool-empty">
      <span className="pool__empty-icon" aria-hidden="true">
        <Icon name="key" size={28} />
      </span>
      <h4>{t('pool.emptyTitle')}</h4>
      <p>{t('pool.emptyBody')}</p>
      <p>{t('pool.emptyWeights')}</p>
      <p className="pool__fallback" data-testid="pool-fallback">
        {provider.apiKeyPreview
          ? t('pool.emptyFallbackSet', { preview: provider.apiKeyPreview })
          : provider.local && provider.keylessRefused !== null
            ? t('pool.emptyLocalRefused', { status: provider.keylessRefused })
            : provider.local
              ? t('pool.emptyLocal')
            : t('pool.emptyFallbackUnset')}
      </p>
    </div>
  );
}
