import type { MessageKey } from '../../../i18n';
import { type AddProviderArgs, LIMITS, type ListModelsForArgs, type Provider, type ProviderKind } from '../../../ipc/bindings';
import type { ProviderChanges } from '../../../ipc/llmConfig';
import { apiKeySchema } from '../../../forms/parsers';
import { systemPromptTooLong } from '../../../components/SystemPromptField';

/*
 * The provider form: what is typed, checked against the backend's rules that need no more than
 * the form (a name within `LIMITS.providerName`, the key rules, the default model among the
 * models, the system prompt's length), and turned into exactly the fields `llmConfig:addProvider`
 * / `updateProvider` take. The base URL is the backend's to judge (https anywhere, plain http only
 * to this machine or a local network): its issue is shown at the field. Pure.
 */

export interface ProviderForm {
  name: string;
  kind: ProviderKind;
  baseUrl: string;
  /** A new provider-level key; empty keeps the stored one (or sets none). */
  apiKey: string;
  /** Remove the stored provider-level key on save. */
  removeKey: boolean;
  /** One model per line, or separated by commas. */
  models: string;
  defaultModel: string;
  /** The system prompt new chats with this provider start with; empty for none. */
  systemPrompt: string;
  /**
   * The user says the base URL's host is on their own network: the backend asks for it
   * (`plain_http_needs_consent` at `onMyNetwork`) for plain http to any host but this machine.
   */
  onMyNetwork: boolean;
}

export const FORM_FIELDS = ['name', 'kind', 'baseUrl', 'onMyNetwork', 'apiKey', 'models', 'defaultModel', 'systemPrompt'] as const;
export type FormField = (typeof FORM_FIELDS)[number];

export function emptyForm(): ProviderForm {
  return { name: '', kind: 'openai', baseUrl: '', apiKey: '', removeKey: false, models: '', defaultModel: '', systemPrompt: '', onMyNetwork: false };
}

export function formOf(provider: Provider): ProviderForm {
  return {
    name: provider.name,
    kind: provider.kind,
    baseUrl: provider.baseUrl,
    apiKey: '',
    removeKey: false,
    models: provider.models.join('\n'),
    defaultModel: provider.defaultModel ?? '',
    systemPrompt: provider.systemPrompt ?? '',
    onMyNetwork: false,
  };
}

/** Models from a line-or-comma list: trimmed, blanks dropped, each once, in the order typed. */
export function parseModels(text: string): string[] {
  const seen = new Set<string>();
  for (const part of text.split(/[\n,]/)) {
    const model = part.trim();
    if (model) seen.add(model);
  }
  return [...seen];
}

export type FormErrors = Partial<Record<FormField, MessageKey>>;

function check(form: ProviderForm): { errors: FormErrors; models: string[] } {
  const errors: FormErrors = {};
  const name = form.name.trim();
  if (name === '') errors.name = 'error.nameRequired';
  else if ([...name].length > LIMITS.providerName.maxChars) errors.name = 'error.nameTooLong';
  if (form.apiKey.trim() !== '') {
    const key = apiKeySchema.safeParse(form.apiKey);
    if (!key.success) errors.apiKey = key.error.issues[0].message as MessageKey;
  }
  const models = parseModels(form.models);
  const defaultModel = form.defaultModel.trim();
  if (defaultModel && !models.includes(defaultModel)) errors.defaultModel = 'error.defaultModelNotListed';
  if (systemPromptTooLong(form.systemPrompt)) errors.systemPrompt = 'error.systemPromptTooLong';
  return { errors, models };
}

export type Checked<T> = { ok: true; value: T } | { ok: false; errors: FormErrors };

/** A new provider: optional fields only when given. */
export function toNewProvider(form: ProviderForm): Checked<AddProviderArgs> {
  const { errors, models } = check(form);
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  const apiKey = form.apiKey.trim();
  const defaultModel = form.defaultModel.trim();
  const systemPrompt = form.systemPrompt.trim();
  return {
    ok: true,
    value: {
      name: form.name.trim(),
      kind: form.kind,
      baseUrl: form.baseUrl.trim(),
      ...(apiKey ? { apiKey } : {}),
      ...(models.length > 0 ? { models } : {}),
      ...(defaultModel ? { defaultModel } : {}),
      ...(systemPrompt ? { systemPrompt } : {}),
      ...(form.onMyNetwork ? { onMyNetwork: true } : {}),
    },
  };
}

/**
 * What asks a provider not saved yet for its models: the form's kind and address, its key when
 * one is typed, and the user's word about their network (the backend checks all as on add).
 */
export function unsavedModelsArgs(form: ProviderForm): ListModelsForArgs {
  const apiKey = form.apiKey.trim();
  return { kind: form.kind, baseUrl: form.baseUrl.trim(), ...(apiKey ? { apiKey } : {}), ...(form.onMyNetwork ? { onMyNetwork: true } : {}) };
}

/** Only what changed: a new key, `apiKey: ""` to remove it, `defaultModel: ""` / `systemPrompt: ""` to clear them. */
export function toChanges(form: ProviderForm, provider: Provider): Checked<ProviderChanges> {
  const { errors, models } = check(form);
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  const changes: ProviderChanges = {};
  const name = form.name.trim();
  const baseUrl = form.baseUrl.trim();
  const apiKey = form.apiKey.trim();
  const defaultModel = form.defaultModel.trim();
  if (name !== provider.name) changes.name = name;
  if (form.kind !== provider.kind) changes.kind = form.kind;
  if (baseUrl !== provider.baseUrl) {
    changes.baseUrl = baseUrl;
    if (form.onMyNetwork) changes.onMyNetwork = true;
  }
  if (apiKey) changes.apiKey = apiKey;
  else if (form.removeKey && provider.apiKeyPreview) changes.apiKey = '';
  if (models.join('\n') !== provider.models.join('\n')) changes.models = models;
  if (defaultModel !== (provider.defaultModel ?? '')) changes.defaultModel = defaultModel;
  const systemPrompt = form.systemPrompt.trim();
  if (systemPrompt !== (provider.systemPrompt ?? '')) changes.systemPrompt = systemPrompt;
  return { ok: true, value: changes };
}

/**
 * Where a backend issue belongs: its path's field (`models[1]` goes to models, naming the
 * model); anything else above the form.
 */
export function fieldOfIssue(path: string): FormField | null {
  const base = path.replace(/\[\d+\]$/, '');
  return (FORM_FIELDS as readonly string[]).includes(base) ? (base as FormField) : null;
}

/** The 1-based position in `models[1]`, for saying which model is wrong. */
export function modelIndexOf(path: string): number | null {
  const match = /^models\[(\d+)\]$/.exec(path);
  return match ? Number(match[1]) + 1 : null;
}
