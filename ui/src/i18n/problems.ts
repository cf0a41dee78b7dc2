import { formatCountdown } from '../clock';
import type { AgentFile, BlockedKeyInfo, BreakageKind, ErrorDetails, Issue, IssueCode, ProbeProblem, Provider, ReplyError } from '../ipc/bindings';
import { IpcError } from '../ipc/client';
import type { MessageKey, Vars } from '.';
import { formatClockTime, formatCount } from './format';

/*
 * Everything the backend reports wrong, worded in the UI's language from codes, parameters and
 * details. The backend's `message` is English meant for logs: it is shown only for a code this
 * build does not know. What a provider said (its refusal) is its own words and is shown quoted.
 * Pure: `t`, and for times `now` (backend clock) and the Intl tag, are passed in.
 */

export type Translate = (key: MessageKey, vars?: Vars) => string;

/** The wording of each issue code; a function where the parameters choose the words. */
const ISSUE_KEYS: Record<IssueCode, MessageKey> = {
  required: 'issue.required',
  not_null: 'issue.notNull',
  wrong_type: 'issue.wrongType',
  unknown_field: 'issue.unknownField',
  not_an_object: 'issue.notAnObject',
  blank: 'issue.blank',
  too_short: 'issue.tooShort',
  too_long: 'issue.tooLong',
  too_small: 'issue.tooSmall',
  too_large: 'issue.tooLarge',
  key_has_spaces: 'error.apiKeySpaces',
  bad_env_name: 'error.envName',
  bad_url: 'issue.badUrl',
  not_https: 'issue.notHttps',
  http_not_local: 'error.baseUrlPlainHttp',
  plain_http_needs_consent: 'error.plainHttpNeedsConsent',
  azure_resource_url: 'error.azureResourceUrl',
  bedrock_region_url: 'error.bedrockRegionUrl',
  bad_proxy: 'error.badProxy',
  no_host: 'issue.noHost',
  not_a_model: 'error.defaultModelNotListed',
  ids_mismatch: 'issue.idsMismatch',
  nothing_to_change: 'issue.nothingToChange',
  provider_deleted: 'issue.providerDeleted',
  nothing_to_answer: 'issue.nothingToAnswer',
  no_models: 'issue.noModels',
  no_keys_found: 'issue.noKeysFound',
  keys_of_several_providers: 'issue.keysOfSeveralProviders',
  bad_glob: 'issue.badGlob',
  unknown_provider: 'issue.unknownProvider',
  token_mismatch: 'issue.tokenMismatch',
  token_required: 'issue.tokenRequired',
  local_api_off: 'issue.localApiOff',
  bad_token_name: 'issue.badTokenName',
  token_name_taken: 'issue.tokenNameTaken',
  expiry_passed: 'issue.expiryPassed',
  no_key_helper: 'issue.noKeyHelper',
  no_folder_trust: 'issue.noFolderTrust',
  range_order: 'issue.rangeOrder',
  too_many_buckets: 'issue.tooManyBuckets',
  cannot_write: 'issue.cannotWrite',
  unsupported_file: 'issue.unsupportedFile',
  file_too_large: 'issue.fileTooLarge',
  image_unreadable: 'issue.imageUnreadable',
  image_too_large: 'issue.imageTooLarge',
  host_change: 'issue.hostChange',
  name_taken: 'error.nameTaken',
  bad_redis_url: 'issue.badRedisUrl',
  bad_team_name: 'issue.badTeamName',
  bad_team_secret: 'issue.badTeamSecret',
  invalid: 'issue.invalid',
};

/** The value kinds `wrong_type` names, in words. */
const TYPE_KEYS: Record<string, MessageKey> = {
  string: 'type.text',
  integer: 'type.integer',
  number: 'type.number',
  boolean: 'type.boolean',
  list: 'type.list',
  array: 'type.list',
  object: 'type.object',
};

