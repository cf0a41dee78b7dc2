import { Field } from '../../components/Field';
import { useI18n } from '../../i18n/I18nProvider';
import type { Provider } from '../../ipc/bindings';
import { ModelCombobox } from '../models/ModelCombobox';
import { initialModel } from './models';

interface Props {
  providers: Provider[];
  providerId: string;
  model: string;
  onChange: (choice: { providerId: string; model: string }) => void;
  error?: string;
  testId: string;
}

/**
 * A provider and a model: the provider's own models and those its models endpoint lists,
 * searchable, or any name typed.
 */
export function ModelPicker({ providers, providerId, model, onChange, error, testId }: Props) {
  const { t } = useI18n();
  const provider = providers.find((p) => p.id === providerId);
  return (
    <>
      <Field label={t('chat.provider')} testId={`${testId}-provider`}>
        {({ id }) => (
          <select
            id={id}
            className="input select"
            value={providerId}
            onChange={(e) => {
              const next = providers.find((p) => p.id === e.target.value);
              onChange({ providerId: e.target.value, model: initialModel(next) });
            }}
            data-testid={`${testId}-provider-select`}
          >
            {providers.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </select>
        )}
      </Field>
      {provider && (
        <ModelCombobox
          key={provider.id}
          providerId={provider.id}
          configured={provider.models}
          value={model}
          onChange={(next) => onChange({ providerId, model: next })}
          label={t('chat.model')}
          error={error}
          testId={`${testId}-model`}
        />
      )}
    </>
  );
}
