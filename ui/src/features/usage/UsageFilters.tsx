import { useId } from 'react';
import type { MessageKey } from '../../i18n';
import { useI18n } from '../../i18n/I18nProvider';
import type { Provider } from '../../ipc/bindings';
import { RANGE_CHOICES, type RangeChoice } from './usageRange';

const RANGE_LABELS: Record<RangeChoice, MessageKey> = {
  today: 'usagePage.rangeToday',
  week: 'usagePage.range7',
  month: 'usagePage.range30',
  quarter: 'usagePage.range90',
};

interface Props {
  range: RangeChoice;
  onRange: (range: RangeChoice) => void;
  providers: readonly Provider[];
  /** Undefined: every provider. */
  providerId: string | undefined;
  onProvider: (providerId: string | undefined) => void;
}

/**
 * Which period and which provider the page shows. The periods are a radio group drawn as a
 * segmented control: one Tab stop, arrows move between them, as the platform's own do.
 */
export function UsageFilters({ range, onRange, providers, providerId, onProvider }: Props) {
  const { t } = useI18n();
  const name = useId();
  const providerField = useId();
  return (
    <div className="usage-filters">
      <fieldset className="segmented" data-testid="usage-range">
        <legend className="visually-hidden">{t('usagePage.range')}</legend>
        {RANGE_CHOICES.map((choice) => (
          <label key={choice} className="segmented__option">
            <input
              type="radio"
              name={name}
              value={choice}
              checked={range === choice}
              onChange={() => onRange(choice)}
              data-testid={`usage-range-${choice}`}
            />
            <span>{t(RANGE_LABELS[choice])}</span>
          </label>
        ))}
      </fieldset>
      <div className="usage-filters__provider">
        <label htmlFor={providerField}>{t('usagePage.provider')}</label>
        <select
          id={providerField}
          className="input select"
          value={providerId ?? ''}
          onChange={(e) => onProvider(e.target.value === '' ? undefined : e.target.value)}
          data-testid="usage-provider"
        >
          <option value="">{t('usagePage.allProviders')}</option>
          {providers.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
        </select>
      </div>
    </div>
  );
}