/** A number as the UI's language writes it (`100,000`, `100 000`). */
export function formatNumber(t: Translate, n: number): string {
  return formatCount(n, t('intl.tag'));
}

/** Bytes as megabytes, as the UI's language writes numbers (`20`, `1`, `0.5`). */
export function formatMegabytes(t: Translate, bytes: number): string {
  return new Intl.NumberFormat(t('intl.tag'), { maximumFractionDigits: 1 }).format(bytes / (1024 * 1024));
}

/** Pixels as megapixels, as the UI's language writes numbers (`132`, `36`, `0.5`). */
export function formatMegapixels(t: Translate, pixels: number): string {
  return new Intl.NumberFormat(t('intl.tag'), { maximumFractionDigits: 1 }).format(pixels / 1_000_000);
}

/** One issue, without naming its field (for showing at the field). */
export function issueText(t: Translate, issue: Issue): string {
  const key = ISSUE_KEYS[issue.code] as MessageKey | undefined;
  if (!key) return issue.message; // a code this build does not know: the English fallback
  const params = issue.params ?? {};
  switch (issue.code) {
    case 'wrong_type': {
      const expected = params.expected;
      if (!expected) return t('issue.invalid');
      const typeKey = TYPE_KEYS[expected];
      return t(key, { expected: typeKey ? t(typeKey) : expected });
    }
    case 'too_short':
    case 'too_small':
      return params.min === undefined ? t('issue.invalid') : t(key, { min: formatNumber(t, params.min) });
    case 'too_long':
    case 'too_large':
    case 'too_many_buckets':
      return params.max === undefined ? t('issue.invalid') : t(key, { max: formatNumber(t, params.max) });
    case 'bad_team_secret':
      return params.count === undefined ? t('team.secretFormat') : t(key, { count: formatNumber(t, params.count) });
    case 'cannot_write':
      return params.reason ? t('issue.cannotWriteBecause', { reason: params.reason }) : t(key);
    case 'file_too_large':
      return params.max === undefined ? t('issue.invalid') : t(key, { max: formatMegabytes(t, params.max) });
    case 'image_unreadable':
      return params.reason ? t('issue.imageUnreadableBecause', { reason: params.reason }) : t(key);
    case 'image_too_large':
      return params.count === undefined || params.max === undefined ? t('issue.invalid') : t(key, { pixels: formatMegapixels(t, params.count), max: formatMegapixels(t, params.max) });
    case 'invalid':
      // The reason is the system's own words (e.g. from a library); better than nothing.
      return params.reason ? t('issue.invalidBecause', { reason: params.reason }) : t(key);
    default:
      return t(key);
  }
}

/** The fields the UI sends, by the path an issue names, for issues shown away from their field. */
const FIELD_KEYS: Record<string, MessageKey> = {
  name: 'provider.name',
  kind: 'provider.kind',
  baseUrl: 'provider.baseUrl',
  apiKey: 'add.apiKey',
  label: 'add.label',
  quotaGroup: 'add.quotaGroup',
  weight: 'add.weight',
  rpmLimit: 'limits.rpm',
  maxConcurrent: 'limits.concurrent',
  models: 'provider.models',
  defaultModel: 'provider.defaultModel',
  systemPrompt: 'systemPrompt.label',
  title: 'chat.titleLabel',
  model: 'chat.model',
  providerId: 'chat.provider',
  content: 'chat.composerLabel',
  'request.content': 'chat.composerLabel',
  'request.attachments': 'attach.listLabel',
  data: 'attach.file',
  maxWaitSeconds: 'general.maxWait',
  bindingIdleMinutes: 'general.bindingIdle',
  usageRetentionDays: 'general.usageRetention',
  port: 'localApi.port',
  redisUrl: 'team.redisUrl',
  team: 'team.name',
  secret: 'team.secret',
  'rules.budget': 'namedTokens.budget',
  'rules.requestsPerMinute': 'namedTokens.rpm',
  'rules.tokensPerMinute': 'namedTokens.tpm',
  'rules.maxInFlight': 'namedTokens.inFlight',
  'rules.models': 'namedTokens.models',
  'rules.expiresAt': 'namedTokens.expires',
  'routes.model': 'routes.pattern',
  'routes.provider': 'routes.provider',
  'routes.toModel': 'routes.toModel',
  'route.model': 'routes.pattern',
  'route.provider': 'routes.provider',
  'route.toModel': 'routes.toModel',
};

