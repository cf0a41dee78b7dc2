import { useId, useState } from 'react';
import { Dialog } from '../../../components/Dialog';
import { Icon } from '../../../components/Icon';
import { useConfirmation } from '../../../hooks/useConfirmation';
import { useI18n } from '../../../i18n/I18nProvider';
import type { Provider } from '../../../ipc/bindings';
import { llmConfigApi, type ProviderChanges } from '../../../ipc/llmConfig';
import { ApiKeyPoolSection } from '../api-keys/ApiKeyPoolSection';
import { worded } from '../../../forms/fieldErrors';
import { DeleteProviderDialog } from './DeleteProviderDialog';
import { HostChangeDialog } from './HostChangeDialog';
import { hostMoveOf, hostMoveOfError, movesKeys, type HostMove } from './hostChange';
import { toChanges, toNewProvider, type FormErrors, type ProviderForm } from './providerForm';
import { ProviderFormFields } from './ProviderFormFields';
import { useProviders } from '../../../hooks/useProviders';
import { errorText } from '../../../i18n/problems';
import { preferences } from '../../../preferences';

type Mode = { kind: 'view' } | { kind: 'add' } | { kind: 'edit' } | { kind: 'delete' };

/** Settings → Providers: the provider list; the chosen provider's settings and key pool. */
export function ProvidersSection() {
  const { t } = useI18n();
  const titleId = useId();
  const { state, providers, reload } = useProviders();
  // Opens on the provider shown last (kept with the other preferences), while it exists.
  const [chosen, setChosenState] = useState<string | null>(preferences.provider);
  const setChosen = (id: string | null) => {
    setChosenState(id);
    if (id !== null) preferences.setProvider(id);
  };
  const [mode, setMode] = useState<Mode>({ kind: 'view' });
  const [announcement, setAnnouncement] = useState('');
  const hostChange = useConfirmation<HostMove>();

  const provider = providers.find((p) => p.id === chosen) ?? providers[0];

  const translated = (errors: FormErrors) => worded(errors, t);

  async function add(form: ProviderForm) {
    const checked = toNewProvider(form);
    if (!checked.ok) return { ok: false as const, errors: translated(checked.errors) };
    const created = await llmConfigApi.addProvider(checked.value);
    setChosen(created.id);
    reload();
    setMode({ kind: 'view' });
    setAnnouncement(t('provider.added', { name: created.name }));
    return { ok: true as const };
  }

  async function update(current: Provider, form: ProviderForm) {
    const checked = toChanges(form, current);
    if (!checked.ok) return { ok: false as const, errors: translated(checked.errors) };
    if (Object.keys(checked.value).length > 0) {
      // The user kept the keys where they are: nothing is saved, the form stays as typed.
      if (!(await save(current, checked.value))) return { ok: false as const, errors: {} };
      reload();
      setAnnouncement(t('provider.saved'));
    }
    setMode({ kind: 'view' });
    return { ok: true as const };
  }

  /**
   * Saves `changes`; when they would send the provider's keys to another host, only after the
   * user agreed: asked up front when the UI can tell, else from the backend's refusal (the
   * authority). False when the user said no.
   */
  async function save(current: Provider, changes: ProviderChanges): Promise<boolean> {
    if (movesKeys(current, changes)) {
      const poolKeys = current.keyCount > 0 ? await llmConfigApi.getApiKeys(current.id) : [];
      if (!(await hostChange.ask(hostMoveOf(current, changes, poolKeys)))) return false;
      await llmConfigApi.updateProvider(current.id, { ...changes, confirmHostChange: true });
      return true;
    }
    try {
      await llmConfigApi.updateProvider(current.id, changes);
    } catch (error) {
      const move = hostMoveOfError(error);
      if (!move) throw error;
      if (!(await hostChange.ask(move))) return false;
      await llmConfigApi.updateProvider(current.id, { ...changes, confirmHostChange: true });
    }
    return true;
  }

  return (
    <div className="providers" data-testid="providers-section">
      <header className="section-header section-header--row">
        <div>
          <h2 id={titleId}>{t('providers.title')}</h2>
          <p className="muted">{t('providers.intro')}</p>
        </div>
        <button type="button" className="button" onClick={() => setMode({ kind: 'add' })} data-testid="add-provider">
          <Icon name="plus" size={16} />
          {t('providers.add')}
        </button>
      </header>
      <p className="visually-hidden" role="status" aria-live="polite" data-testid="providers-announcement">
        {announcement}
      </p>
      {state.kind === 'loading' && (
        <p className="muted" aria-busy="true">
          {t('providers.loading')}
        </p>
      )}
      {state.kind === 'failed' && (
        <div className="form-error" role="alert">
          <p>{t('providers.loadFailed', { message: errorText(t, state.error) })}</p>
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
                    onClick={() => {
                      setChosen(p.id);
                      if (mode.kind === 'edit') setMode({ kind: 'view' });
                    }}
                    data-testid={`provider-${p.id}`}
                  >
                    <span className="provider-list__name">{p.name}</span>
                    <span className="provider-list__count" aria-hidden="true">
                      {p.keyCount}
                    </span>
                    <span className="visually-hidden">{t('providers.keyCount', { count: p.keyCount })}</span>
                  </button>
                </li>
              ))}
            </ul>
          </nav>
          <div className="provider-detail" key={provider.id}>
            {mode.kind === 'edit' ? (
              <section className="provider-card" aria-label={t('provider.editTitle', { name: provider.name })} data-testid="provider-settings">
                <h3 className="provider-card__heading">{t('provider.editTitle', { name: provider.name })}</h3>
                <ProviderFormFields
                  provider={provider}
                  onSubmit={(form) => update(provider, form)}
                  onCancel={() => setMode({ kind: 'view' })}
                  submitLabel={t('provider.save')}
                  testId="provider-form"
                />
              </section>
            ) : (
              <ProviderSettings provider={provider} onEdit={() => setMode({ kind: 'edit' })} onDelete={() => setMode({ kind: 'delete' })} />
            )}
            <ApiKeyPoolSection provider={provider} />
          </div>
        </div>
      )}
      {mode.kind === 'add' && (
        <Dialog title={t('provider.addTitle')} onClose={() => setMode({ kind: 'view' })} testId="add-provider-dialog">
          <ProviderFormFields onSubmit={add} onCancel={() => setMode({ kind: 'view' })} submitLabel={t('provider.create')} testId="add-provider-form" />
        </Dialog>
      )}
      {hostChange.question && <HostChangeDialog move={hostChange.question} onAnswer={hostChange.answer} />}
      {mode.kind === 'delete' && provider && (
        <DeleteProviderDialog
          provider={provider}
          onConfirm={async () => {
            const { deletedKeys } = await llmConfigApi.deleteProvider(provider.id);
            setChosen(null);
            reload();
            setAnnouncement(t('provider.deleted', { name: provider.name, count: deletedKeys }));
          }}
          onClose={() => setMode({ kind: 'view' })}
        />
      )}
    </div>
  );
}

