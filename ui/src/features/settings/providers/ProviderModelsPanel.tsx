import { useId, useMemo, useState } from 'react';
import type { ListModelsForArgs } from '../../../ipc/bindings';
import { llmConfigApi } from '../../../ipc/llmConfig';
import { Icon } from '../../../components/Icon';
import { formatClockTime } from '../../../i18n/format';
import { useI18n } from '../../../i18n/I18nProvider';
import { errorText } from '../../../i18n/problems';
import { matchingModels } from '../../models/modelOptions';
import { type ModelListLoad, useModelListFrom } from '../../models/useModelList';

/**
 * Whose models: a saved provider's, or those of the provider the Add form describes (`args` reads
 * the form as it is when the user asks, so typing does not ask again).
 */
export type ModelsSource = { providerId: string } | { unsaved: () => ListModelsForArgs };

interface Props {
  source: ModelsSource;
  /** The models in the form now. */
  chosen: readonly string[];
  /** Adds (`on`) or removes a model from the form's list. */
  onToggle: (model: string, on: boolean) => void;
}

/**
 * The models the provider's models endpoint lists (as the provider is saved, or as the Add form
 * describes it), asked on request: searchable, each a checkbox that puts it in the provider's
 * list or takes it out. Models the endpoint does not list are typed in the list field beside it.
 */
export function ProviderModelsPanel({ source, chosen, onToggle }: Props) {
  const { t, intlTag } = useI18n();
  const headingId = useId();
  const statusId = useId();
  /** The load asked for; a new one (a refresh of an unsaved provider) asks again. */
  const [load, setLoad] = useState<ModelListLoad | null>(null);
  const asked = load !== null;
  const [query, setQuery] = useState('');
  const { state, listed, refresh: refreshSaved } = useModelListFrom(load);
  const unsaved = 'unsaved' in source;
  // A saved provider's list is asked by id; an unsaved one's with the form's values at the click.
  const ask = () => {
    if ('unsaved' in source) {
      const args = source.unsaved();
      setLoad(() => () => llmConfigApi.listModelsFor(args));
    } else {
      const { providerId } = source;
      setLoad(() => (refresh: boolean) => llmConfigApi.listModels(providerId, refresh));
    }
  };
  const refresh = unsaved ? ask : refreshSaved;
  const shown = useMemo(() => matchingModels(listed, query), [listed, query]);

  return (
    <section className="models-panel" aria-labelledby={headingId} data-testid="provider-models-panel">
      <div className="models-panel__header">
        <h4 id={headingId}>{t('models.fromProvider')}</h4>
        {asked ? (
          <button
            type="button"
            className="button button--small"
            aria-busy={state.kind === 'loading' || undefined}
            disabled={state.kind === 'loading'}
            onClick={refresh}
            data-testid="provider-models-refresh"
          >
            <Icon name="refresh" size={14} />
            {t('models.refreshShort')}
          </button>
        ) : (
          <button type="button" className="button button--small" onClick={ask} data-testid="provider-models-list">
            <Icon name="refresh" size={14} />
            {t('models.list')}
          </button>
        )}
      </div>
      {!asked && <p className="field__hint">{t(unsaved ? 'models.listHintUnsaved' : 'models.listHint')}</p>}
      {asked && (
        <>
          {listed.length > 0 && (
            <input
              type="search"
              className="input"
              aria-label={t('models.search')}
              placeholder={t('models.search')}
              aria-describedby={statusId}
              value={query}
              onChange={(e) => setQuery(e.target.value)}
              data-testid="provider-models-search"
            />
          )}
          <p
            id={statusId}
            className={`field__hint${state.kind === 'failed' ? ' model-combobox__failed' : ''}`}
            role={state.kind === 'failed' ? 'alert' : 'status'}
            data-testid="provider-models-status"
            data-state={state.kind}
          >
            {state.kind === 'loading' && t('models.loading')}
            {state.kind === 'failed' && t('models.failed', { message: errorText(t, state.error) })}
            {state.kind === 'loaded' &&
              (state.list.models.length === 0
                ? t('models.noneListedSettings')
                : t('models.listed', { count: state.list.models.length, time: formatClockTime(state.list.fetchedAt, Date.now(), intlTag) }))}
            {listed.length > 0 && shown.length === 0 && ` ${t('models.noMatch')}`}
          </p>
          {shown.length > 0 && (
            <ul className="models-panel__list" aria-labelledby={headingId}>
              {shown.map((model) => (
                <li key={model}>
                  <label className="models-panel__item">
                    <input type="checkbox" checked={chosen.includes(model)} onChange={(e) => onToggle(model, e.target.checked)} data-testid="provider-models-option" />
                    <code>{model}</code>
                  </label>
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </section>
  );
}