/** The field an issue is about, in words; the path itself when the UI has no name for it. */
export function fieldName(t: Translate, path: string): string {
  const base = path.replace(/\[\d+\]/g, '');
  const key = FIELD_KEYS[base];
  return key ? t(key) : path;
}

/** An issue with its field named, for a message shown above a form or on its own. */
export function issueWithField(t: Translate, issue: Issue): string {
  const text = issueText(t, issue);
  return issue.path === '' ? text : t('issue.atField', { field: fieldName(t, issue.path), issue: text });
}

/** How a connection or a reply broke, as a sentence. */
export function breakageText(t: Translate, breakage: BreakageKind): string {
  const keys: Record<BreakageKind, MessageKey> = {
    connect: 'breakage.connect',
    timeout: 'breakage.timeout',
    body: 'breakage.body',
    request: 'breakage.request',
    not_json: 'breakage.notJson',
    no_text: 'breakage.noText',
    ended_early: 'breakage.endedEarly',
    too_large: 'breakage.tooLarge',
    stream: 'breakage.stream',
    prompt_blocked: 'breakage.promptBlocked',
    reply_blocked: 'breakage.replyBlocked',
  };
  return t(keys[breakage] ?? 'breakage.stream');
}

/** What a provider answered, quoted: its own words; nothing when it said nothing. */
function quoted(t: Translate, message: string | null | undefined): string {
  const words = message?.trim();
  return words ? ` ${t('provider.said', { message: words })}` : '';
}

/**
 * Why asking a provider failed (a key test, a model list). `message` is the provider's words on
 * a refusal, shown quoted; for other problems it is the backend's English and is not shown.
 */
export function probeText(t: Translate, problem: ProbeProblem, status: number | null, message: string): string {
  switch (problem.kind) {
    case 'envUnset':
      return t('probe.envUnset', { name: problem.var });
    case 'redirected':
      return status === null ? t('probe.redirectedNoStatus') : t('probe.redirected', { status });
    case 'refused':
      return (status === null ? t('probe.refusedNoStatus') : t('probe.refused', { status })) + quoted(t, message);
    case 'unreachable':
      return breakageText(t, problem.breakage);
    case 'unreadable':
      return t('probe.unreadable');
    case 'outOfCredit':
      return t('probe.outOfCredit');
    default:
      return message;
  }
}

const NOT_FOUND_KEYS: Record<string, MessageKey> = {
  chat: 'notFound.chat',
  provider: 'notFound.provider',
  'API key': 'notFound.key',
  message: 'notFound.message',
  'price for model': 'notFound.price',
};

function detailsText(t: Translate, details: ErrorDetails): string | null {
  switch (details.kind) {
    case 'notFound':
      return t(NOT_FOUND_KEYS[details.what] ?? 'notFound.other');
    case 'conflict':
      return t(details.conflict === 'duplicate_key' ? 'conflict.duplicateKey' : 'conflict.replyInProgress');
    case 'upstream':
      return probeText(t, details.problem, details.status, details.message);
    case 'hostChange':
      return t('issue.hostChange');
    case 'agentFile':
      return agentFileText(t, details.file);
    default:
      return null;
  }
}

