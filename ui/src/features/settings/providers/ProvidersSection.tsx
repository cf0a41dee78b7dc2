import { useId, useState } from 'react';
import { useI18n } from '../../../i18n/I18nProvider';
import type { Provider } from '../../../ipc/llmConfig';
import { ApiKeyPoolSection } from '../api-keys/ApiKeyPoolSection';
import { useProviders } from './useProviders';

/** Settings → Providers: the provider list; the chosen provider's settings and key pool. */
export function ProvidersSection() {
  const { t } = useI18n();
  const titleId = useId();
  const { state, reload } = useProviders();
  const [chosen, setChosen] = useState<string | null>(null);

  const providers = state.kind === 'loaded' ? state.providers : [];
  const provider = providers.find((p) => p.id === chosen) ?? providers[0];

  return (
    <div className="providers" data-testid="providers-section">
      <header className="section-header">
        <h2 id={titleId}>{t('providers.title')}</h2>
        <p className="muted">{t('providers.intro')}</p>
      </header>
      {state.kind === 'loading' && (
        <p className="muted" aria-busy="true">
          {t('providers.loading')}
        </p>
      )}
      {state.kind === 'failed' && (
        <div className="form-error" role="alert">
          <p>{t('providers.loadFailed', { message: state.error.message })}</p>
          <button type="button" className="button" onClick={reload}>
            {t('providers.retry')}
          </button>
        </div>
      )}
      {provider && (
        <div className="providers__layout">
          <nav className="provider-list" aria-labelledby={titleId}>
            <ul>
              {providers.map((p) => (
                <li key={p.id}>
                  <button
                    type="button"
                    className="provider-list__item"
                    aria-current={p.id === provider.id ? 'true' : undefined}
                    onClick={() => setChosen(p.id)}
                    data-testid={`provider-${p.id}`}
                  >
                    <span className="provider-list__name">{p.name}</span>
                    <span className="provider-list__count" aria-label={t('providers.keyCount', { count: p.keyCount })}>
                      {p.keyCount}
                    </span>
                  </button>
                </li>
              ))}
            </ul>
          </nav>
          <div className="provider-detail" key={provider.id}>
            <ProviderSettings provider={provider} />
            <ApiKeyPoolSection provider={provider} />
          </div>
        </div>
      )}
    </div>
  );
}

/** A provider's own settings, read-only until provider editing arrives. */
function ProviderSettings({ provider }: { provider: Provider }) {
  const { t } = useI18n();
  return (
    <section className="provider-card" aria-label={provider.name} data-testid="provider-settings">
      <div className="provider-card__title">
        <h3>{provider.name}</h3>
        <span className="tag">{t(provider.kind === 'anthropic' ? 'providers.kind.anthropic' : 'providers.kind.openai')}</span>
      </div>
      <dl className="provider-card__fields">
        <dt>{t('provider.baseUrl')}</dt>
        <dd>
          <code data-testid="provider-base-url">{provider.baseUrl}</code>
        </dd>
        <dt>{t('provider.providerKey')}</dt>
        <dd data-testid="provider-key">
          {provider.apiKeyPreview ? <code>{provider.apiKeyPreview}</code> : <span className="muted">{t('provider.noProviderKey')}</span>}
          <span className="muted"> · {t('provider.providerKeyFallback')}</span>
        </dd>
      </dl>
      <p className="muted provider-card__note">{t('provider.readOnly')}</p>
    </section>
  );
}
