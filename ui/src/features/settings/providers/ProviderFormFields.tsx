import { useEffect, useRef, useState, type FormEvent } from 'react';
import { Field } from '../../../components/Field';
import { FormActions } from '../../../components/FormActions';
import { useI18n } from '../../../i18n/I18nProvider';
import { PROVIDER_KINDS, type Provider, type ProviderKind } from '../../../ipc/bindings';
import { IpcError } from '../../../ipc/client';
import { errorText, issueText } from '../../../i18n/problems';
import { SystemPromptField } from '../../../components/SystemPromptField';
import { ProviderModelsPanel } from './ProviderModelsPanel';
import { emptyForm, unsavedModelsArgs, fieldOfIssue, formOf, FORM_FIELDS, modelIndexOf, parseModels, type FormField, type ProviderForm } from './providerForm';

interface Props {
  /** The provider edited; none when adding one. */
  provider?: Provider;
  /** Saves the checked form; rejects with the backend's error. `form` is the typed form. */
  onSubmit: (form: ProviderForm) => Promise<{ ok: true } | { ok: false; errors: Partial<Record<FormField, string>> }>;
  onCancel: () => void;
  submitLabel: string;
  testId: string;
}

/** What a base URL of each kind looks like: its default (OpenAI's before /chat/completions, Anthropic's and Gemini's the host root). */
const BASE_URL_EXAMPLES = Object.fromEntries(PROVIDER_KINDS.map((kind) => [kind.id, kind.defaultBaseUrl])) as Record<ProviderKind, string>;

/**
 * The provider's fields: name, kind, base URL, the provider-level key (a password field; empty
 * keeps the stored one), models and the default model. Errors, the client's or the backend's, at
 * their fields.
 */