/** Why a coding agent's file stops Connect or Disconnect, naming the file. */
export function agentFileText(t: Translate, file: AgentFile): string {
  const { path, problem } = file;
  switch (problem.kind) {
    case 'malformed':
      return t('agentFile.malformed', { path, reason: problem.reason });
    case 'unreadable':
      return t('agentFile.unreadable', { path, reason: problem.reason });
    case 'unwritable':
      return t('agentFile.unwritable', { path, reason: problem.reason });
    case 'changed':
      return t('agentFile.changed', { path });
    default:
      return path;
  }
}

/**
 * Any rejection of a command, in words: validation issues with their fields, the rest from the
 * code and details. The English `message` only for a code this build does not know.
 */
export function errorText(t: Translate, error: unknown): string {
  if (!(error instanceof IpcError)) return t('error.unexpected');
  if (error.code === 'validation' && error.issues.length > 0) return error.issues.map((issue) => issueWithField(t, issue)).join(' ');
  const fromDetails = error.details ? detailsText(t, error.details) : null;
  if (fromDetails) return fromDetails;
  switch (error.code) {
    case 'validation':
      return t('issue.invalid');
    case 'not_found':
      return t('notFound.other');
    case 'conflict':
      return t('conflict.other');
    case 'storage':
      return t('error.storage');
    case 'provider':
      return t('error.provider');
    case 'no_available_key':
      return t('error.noAvailableKey');
    case 'internal':
      return t('error.internal');
    default:
      return error.message;
  }
}

/** The issue at `path`, in words, for showing at its field. */
export function fieldError(t: Translate, error: unknown, path: string): string | undefined {
  if (!(error instanceof IpcError)) return undefined;
  const issue = error.issueAt(path);
  return issue ? issueText(t, issue) : undefined;
}

/** What a reply error's wording needs to say when: the backend's time now and the language. */
export interface Clock {
  /** The backend's time now (ms since the epoch). */
  now: number;
  intlTag: string;
}

/** One blocked key, as a clause of the "all keys are busy" sentence. */
export function blockedKeyText(t: Translate, key: BlockedKeyInfo, clock: Clock): string {
  const name = key.name;
  const left = key.until === null ? null : key.until - clock.now;
  const at = key.until === null ? '' : formatClockTime(key.until, clock.now, clock.intlTag);
  switch (key.state) {
    case 'tried':
      return t('blocked.tried', { name });
    case 'cooling':
      if (left === null) return t('blocked.coolingNoTime', { name });
      return left > 0 ? t('blocked.cooling', { name, time: formatCountdown(left) }) : t('blocked.freeNow', { name });
    case 'spent':
      if (left === null) return t('blocked.spentNoTime', { name });
      return left > 0 ? t('blocked.spent', { name, time: formatCountdown(left) }) : t('blocked.freeNow', { name });
    case 'used_up':
      // The day's end, as a time of day in the user's zone: hours away, a countdown says less.
      if (key.until === null) return t('blocked.usedUpNoTime', { name });
      return left !== null && left > 0 ? t('blocked.usedUp', { name, time: at }) : t('blocked.freeNow', { name });
    case 'busy':
      return t('blocked.busy', { name });
    case 'disabled':
      return key.status === null ? t('blocked.off', { name }) : t('blocked.disabled', { name, status: key.status });
    case 'exhausted':
      return key.until === null ? t('blocked.exhaustedNoCheck', { name }) : t('blocked.exhausted', { name, time: at });
    default:
      return name;
  }
}

/**
 * A failed reply, worded: the sentences in order, for one paragraph. With the chat's `provider`,
 * a pool of disabled keys also says whether its provider-level key was tried (it is used only
 * while the pool is empty, which surprises when the pool holds only dead keys).
 */