/** A provider's own settings as stored, with Edit and Delete. */
function ProviderSettings({ provider, onEdit, onDelete }: { provider: Provider; onEdit: () => void; onDelete: () => void }) {
  const { t } = useI18n();
  return (
    <section className="provider-card" aria-label={provider.name} data-testid="provider-settings">
      <div className="provider-card__title">
        <h3>{provider.name}</h3>
        <span className="tag">{t(`providers.kind.${provider.kind}`)}</span>
        <span className="provider-card__actions">
          <button type="button" className="button" onClick={onEdit} data-testid="provider-edit">
            <Icon name="pencil" size={16} />
            {t('provider.edit')}
          </button>
          <button type="button" className="button button--quiet-danger" onClick={onDelete} data-testid="provider-delete">
            <Icon name="trash" size={16} />
            {t('provider.delete')}
          </button>
        </span>
      </div>
      <dl className="provider-card__fields">
        <dt>{t('provider.baseUrl')}</dt>
        <dd>
          <code data-testid="provider-base-url">{provider.baseUrl}</code>
        </dd>
        <dt>{t('provider.providerKey')}</dt>
        <dd data-testid="provider-key">
          {provider.apiKeyPreview ? (
            <>
              <code>{provider.apiKeyPreview}</code>
              <span className="muted"> · {t('provider.providerKeyFallback')}</span>
            </>
          ) : provider.local && provider.keylessRefused !== null && provider.keyCount === 0 ? (
            // Its address says a key is not needed; what it answered says otherwise.
            <span className="form-error" data-testid="provider-key-refused">
              {t('provider.keylessRefused', { status: provider.keylessRefused })}
            </span>
          ) : provider.local ? (
            <span className="muted">{t('provider.noKeyNeeded')}</span>
          ) : (
            <>
              <span className="muted">{t('provider.noProviderKey')}</span>
              <span className="muted"> · {t('provider.providerKeyFallback')}</span>
            </>
          )}
        </dd>
        <dt>{t('systemPrompt.label')}</dt>
        <dd data-testid="provider-system-prompt">
          {provider.systemPrompt ? (
            <span className="provider-card__prompt" title={provider.systemPrompt}>
              {provider.systemPrompt}
            </span>
          ) : (
            <span className="muted">{t('provider.noSystemPrompt')}</span>
          )}
        </dd>
        <dt>{t('provider.models')}</dt>
        <dd data-testid="provider-models">
          {provider.models.length === 0 ? (
            <span className="muted">{t('provider.noModels')}</span>
          ) : (
            <span className="provider-card__models">
              {provider.models.map((m) => (
                <code key={m} className={m === provider.defaultModel ? 'model model--default' : 'model'}>
                  {m}
                  {m === provider.defaultModel && <span className="muted"> · {t('provider.defaultTag')}</span>}
                </code>
              ))}
            </span>
          )}
        </dd>
      </dl>
    </section>
  );
}