export function ProviderFormFields({ provider, onSubmit, onCancel, submitLabel, testId }: Props) {
  const { t } = useI18n();
  const [form, setForm] = useState<ProviderForm>(() => (provider ? formOf(provider) : emptyForm()));
  const [errors, setErrors] = useState<Partial<Record<FormField, string>>>({});
  const [formError, setFormError] = useState<string>();
  const [saving, setSaving] = useState(false);
  const refs = {
    name: useRef<HTMLInputElement>(null),
    kind: useRef<HTMLSelectElement>(null),
    baseUrl: useRef<HTMLInputElement>(null),
    onMyNetwork: useRef<HTMLInputElement>(null),
    apiKey: useRef<HTMLInputElement>(null),
    models: useRef<HTMLTextAreaElement>(null),
    defaultModel: useRef<HTMLSelectElement>(null),
    systemPrompt: useRef<HTMLDivElement>(null),
  };
  const models = parseModels(form.models);
  // Asked for by the backend once (plain http to another machine), then kept in view; focus
  // goes to it once it is there.
  const [askedNetwork, setAskedNetwork] = useState(false);
  useEffect(() => {
    if (askedNetwork) refs.onMyNetwork.current?.focus();
  }, [askedNetwork, refs.onMyNetwork]);

  function update<K extends keyof ProviderForm>(field: K, value: ProviderForm[K]) {
    setForm((f) => ({ ...f, [field]: value }));
    if (field in errors) setErrors(({ [field as FormField]: _, ...rest }) => rest);
  }

  /** Another kind: an empty base URL, or one still another kind's default, becomes the new kind's default (a user picks "DeepSeek", not a URL). */
  function chooseKind(kind: ProviderKind) {
    update('kind', kind);
    setForm((f) => {
      const url = f.baseUrl.trim();
      const someDefault = url === '' || PROVIDER_KINDS.some((k) => k.defaultBaseUrl === url);
      return someDefault ? { ...f, baseUrl: BASE_URL_EXAMPLES[kind] } : f;
    });
  }

  function show(placed: Partial<Record<FormField, string>>) {
    setErrors(placed);
    if (placed.onMyNetwork) setAskedNetwork(true);
    const first = FORM_FIELDS.find((f) => placed[f]);
    const target = first ? refs[first].current : null;
    // The system prompt's ref is its wrapper: focus the text area inside.
    (target instanceof HTMLDivElement ? target.querySelector('textarea') : target)?.focus();
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (saving) return;
    setFormError(undefined);
    setSaving(true);
    try {
      const result = await onSubmit(form);
      if (!result.ok) {
        show(result.errors);
        setSaving(false);
        return;
      }
      setForm((f) => ({ ...f, apiKey: '' })); // the secret is stored: drop it
    } catch (error) {
      const placed: Partial<Record<FormField, string>> = {};
      if (error instanceof IpcError) {
        for (const issue of error.issues) {
          const field = fieldOfIssue(issue.path);
          if (!field || placed[field]) continue;
          const index = modelIndexOf(issue.path);
          placed[field] = index ? t('provider.modelIssue', { position: index, message: issueText(t, issue) }) : issueText(t, issue);
        }
      }
      if (Object.keys(placed).length > 0) show(placed);
      else setFormError(errorText(t, error));
    }
    setSaving(false);
  }

  return (
    <form className="provider-form" onSubmit={submit} noValidate data-testid={testId}>
      {formError && (
        <p className="form-error" role="alert" data-testid={`${testId}-error`}>
          {formError}
        </p>
      )}
      <div className="field-row field-row--even">
        <Field label={t('provider.name')} error={errors.name} testId="provider-name">
          {({ id, describedBy, invalid }) => (
            <input
              ref={refs.name}
              id={id}
              className="input"
              aria-invalid={invalid || undefined}
              aria-describedby={describedBy}
              value={form.name}
              onChange={(e) => update('name', e.target.value)}
              data-testid="provider-name-input"
            />
          )}
        </Field>
        <Field label={t('provider.kind')} error={errors.kind} testId="provider-kind">
          {({ id, describedBy, invalid }) => (
            <select
              ref={refs.kind}
              id={id}
              className="input select"
              aria-invalid={invalid || undefined}
              aria-describedby={describedBy}
              value={form.kind}
              onChange={(e) => chooseKind(e.target.value as ProviderKind)}
              data-testid="provider-kind-select"
            >
              {PROVIDER_KINDS.map(({ id }) => (
                <option key={id} value={id}>
                  {t(`providers.kind.${id}`)}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <Field label={t('provider.baseUrl')} hint={t('provider.baseUrlHint')} error={errors.baseUrl} testId="provider-baseurl">
        {({ id, describedBy, invalid }) => (
          <input
            ref={refs.baseUrl}
            id={id}
            className="input input--mono"
            inputMode="url"
            spellCheck={false}
            autoCapitalize="off"
            placeholder={BASE_URL_EXAMPLES[form.kind]}
            aria-invalid={invalid || undefined}
            aria-describedby={describedBy}
            value={form.baseUrl}
            onChange={(e) => update('baseUrl', e.target.value)}
            data-testid="provider-baseurl-input"
          />
        )}
      </Field>
      {askedNetwork && (
        <Field label={t('provider.onMyNetwork')} hint={t('provider.onMyNetworkWarning')} error={errors.onMyNetwork} testId="provider-onmynetwork">
          {({ id, describedBy, invalid }) => (
            <input
              ref={refs.onMyNetwork}
              id={id}
              type="checkbox"
              aria-invalid={invalid || undefined}
              aria-describedby={describedBy}
              checked={form.onMyNetwork}
              onChange={(e) => update('onMyNetwork', e.target.checked)}
              data-testid="provider-onmynetwork-input"
            />
          )}
        </Field>
      )}
      <Field
        label={
          <>
            {t('provider.providerKey')} <span className="field__optional">({t('add.optional')})</span>
          </>
        }
        hint={
          form.removeKey
            ? t('provider.keyWillBeRemoved')
            : provider?.apiKeyPreview
              ? t('provider.apiKeyKeep', { preview: provider.apiKeyPreview })
              : t('provider.apiKeyHint')
        }
        error={errors.apiKey}
        testId="provider-apikey"
      >
        {({ id, describedBy, invalid }) => (
          <div className="input-with-button">
            <input
              ref={refs.apiKey}
              id={id}
              className="input input--mono"
              type={form.apiKey.trim().startsWith('$') ? 'text' : 'password'}
              autoComplete="off"
              spellCheck={false}
              autoCapitalize="off"
              disabled={form.removeKey}
              aria-invalid={invalid || undefined}
              aria-describedby={describedBy}
              value={form.apiKey}
              onChange={(e) => update('apiKey', e.target.value)}
              data-testid="provider-apikey-input"
            />
            {provider?.apiKeyPreview && (
              <button
                type="button"
                className="button"
                aria-pressed={form.removeKey}
                onClick={() => setForm((f) => ({ ...f, apiKey: '', removeKey: !f.removeKey }))}
                data-testid="provider-remove-key"
              >
                {form.removeKey ? t('provider.undoRemove') : t('provider.removeKey')}
              </button>
            )}
          </div>
        )}
      </Field>
      <div className="field-row field-row--even">
        <Field label={t('provider.models')} hint={t('provider.modelsHint')} error={errors.models} testId="provider-models">
          {({ id, describedBy, invalid }) => (
            <textarea
              ref={refs.models}
              id={id}
              className="input textarea textarea--short input--mono"
              spellCheck={false}
              aria-invalid={invalid || undefined}
              aria-describedby={describedBy}
              value={form.models}
              onChange={(e) => update('models', e.target.value)}
              data-testid="provider-models-input"
            />
          )}
        </Field>
        <Field label={t('provider.defaultModel')} error={errors.defaultModel} testId="provider-default-model">
          {({ id, describedBy, invalid }) => (
            <select
              ref={refs.defaultModel}
              id={id}
              className="input select"
              aria-invalid={invalid || undefined}
              aria-describedby={describedBy}
              value={form.defaultModel}
              onChange={(e) => update('defaultModel', e.target.value)}
              data-testid="provider-default-model-select"
            >
              <option value="">{t('provider.defaultModelNone')}</option>
              {form.defaultModel && !models.includes(form.defaultModel.trim()) && <option value={form.defaultModel}>{form.defaultModel}</option>}
              {models.map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <ProviderModelsPanel
        // A new provider is asked at the form's address, with the form's key if one is typed.
        source={provider ? { providerId: provider.id } : { unsaved: () => unsavedModelsArgs(form) }}
        chosen={models}
        onToggle={(model, on) => update('models', (on ? [...models, model] : models.filter((m) => m !== model)).join('\n'))}
      />
      <div ref={refs.systemPrompt}>
        <SystemPromptField
          value={form.systemPrompt}
          onChange={(value) => update('systemPrompt', value)}
          hint={t('systemPrompt.providerHint')}
          error={errors.systemPrompt}
          testId="provider-system-prompt"
        />
      </div>
      <FormActions onCancel={onCancel} busy={saving} label={submitLabel} busyLabel={t('provider.saving')} testId={`${testId}-submit`} cancelTestId={`${testId}-cancel`} />
    </form>
  );
}