export function replyErrorText(t: Translate, error: ReplyError, clock: Clock, provider?: Pick<Provider, 'apiKeyPreview'>): string {
  switch (error.kind) {
    case 'noKeys':
      return t('reply.noKeys', { provider: error.provider });
    case 'providerKeyUnresolved':
      return t('reply.providerKeyUnresolved', { provider: error.provider, name: error.var });
    case 'allBlocked': {
      const clauses = error.keys.map((key) => blockedKeyText(t, key, clock));
      const allDisabled = error.keys.length > 0 && error.keys.every((key) => key.state === 'disabled');
      const keys = clauses.join(t('list.separator'));
      const parts = [
        clauses.length === 0 ? t('reply.allBlockedNoKeys', { provider: error.provider }) : allDisabled ? t('reply.allDisabled', { provider: error.provider, keys }) : t('reply.allBlocked', { keys }),
      ];
      if (allDisabled && provider && provider.apiKeyPreview !== null) parts.push(t('reply.providerKeyNotTried'));
      if (error.firstFreeAt !== null && error.keys.filter((k) => k.until !== null).length > 1 && error.firstFreeAt > clock.now) {
        parts.push(t('reply.firstFree', { time: formatClockTime(error.firstFreeAt, clock.now, clock.intlTag) }));
      }
      if (error.last) parts.push(t('reply.lastAnswer', { status: error.last.status }) + quoted(t, error.last.message));
      return parts.join(' ');
    }
    case 'keyUnresolved':
      return t('reply.keyUnresolved', { key: error.key, name: error.var });
    case 'refused':
      return t('reply.refused', { status: error.status }) + quoted(t, error.message);
    case 'imagesRefused':
      return t('reply.imagesRefused', { status: error.status }) + quoted(t, error.message);
    case 'redirected':
      return t('reply.redirected', { status: error.status });
    case 'unreachable':
      return breakageText(t, error.breakage);
    case 'interrupted': {
      const why =
        error.breakage !== undefined
          ? breakageText(t, error.breakage)
          : error.status !== undefined
            ? t('reply.refused', { status: error.status }) + quoted(t, error.message)
            : '';
      return why ? `${t('reply.interrupted')} ${why}` : t('reply.interrupted');
    }
    case 'storage':
      return t('reply.storage');
    case 'other':
      // Saved before errors had codes: the English it was saved with is all there is.
      return error.message;
    default:
      return t('error.unexpected');
  }
}

/** The provider of the chat a reply failed in: what the UI knows of it, for saying why. */
export type ReplyProvider = Pick<Provider, 'id' | 'name' | 'baseUrl' | 'keyCount' | 'apiKeyPreview' | 'local'>;

/**
 * Whether a reply could not connect to a local server it went to without a key (Ollama for
 * Local, not running). The backend sends a request without a key only to a server on this
 * machine or a private network; a provider elsewhere with no key is refused before anything is
 * sent, as `noKeys`.
 */
export function keylessServerDown(error: ReplyError | null, provider: ReplyProvider | undefined): boolean {
  if (!error || !provider?.local || provider.keyCount > 0 || provider.apiKeyPreview !== null) return false;
  return error.kind === 'unreachable' || (error.kind === 'interrupted' && error.breakage !== undefined && error.status === undefined);
}

/** A local server that does not answer, in words: what to start, and where. */
export function keylessServerDownText(t: Translate, provider: ReplyProvider): string {
  const server = provider.id === 'local' ? 'Ollama' : provider.name;
  return t('reply.keylessServerDown', { server, address: provider.baseUrl, provider: provider.name });
}

/** The times a reply error counts down to, so its wording is redrawn as they pass. */
export function replyErrorDeadlines(error: ReplyError): number[] {
  if (error.kind !== 'allBlocked') return [];
  return error.keys.flatMap((key) => (key.until !== null && (key.state === 'cooling' || key.state === 'spent' || key.state === 'used_up') ? [key.until] : []));
}

/** Whether the reply error is about keys, so Settings → Providers is where to fix it. */
export function replyErrorNeedsSettings(error: ReplyError | null, code: string | null): boolean {
  if (error) return ['noKeys', 'providerKeyUnresolved', 'allBlocked', 'keyUnresolved'].includes(error.kind);
  return code === 'no_available_key';
}
