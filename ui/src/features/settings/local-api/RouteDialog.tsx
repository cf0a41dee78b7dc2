import { useEffect, useId, useRef, useState } from 'react';
import { Dialog } from '../../../components/Dialog';
import { Field } from '../../../components/Field';
import { FormActions } from '../../../components/FormActions';
import { useI18n } from '../../../i18n/I18nProvider';
import { errorText, issueText } from '../../../i18n/problems';
import type { Provider, RouteInput } from '../../../ipc/bindings';
import { LIMITS } from '../../../ipc/bindings';
import { llmConfigApi } from '../../../ipc/llmConfig';
import { providerModels, routeIssues } from './routes';

interface Props {
  /** The route being edited, or null to add one. */
  route: RouteInput | null;
  /** Its place in the list (the end for a new one): where the backend's issues point. */
  index: number;
  providers: readonly Provider[];
  /** Saves the route; rejects with the backend's refusal, which the form shows at its fields. */
  onSave: (route: RouteInput) => Promise<unknown>;
  onClose: () => void;
}

/**
 * Adds or edits one route: the models it takes (a glob), the provider it sends them to, and the
 * model that provider is asked for (suggested: its own list and default, and what its models
 * endpoint lists, asked once per provider chosen and kept by the backend). A refused save is shown at the
 * field it is about; the dialog stays open.
 */
export function RouteDialog({ route, index, providers, onSave, onClose }: Props) {
  const { t } = useI18n();
  const [model, setModel] = useState(route?.model ?? '');
  const [provider, setProvider] = useState(route?.provider ?? providers.find((p) => p.answerable)?.id ?? providers[0]?.id ?? '');
  const [toModel, setToModel] = useState(route?.toModel ?? '');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const first = useRef<HTMLInputElement>(null);
  const listId = useId();
  const issues = routeIssues(error, index);
  const known = providers.some((p) => p.id === provider);
  const [listed, setListed] = useState<{ provider: string; models: string[] } | null>(null);
  useEffect(() => {
    if (!known) return;
    let live = true;
    llmConfigApi.listModels(provider).then(
      (list) => live && setListed({ provider, models: list.models }),
      // No list (a server not running, a refusal): its own models are still suggested.
      () => live && setListed(null),
    );
    return () => {
      live = false;
    };
  }, [provider, known]);
  const own = providerModels(providers.find((p) => p.id === provider));
  const suggestions = [...own, ...(listed?.provider === provider ? listed.models.filter((m) => !own.includes(m)) : [])];
  // What the fields cannot show: a refusal that is not about one of them.
  const general = error && Object.keys(issues).length === 0 ? errorText(t, error) : undefined;

  async function submit(event: React.FormEvent) {
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    setError(undefined);
    try {
      await onSave({ model: model.trim(), provider, toModel: toModel.trim() });
      onClose();
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  }

  return (
    <Dialog title={t(route ? 'routes.editTitle' : 'routes.addTitle')} onClose={onClose} initialFocus={first} testId="route-dialog">
      <form onSubmit={(e) => void submit(e)} noValidate>
        <Field label={t('routes.pattern')} hint={t('routes.patternHint')} error={issues.model && issueText(t, issues.model)} testId="route-pattern">
          {({ id, describedBy, invalid }) => (
            <input
              ref={first}
              id={id}
              className="input input--mono"
              value={model}
              onChange={(e) => setModel(e.target.value)}
              aria-describedby={describedBy}
              aria-invalid={invalid || undefined}
              maxLength={LIMITS.modelName.maxBytes}
              spellCheck={false}
              autoComplete="off"
              placeholder="claude-*"
              data-testid="route-pattern-input"
            />
          )}
        </Field>
        <Field label={t('routes.provider')} error={issues.provider && issueText(t, issues.provider)} testId="route-provider">
          {({ id, describedBy, invalid }) => (
            <select
              id={id}
              className="input select"
              value={provider}
              onChange={(e) => setProvider(e.target.value)}
              aria-describedby={describedBy}
              aria-invalid={invalid || undefined}
              data-testid="route-provider-select"
            >
              {!known && <option value={provider}>{t('routes.deletedProvider')}</option>}
              {providers.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.answerable ? p.name : t('routes.providerNoKey', { provider: p.name })}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label={t('routes.toModel')} hint={t('routes.toModelHint')} error={issues.toModel && issueText(t, issues.toModel)} testId="route-to-model">
          {({ id, describedBy, invalid }) => (
            <>
              <input
                id={id}
                className="input input--mono"
                value={toModel}
                onChange={(e) => setToModel(e.target.value)}
                aria-describedby={describedBy}
                aria-invalid={invalid || undefined}
                list={suggestions.length > 0 ? listId : undefined}
                maxLength={LIMITS.modelName.maxBytes}
                spellCheck={false}
                autoComplete="off"
                data-testid="route-to-model-input"
              />
              {suggestions.length > 0 && (
                <datalist id={listId}>
                  {suggestions.map((m) => (
                    <option key={m} value={m} />
                  ))}
                </datalist>
              )}
            </>
          )}
        </Field>
        {general && (
          <p className="form-error" role="alert" data-testid="route-dialog-error">
            {general}
          </p>
        )}
        <FormActions onCancel={onClose} busy={busy} label={t(route ? 'routes.save' : 'routes.add')} busyLabel={t('routes.saving')} testId="route-save" cancelTestId="route-cancel" />
      </form>
    </Dialog>
  );
}
