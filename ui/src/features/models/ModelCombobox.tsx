import { useEffect, useId, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { Icon } from '../../components/Icon';
import { formatClockTime } from '../../i18n/format';
import { useI18n } from '../../i18n/I18nProvider';
import { errorText } from '../../i18n/problems';
import { matchingModels, mergedModels } from './modelOptions';
import { useModelList, type ModelListState } from './useModelList';

interface Props {
  providerId: string;
  /** The provider's own list (Settings → Providers), offered first. */
  configured: readonly string[];
  value: string;
  onChange: (model: string) => void;
  label: string;
  error?: string;
  testId: string;
}

/**
 * A model: typed freely (for servers that list nothing, or a model they do not list), or picked
 * from the provider's models, which typing searches. An ARIA combobox with its list always shown
 * below it: ArrowUp/ArrowDown move through the matches, Enter picks one, Escape shows all again.
 * Left empty and untouched, it takes the first model offered once there is one.
 */
export function ModelCombobox({ providerId, configured, value, onChange, label, error, testId }: Props) {
  const { t } = useI18n();
  const id = useId();
  const listId = `${id}-list`;
  const statusId = `${id}-status`;
  const errorId = `${id}-error`;
  const { state, listed, refresh } = useModelList(providerId);
  /** What the user typed to search; null shows every model (the value was picked, or nothing typed). */
  const [query, setQuery] = useState<string | null>(null);
  const [active, setActive] = useState(-1);
  const list = useRef<HTMLDivElement>(null);

  const models = useMemo(() => mergedModels(configured, listed), [configured, listed]);
  const shown = useMemo(() => matchingModels(models, query ?? ''), [models, query]);
  const activeModel = shown[active];

  // Nothing chosen yet and the user has not typed: the first model offered (a provider with no
  // models of its own that lists some would otherwise leave Model empty under "lists 1 model").
  const firstModel = models[0];
  useEffect(() => {
    if (value === '' && query === null && firstModel !== undefined) onChange(firstModel);
  }, [value, query, firstModel, onChange]);

  // Keep the active option (or the chosen one) in view inside the list.
  useEffect(() => {
    const index = active >= 0 ? active : shown.indexOf(value);
    const option = index >= 0 ? list.current?.children[index] : undefined;
    (option as HTMLElement | undefined)?.scrollIntoView?.({ block: 'nearest' });
  }, [active, shown, value]);

  function pick(model: string) {
    onChange(model);
    setQuery(null);
    setActive(-1);
  }

  function onKeyDown(event: KeyboardEvent<HTMLInputElement>) {
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      if (shown.length === 0) return;
      const from = active >= 0 ? active : shown.indexOf(value);
      const step = event.key === 'ArrowDown' ? 1 : -1;
      setActive(from < 0 ? (step > 0 ? 0 : shown.length - 1) : (from + step + shown.length) % shown.length);
    } else if (event.key === 'Enter' && activeModel !== undefined) {
      event.preventDefault(); // picks the option; Enter without one submits the form
      pick(activeModel);
    } else if (event.key === 'Escape' && (query !== null || active >= 0)) {
      event.stopPropagation(); // first Escape leaves the search; the next closes the dialog
      setQuery(null);
      setActive(-1);
    }
  }

  const describedBy = [error ? errorId : null, statusId].filter(Boolean).join(' ');
  return (
    <div className={`field model-combobox${error ? ' field--invalid' : ''}`} data-testid={testId}>
      <label className="field__label" htmlFor={id}>
        {label}
      </label>
      <div className="input-with-button">
        <input
          id={id}
          className="input input--mono"
          role="combobox"
          aria-expanded="true"
          aria-controls={listId}
          aria-autocomplete="list"
          aria-activedescendant={activeModel !== undefined ? `${id}-option-${active}` : undefined}
          aria-invalid={error ? true : undefined}
          aria-describedby={describedBy}
          autoComplete="off"
          spellCheck={false}
          autoCapitalize="off"
          placeholder={t('models.placeholder')}
          value={value}
          onChange={(e) => {
            onChange(e.target.value);
            setQuery(e.target.value);
            setActive(-1);
          }}
          onKeyDown={onKeyDown}
          data-testid={`${testId}-input`}
        />
        <button
          type="button"
          className="icon-button"
          aria-label={t('models.refresh')}
          title={t('models.refresh')}
          aria-busy={state.kind === 'loading' || undefined}
          disabled={state.kind === 'loading'}
          onClick={refresh}
          data-testid={`${testId}-refresh`}
        >
          <Icon name="refresh" size={18} />
        </button>
      </div>
      {error && (
        <p className="field__error" id={errorId} data-testid={`${testId}-error`}>
          {error}
        </p>
      )}
      <div id={listId} ref={list} className="model-combobox__list" role="listbox" aria-label={t('models.listLabel', { label })} data-testid={`${testId}-options`}>
        {shown.map((model, index) => (
          // biome-ignore lint/a11y/useKeyWithClickEvents: the keyboard moves through options from the combobox input (aria-activedescendant)
          <div
            key={model}
            id={`${id}-option-${index}`}
            role="option"
            tabIndex={-1}
            aria-selected={model === value}
            className={`model-combobox__option${index === active ? ' model-combobox__option--active' : ''}`}
            onMouseDown={(e) => e.preventDefault()}
            onClick={() => pick(model)}
            data-testid={`${testId}-option`}
          >
            {model}
          </div>
        ))}
      </div>
      <ModelListStatus id={statusId} state={state} count={models.length} shown={shown.length} typed={value.trim()} known={models.includes(value.trim())} testId={`${testId}-status`} />
    </div>
  );
}

/** Where the list stands: fetched when, being asked, failed (why), or empty; and a typed name not listed. */
function ModelListStatus({
  id,
  state,
  count,
  shown,
  typed,
  known,
  testId,
}: { id: string; state: ModelListState; count: number; shown: number; typed: string; known: boolean; testId: string }) {
  const { t, intlTag } = useI18n();
  const lines: string[] = [];
  if (state.kind === 'loading') lines.push(t('models.loading'));
  else if (state.kind === 'failed') lines.push(t('models.failed', { message: errorText(t, state.error) }));
  else if (state.kind === 'loaded') {
    const at = formatClockTime(state.list.fetchedAt, Date.now(), intlTag);
    lines.push(state.list.models.length === 0 ? t('models.noneListed') : t('models.listed', { count: state.list.models.length, time: at }));
  }
  if (count > 0 && shown === 0) lines.push(t('models.noMatch'));
  if (typed && !known && (state.kind !== 'loading' || count > 0)) lines.push(t('models.manual', { model: typed }));
  return (
    <p id={id} className={`field__hint${state.kind === 'failed' ? ' model-combobox__failed' : ''}`} role={state.kind === 'failed' ? 'alert' : undefined} data-testid={testId} data-state={state.kind}>
      {lines.join(' ')}
    </p>
  );
}
