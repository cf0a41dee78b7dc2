import { Field } from '../../components/Field';
import { useI18n } from '../../i18n/I18nProvider';
import type { Provider } from '../../ipc/bindings';
import { initialModel, modelOptions } from './models';

interface Props {
  providers: Provider[];
  providerId: string;
  model: string;
  onChange: (choice: { providerId: string; model: string }) => void;
  error?: string;
  testId: string;
}

/** A provider and one of its models; a free text model when the provider lists none. */
export function ModelPicker({ providers, providerId, model, onChange, error, testId }: Props) {
  const { t } = useI18n();
  const provider = providers.find((p) => p.id === providerId);
  const options = modelOptions(provider);
  return (
    <div className="field-row field-row--even">
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
      <Field label={t('chat.model')} hint={options.length === 0 ? t('chat.modelHint') : undefined} error={error} testId={`${testId}-model`}>
        {({ id, describedBy, invalid }) =>
          options.length > 0 ? (
            <select
              id={id}
              className="input select"
              value={model}
              onChange={(e) => onChange({ providerId, model: e.target.value })}
              data-testid={`${testId}-model-select`}
            >
              {options.map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </select>
          ) : (
            <input
              id={id}
              className="input"
              value={model}
              aria-invalid={invalid || undefined}
              aria-describedby={describedBy}
              onChange={(e) => onChange({ providerId, model: e.target.value })}
              data-testid={`${testId}-model-input`}
            />
          )
        }
      </Field>
    </div>
  );
}
