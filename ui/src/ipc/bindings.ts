// Generated from the Rust types of keypool-api (src-tauri/crates/api/src/ipc/bindings.rs).
// Do not edit by hand: `npm run bindings` rewrites it, and a test fails when it is stale.

export type AddApiKeyArgs = { providerId: string, label?: string, 
/**
 * The key itself, or `$NAME` for the environment variable NAME.
 */
apiKey: KeyArg, 
/**
 * Default true.
 */
enabled?: boolean, 
/**
 * Within `LIMITS.weight`, its default when absent.
 */
weight?: number, 
/**
 * At most this many requests per minute (`LIMITS.rpmLimit`), for providers that announce no
 * limits; absent: no limit.
 */
rpmLimit?: number, 
/**
 * At most this many requests at once (`LIMITS.maxConcurrent`); absent: no limit.
 */
maxConcurrent?: number, 
/**
 * The quota group the key shares its provider's limits with (e.g. its Google Cloud project),
 * at most `LIMITS.quotaGroup`; absent or blank: a group of its own.
 */
quotaGroup?: string, };

export type AddProviderArgs = { name: string, kind: ProviderKind, baseUrl: string, apiKey?: KeyArg, models?: Array<string>, 
/**
 * One of `models` (when it lists any).
 */
defaultModel?: string, 
/**
 * The system prompt new chats with this provider start with.
 */
systemPrompt?: string, 
/**
 * `true`: the base URL's host is on the user's own network. Required for plain `http` to
 * any host but this machine (the keys travel unencrypted); without it, a `validation` error
 * at `onMyNetwork` (`plain_http_needs_consent`).
 */
onMyNetwork?: boolean, };

/**
 * A coding agent Keypool can connect.
 */
export type Agent = "claudeCode" | "codex" | "geminiCli";

/**
 * What Connect did: the agents now, and the files it made readable by their owner only.
 */
export type AgentConnected = { agents: Agents, 
/**
 * Files others could read that now hold the token (0600), each with the mode it had
 * (Disconnect puts it back).
 */
tightened: Array<TightenedFile>, };

/**
 * Keypool's connection of an agent.
 */
export type AgentConnection = { connectedAt: number, 
/**
 * The model Connect set, if any.
 */
model: string | null, 
/**
 * The name of the agent's own token (a named token of the local API); `None` for a
 * connection made before agents had their own (it holds the local API's token).
 */
token: string | null, 
/**
 * Its key comes from Keypool's helper command, not from its files.
 */
keyHelper: boolean, 
/**
 * Connect turned its folder trust off (Disconnect puts the setting back).
 */
trustAllFolders: boolean, 
/**
 * Files changed since Connect wrote them (by the user or by the agent): Disconnect would
 * undo those changes too.
 */
changed: Array<string>, };

/**
 * An agent's file that stops Connect or Disconnect, as the UI is told of it.
 */
export type AgentFile = { path: string, problem: AgentFileProblem, };

/**
 * Why an agent's file stops Connect or Disconnect: not JSON or TOML it can be merged into (left
 * as it is), unreadable, unwritable, or changed since Connect (Disconnect would undo the change:
 * `force` it).
 */
export type AgentFileProblem = { "kind": "malformed", reason: string, } | { "kind": "unreadable", reason: string, } | { "kind": "unwritable", reason: string, } | { "kind": "changed" };

/**
 * One agent as the panel shows it.
 */
export type AgentState = { agent: Agent, 
/**
 * The files Connect writes (and Disconnect puts back).
 */
files: Array<string>, 
/**
 * Set while Keypool's Connect is in force.
 */
connection: AgentConnection | null, 
/**
 * Its files point it at this local API now (its address, whoever wrote them).
 */
pointsHere: boolean, 
/**
 * The token its files hold (or its key helper prints), compared with its own and the local
 * API's.
 */
token: AgentToken, 
/**
 * The model its files set, if any (none: its own default, `default_model`).
 */
model: string | null, defaultModel: string, 
/**
 * Where the model it will ask for (the one set, or its default) goes now.
 */
resolution: Resolution, 
/**
 * When the local API last heard from it (milliseconds since the epoch): its token's last
 * request, or the ledger's last by its user agent, whichever is later.
 */
lastCall: number | null, 
/**
 * A file of its that cannot be read or merged now.
 */
problem: AgentFile | null, 
/**
 * It reads the file with the address and token only in folders it trusts (Gemini CLI's
 * `~/.gemini/.env` while its folder trust is on): in any other folder it asks for a key.
 * Connect can turn the trust off (see [`ConnectOptions::trust_all_folders`]).
 */
trustedFoldersOnly: boolean, };

/**
 * The token an agent's files hold: none, its own, the local API's main one, or another.
 */
export type AgentToken = "none" | "own" | "main" | "other";

/**
 * Every agent, and the address Connect gives them.
 */
export type Agents = { agents: Array<AgentState>, 
/**
 * The address agents are given: `http://127.0.0.1:PORT`.
 */
address: string, };

/**
 * Settings → General's alerts: whether the desktop shows notifications now, and the keys lost
 * this run (the newest first), shown there or not.
 */
export type Alerts = { notifications: Notifications, recent: Array<RecentAlert>, };

/**
 * A pool key as the services show it: its value never, only a masked preview.
 */
export type ApiKey = { id: string, providerId: string, label: string | null, 
/**
 * `sk-…9f3a`, or a `$NAME` reference as written.
 */
apiKeyPreview: string, 
/**
 * The key is a `$NAME` reference to an environment variable.
 */
isEnvRef: boolean, enabled: boolean, 
/**
 * Within `LIMITS.weight`.
 */
weight: number, sortOrder: number, 
/**
 * Why the pool switched the key off (`HTTP 401`); `None` when the user did, or it is on.
 */
disabledReason: string | null, disabledAt: number | null, createdAt: number, updatedAt: number, 
/**
 * The user's limit of requests per minute; `None`: none.
 */
rpmLimit: number | null, 
/**
 * The user's limit of requests at once; `None`: none.
 */
maxConcurrent: number | null, 
/**
 * The quota group it shares its provider's limits with; `None`: a group of its own.
 */
quotaGroup: string | null, };

export type AppStatus = { version: string, dataDir: string, logDir: string, database: DatabaseStatus, 
/**
 * Where API keys are kept at rest; `null` while the database is not open.
 */
keychain: KeychainStatus | null, };

/**
 * `chat:attach`: a file the user attached, its bytes in base64. An image (PNG, JPEG, WebP, GIF;
 * the type is read from the bytes) of at most `LIMITS.imageFile`, or UTF-8 text of at most
 * `LIMITS.textFile`.
 */
export type AttachArgs = { name: string, data: string, };

/**
 * An image or a text file attached to a message. A view of its own: its `kind` is the store's
 * enum, which knows nothing of serde, named here.
 */
export type Attachment = { 
/**
 * Its content id: what `chat:send` and `chat:attachmentData` take.
 */
id: string, name: string, kind: AttachmentKind, 
/**
 * Read from the bytes: `image/png`, `image/jpeg`, `image/webp`, `image/gif` or `text/plain`.
 */
mediaType: string, 
/**
 * Bytes.
 */
size: number, 
/**
 * Images: pixels.
 */
width: number | null, height: number | null, };

/**
 * An attachment's bytes, base64, with their media type (for a `data:` URL).
 */
export type AttachmentData = { mediaType: string, data: string, };

/**
 * `chat:attachmentData`: an attachment's bytes, the original or (`thumbnail: true`, images) its
 * thumbnail.
 */
export type AttachmentDataArgs = { id: string, thumbnail?: boolean, };

export type AttachmentKind = "image" | "text";

/**
 * An attachment named in a message: the `id` `chat:attach` answered, the name to show.
 */
export type AttachmentRef = { id: string, name: string, };

/**
 * One key that could not serve the reply.
 */
export type BlockedKeyInfo = { 
/**
 * Its label, or its masked preview (`$NAME` as written).
 */
name: string, state: BlockedState, 
/**
 * When a cooling, spent or used-up key frees up, when an exhausted one is checked again.
 */
until: number | null, 
/**
 * The HTTP status that disabled it, when that is why it is off.
 */
status: number | null, 
/**
 * This reply already tried it.
 */
tried: boolean, };

export type BlockedState = "tried" | "cooling" | "spent" | "used_up" | "busy" | "disabled" | "exhausted" | "unavailable";

/**
 * How a connection or a reply broke.
 */
export type BreakageKind = "connect" | "timeout" | "body" | "request" | "not_json" | "no_text" | "ended_early" | "stream" | "too_large" | "prompt_blocked" | "reply_blocked";

/**
 * The size of a series' buckets.
 */
export type BucketArg = "hour" | "day";

/**
 * What a key (its quota group) has left for one model (or model class), as last announced:
 * e.g. 3 of 5 requests until `resetAt`. A window already reset, or never announced, is null.
 */
export type Budget = { scope: string, requests: Window | null, tokens: Window | null, 
/**
 * Requests in flight counted against the windows.
 */
reservedRequests: number, 
/**
 * The model rests after refusals of its per-minute quota, until then; the key's other
 * models serve meanwhile.
 */
coolingUntil: number | null, 
/**
 * The model's quota for the day is used up, until then (when the provider's day ends,
 * midnight in Los Angeles for Gemini); back by itself then.
 */
usedUpUntil: number | null, };

/**
 * A budget: US dollars (at the price table's prices) or tokens.
 */
export type BudgetInput = { "usd": number } | { "tokens": number };

/**
 * The span a budget is counted over, in UTC.
 */
export type BudgetPeriod = "day" | "week" | "month" | "total";

/**
 * An agent whose share of cached input tokens in the last day is at most half of the week
 * before's (a session off its key, or a prompt that changes at its start): its share in the
 * last day, and in the week before it.
 */
export type CacheDrop = { agent: Agent, lastDay: number, weekBefore: number, };

/**
 * A conversation with one provider and model.
 */
export type Chat = { id: string, title: string, 
/**
 * `None` when the chat's provider was deleted: another must be chosen before sending.
 */
providerId: string | null, model: string, 
/**
 * Sent first, as the system message.
 */
systemPrompt: string | null, createdAt: number, updatedAt: number, };

/**
 * What closing a chat answers: the chat, which stays as it was.
 */
export type ChatClosed = { id: string, };

/**
 * The events of one `chat:send`, in order: `userMessage` (unless retrying), then per attempt
 * `keySelected` and possibly `failover`, `delta`s, and always one `finished` last.
 */
export type ChatEvent = { "type": "userMessage", message: Message, } | { "type": "keySelected", keyId: string | null, keyLabel: string, providerLevel: boolean, keyless: boolean, rebound: boolean, attempt: number, } | { "type": "failover", keyLabel: string, status: number, reason: FailoverReason, message: string, } | { "type": "delta", text: string, } | { "type": "waiting", until: number | null, deadline: number, now: number, seconds: number, } | { "type": "finished", message: Message, };

export type ChatIdArgs = { chatId: string, };

/**
 * A chat that matches a search: where, and the first matching message cut around the match.
 */
export type ChatSearchResult = { chat: Chat, 
/**
 * The query is in the title.
 */
inTitle: boolean, 
/**
 * The first matching message, cut around the match; `None` when only the title matches.
 */
snippet: SearchSnippet | null, 
/**
 * How many of its messages match.
 */
messageCount: number, };

/**
 * The API families clients speak. A provider of a client's family answers it as-is; one of
 * another family is asked in its own words and its answer translated. The UI names it a
 * `ClientApi`.
 */
export type ClientApi = "openai" | "anthropic" | "gemini";

/**
 * Turns the local API on or off; `port` (within `LIMITS.port`) changes where it listens.
 */
export type ConfigureLocalApiArgs = { enabled: boolean, port?: number, };

/**
 * What a request collides with.
 */
export type Conflict = "duplicate_key" | "reply_in_progress";

/**
 * Points an agent at the local API with a token of its own. `model`: the model it asks for
 * (none: its own choice); `newToken`: a new value for its token even when its files hold it;
 * `keyHelper`: Claude Code reads the token from Keypool's helper command, not its settings file;
 * `trustAllFolders`: Gemini CLI's folder trust is turned off, so it reads `~/.gemini/.env` in
 * every folder.
 */
export type ConnectAgentArgs = { agent: Agent, model?: string, newToken?: boolean, keyHelper?: boolean, 
/**
 * The model's context window in tokens; left out: the known one, if any.
 */
contextWindow?: number, trustAllFolders?: boolean, };

/**
 * The team to join: its Redis, its name, and the team secret (64 hex digits; leave it out to
 * use the one kept from before).
 */
export type ConnectTeamArgs = { redisUrl: string, team: string, secret?: string, };

/**
 * What ending a key's cooldown answers: the key, selectable again (unless it is off).
 */
export type CooldownReset = { id: string, };

/**
 * The model defaults to the provider's default.
 */
export type CreateChatArgs = { providerId: string, model?: string, title?: string, 
/**
 * Defaults to the provider's; `""`: none.
 */
systemPrompt?: string, };

/**
 * Makes a named token: its name (see [`TokenNameArgs`]) and what it may do.
 */
export type CreateTokenArgs = { name: string, rules?: TokenRulesInput, };

/**
 * What a key may still spend, in US dollars, as the provider counts it (OpenRouter's
 * `GET /api/v1/key`: `data.limit`, `data.limit_remaining`, `data.usage`).
 */
export type Credit = { 
/**
 * The key's spending limit; none: unlimited.
 */
limit: number | null, 
/**
 * What is left of the limit; none: unlimited.
 */
remaining: number | null, 
/**
 * What the key spent so far.
 */
usage: number, };

export type DatabaseStatus = { "state": "ready", path: string, } | { "state": "failed", kind: string, message: string, path: string, };

/**
 * What deleting a chat answers: the chat that is gone, with its messages.
 */
export type DeletedChat = { id: string, };

/**
 * What deleting a key answers: the key that is gone.
 */
export type DeletedKey = { id: string, };

/**
 * What deleting keys answers.
 */
export type DeletedKeys = { deleted: number, };

/**
 * What a price delete answers: the model whose price is gone.
 */
export type DeletedPrice = { model: string, };

/**
 * What deleting a provider answers: the provider that is gone, and how many of its keys went
 * with it. Composed here from the id asked for and the count the service answers.
 */
export type DeletedProvider = { id: string, 
/**
 * How many pool keys were deleted with the provider.
 */
deletedKeys: number, };

/**
 * Puts an agent's files back as they were; `force` also when they changed since Connect.
 */
export type DisconnectAgentArgs = { agent: Agent, force?: boolean, };

/**
 * The fixed set of error codes the UI may match on.
 */
export type ErrorCode = "validation" | "not_found" | "conflict" | "storage" | "provider" | "no_available_key" | "internal";

/**
 * What the UI needs to word an error precisely, beyond its code.
 */
export type ErrorDetails = { "kind": "hostChange", from: string, to: string, keys: Array<string>, } | { "kind": "notFound", what: string, } | { "kind": "conflict", conflict: Conflict, } | { "kind": "keychain", keychain: KeychainStatus, } | { "kind": "upstream", status: number | null, problem: ProbeProblem, message: string, } | { "kind": "agentFile", file: AgentFile, };

/**
 * The keys to export, of one provider.
 */
export type ExportApiKeysArgs = { providerId: string, ids: Array<string>, 
/**
 * The keys' values too (a `key` column): behind the UI's confirmation.
 */
full: boolean, };

/**
 * Where the CSV went: `path` is null when the user cancelled the save dialog.
 */
export type ExportResult = { path: string | null, rows: number, };

/**
 * Where an export of keys went (`path` null: the user cancelled the dialog) and how many keys.
 */
export type ExportedKeys = { path: string | null, count: number, };

/**
 * Why a key was refused and the reply moved to the next one.
 */
export type FailoverReason = "rate_limited" | "auth_rejected" | "quota_exhausted";

/**
 * What the first screen waits for before it draws (the answers of `app:getPreferences` and
 * `app:getStatus`), known before the window opens. The window's initialization script hands it
 * to the page as `window.__KEYPOOL_FIRST_SCREEN__`, so the first render waits for no IPC answer.
 */
export type FirstScreen = { preferences: Preferences, status: AppStatus, 
/**
 * The families the page draws Latin text in, in order, where the app chooses them: on Linux,
 * those of the desktops' UI fonts this machine has (empty: it has none of them), so WebKit
 * looks up no family the machine lacks. `None`: the stylesheet's own list. Unlike the rest, it
 * holds for every load of the window, a reload's included.
 */
fonts: Array<string> | null, };

/**
 * The id of the thing a command acts on.
 */
export type IdArgs = { id: string, };

export type ImportIdArgs = { importId: string, };

/**
 * A key an import would add, by its position among the keys the text gives (the same in every
 * preview of one text read one way): only its masked preview.
 */
export type ImportKeyPreview = { index: number, 
/**
 * As `ApiKey.apiKeyPreview`: `sk-…9f3a`.
 */
preview: string, };

/**
 * The one error that crosses IPC: `{ code, message, issues?, details? }`. The UI words it from
 * `code`, `issues` and `details`; `message` is the English fallback (and what logs show).
 *
 * Invariant: `message` is written for a person and never contains a stored secret.
 */
export type IpcError = { code: ErrorCode, message: string, issues?: Array<Issue>, details?: ErrorDetails, };

/**
 * One problem with one argument: `path` is camelCase as the UI sent it (e.g. `weight`), empty
 * for a problem with the arguments as a whole. The UI words `code` with `params`; `message` is
 * the English fallback.
 */
export type Issue = { path: string, code: IssueCode, params?: IssueParams, message: string, };

/**
 * What is wrong with one argument.
 */
export type IssueCode = "required" | "not_null" | "wrong_type" | "unknown_field" | "not_an_object" | "blank" | "too_short" | "too_long" | "too_small" | "too_large" | "key_has_spaces" | "bad_env_name" | "bad_url" | "not_https" | "http_not_local" | "plain_http_needs_consent" | "azure_resource_url" | "bedrock_region_url" | "bad_proxy" | "no_host" | "not_a_model" | "ids_mismatch" | "nothing_to_change" | "provider_deleted" | "nothing_to_answer" | "no_models" | "range_order" | "too_many_buckets" | "cannot_write" | "host_change" | "unsupported_file" | "file_too_large" | "image_unreadable" | "image_too_large" | "name_taken" | "bad_redis_url" | "bad_team_name" | "bad_team_secret" | "no_keys_found" | "keys_of_several_providers" | "bad_glob" | "unknown_provider" | "token_mismatch" | "token_required" | "local_api_off" | "bad_token_name" | "token_name_taken" | "expiry_passed" | "no_key_helper" | "no_folder_trust" | "invalid";

/**
 * The numbers and words an issue's wording needs.
 */
export type IssueParams = { min?: number, max?: number, count?: number, 
/**
 * What was expected (for `wrong_type`: `string`, `integer`, `boolean`, `list`, …).
 */
expected?: string, 
/**
 * What came instead.
 */
got?: string, 
/**
 * The fields that could change (for `nothing_to_change`).
 */
fields?: Array<string>, 
/**
 * Why, in the system's words (for `cannot_write`, `invalid`).
 */
reason?: string, };

/**
 * An API key (or `$NAME` reference) as the UI sends it, deserialized straight into a
 * [`Secret`]: the arguments that hold one print it as `<redacted>` in any debug output.
 */
export type KeyArg = string;

/**
 * A key's last balance reading: `amount` in `currency`; both null and no `problem`: the key
 * has no spending limit; a `problem`: the read found nothing (the key stays as it was).
 */
export type KeyBalance = { readAt: number, amount: number | null, 
/**
 * ISO 4217 (`USD`, `CNY`).
 */
currency: string | null, 
/**
 * The provider takes requests on it; false: the key rests as out of credit.
 */
usable: boolean, 
/**
 * Why nothing was read: the provider's words (masked) or what its answer lacked.
 */
problem: string | null, 
/**
 * The answer's HTTP status, when one came.
 */
status: number | null, };

/**
 * Keys of one provider, each once.
 */
export type KeyIdsArgs = { ids: Array<string>, };

/**
 * What a text holds, before anything is saved. Start it with `llmConfig:startKeyImport`.
 */
export type KeyImportPreview = { importId: string, 
/**
 * Every key found, duplicates included.
 */
found: number, 
/**
 * The keys that would be added (new to the paste and to the pool).
 */
new: Array<ImportKeyPreview>, duplicatesInPaste: number, duplicatesInPool: number, 
/**
 * Line numbers (1-based) that seem to hold a key but gave none.
 */
unrecognisedLines: Array<number>, };

/**
 * How an import stands: the answer of starting and cancelling one, and the payload of
 * `llmConfig:keyImportProgress` (at most every 100 ms, after every batch saved, and at the end).
 */
export type KeyImportProgress = { importId: string, providerId: string, 
/**
 * Keys to import (new ones, after de-duplication: the preview's `new`).
 */
total: number, 
/**
 * Validated so far (0 without validation).
 */
checked: number, valid: number, 
/**
 * The provider said the key is not valid (a 401, `invalid_api_key`, `API_KEY_INVALID`).
 */
invalid: number, 
/**
 * Still rate-limited when checked again after the announced wait.
 */
rateLimited: number, 
/**
 * Could not be checked: no answer, or one that says nothing of the key (a 5xx, a 403: a key
 * restricted by scope may be refused the model list and still chat).
 */
unreachable: number, 
/**
 * Saved to the pool so far.
 */
added: number, 
/**
 * In the paste, in the pool at the preview, and found in the pool when saving.
 */
duplicates: number, state: KeyImportState, };

export type KeyImportState = "running" | "cancelled" | "done" | "failed";

/**
 * A key's own limits, both replaced: an absent one is removed.
 */
export type KeyLimitsArg = { 
/**
 * Requests per minute (`LIMITS.rpmLimit`); absent: no limit.
 */
rpmLimit?: number, 
/**
 * Requests at once (`LIMITS.maxConcurrent`); absent: no limit.
 */
maxConcurrent?: number, };

/**
 * Keys as a write left them (a provider's whole list in its order, or the keys a bulk change
 * set): in an object, so that the answer carries the write's generation beside them.
 */
export type KeyList = { keys: Array<ApiKey>, };

/**
 * How a text is read for keys.
 */
export type KeyReading = "shapes" | "one_per_line";

/**
 * How a key stands.
 */
export type KeyState = "active" | "cooling" | "disabled" | "exhausted" | "unavailable";

/**
 * A key's state and statistics (since the app started).
 */
export type KeyStatus = { id: string, label: string | null, 
/**
 * The quota group it shares cooling, budgets and used-up days with; null: its own.
 */
quotaGroup: string | null, 
/**
 * Of the key as a whole (its group's rest after a rate limit that named no model); a
 * model resting alone is in `budgets`.
 */
state: KeyState, coolingUntil: number | null, consecutiveErrors: number, lastError: LastError | null, lastUsedAt: number | null, requestCount: number, failureCount: number, 
/**
 * What the provider last announced the key has left, per model (or model class).
 */
budgets: Array<Budget>, 
/**
 * Requests using the key right now.
 */
inFlight: number, 
/**
 * When an out-of-credit key is probed next.
 */
nextProbeAt: number | null, 
/**
 * A `$NAME` key whose variable has no usable value: the variable's name. The pool skips
 * the key until it has one.
 */
unsetVar: string | null, 
/**
 * What the key's account has left, as last read (DeepSeek, Moonshot, SiliconFlow,
 * OpenRouter); null where the provider answers no balance read, or none was read yet.
 */
balance: KeyBalance | null, 
/**
 * What the key's coding plan has left of each window, as last read (Z.ai, MiniMax); null
 * where the provider answers no window read, or none was read yet.
 */
windows: KeyWindows | null, 
/**
 * When the key expires, where it says (a short-term Amazon Bedrock key); null elsewhere.
 */
expiresAt: number | null, };

/**
 * What testing one key against its provider found (the provider's model list, fetched with
 * that key).
 */
export type KeyTestResult = { ok: boolean, 
/**
 * The HTTP status, or null when no answer came (network, unresolved `$NAME`).
 */
status: number | null, 
/**
 * What went wrong, for the UI to word; null when `ok`.
 */
problem: ProbeProblem | null, 
/**
 * The provider's words on a refusal; otherwise the English fallback.
 */
message: string, latencyMs: number, 
/**
 * What the key may still spend, where the provider tells it (OpenRouter).
 */
credit?: Credit, };

/**
 * One key's usage. `keyId` names the row (`""` for the provider-level key; another reserved id
 * for no key), `sentWith` says which of the three it is; `label` is null but for a pool key
 * that still exists. A view of its own, with its totals as [`TotalsDto`] and `sentWith`.
 */
export type KeyUsage = { providerId: string, keyId: string, sentWith: SentWith, label: string | null, p50LatencyMs: number | null, p95LatencyMs: number | null, requests: number, failures: number, rateLimited: number, inputTokens: number, cachedTokens: number, outputTokens: number, cost: number | null, costComplete: boolean, };

/**
 * A key's last plan-window reading: each window's span, share used and reset; or, with a
 * `problem`, why the read found nothing (the key stays as it was).
 */
export type KeyWindows = { readAt: number, windows: Array<PlanWindow>, problem: string | null, status: number | null, };

export type KeychainReason = "not_configured" | "unreachable" | "locked" | "failed";

/**
 * Whether API keys go to the operating system's keychain, and if not, why: the UI shows a
 * notice in the user's language from `reason`; `detail` is the system's own words. A view of
 * its own: the service's problem carries its detail in each variant, here a reason and a
 * detail apart.
 */
export type KeychainStatus = { "state": "available" } | { "state": "unavailable", reason: KeychainReason, detail?: string, };

/**
 * The UI's language: the OS's, or one chosen.
 */
export type LanguageChoice = "system" | "en" | "zh" | "ja" | "ru";

/**
 * The last refusal of a request: status and the provider's words (keys masked).
 */
export type LastAnswer = { status: number, message: string, };

/**
 * A key's last failure, with its English wording and when it came.
 */
export type LastError = { kind: LastErrorKind, status: number | null, message: string, at: number | null, };

/**
 * What the last failure of a key was.
 */
export type LastErrorKind = "rate_limited" | "auth_rejected" | "unresolved_env" | "quota_exhausted";

/**
 * `llmConfig:listModels`: the models the provider's models endpoint lists.
 */
export type ListModelsArgs = { providerId: string, 
/**
 * Ask the provider again rather than answer from what was fetched before.
 */
refresh?: boolean, };

/**
 * `llmConfig:listModelsFor`: the models a provider that is not saved yet lists (the Add
 * provider form), asked at `baseUrl` with `apiKey` or none. The same rules as for a saved
 * provider: the base URL is checked as `addProvider` checks it, redirects stay within its
 * origin, the provider's words come back with the key masked; nothing is saved or kept.
 */
export type ListModelsForArgs = { kind: ProviderKind, baseUrl: string, apiKey?: KeyArg, 
/**
 * As in [`AddProviderArgs::on_my_network`]: a key goes to that host unencrypted too.
 */
onMyNetwork?: boolean, };

/**
 * The status after `localApi:configure`; `token` only the first time the endpoint is enabled
 * (it is never shown again: `localApi:regenerateToken` makes a new one). Composed here from the
 * status and the token the service answers beside it.
 */
export type LocalApiConfigured = { token?: string, enabled: boolean, running: boolean, 
/**
 * `http://127.0.0.1:PORT` while running; the base URL for OpenAI SDKs is this plus `/v1`.
 */
address: string | null, port: number, 
/**
 * Requests received, answering now, and answered with an error, since it started.
 */
requests: number, inFlight: number, failed: number, 
/**
 * Why it is enabled but not running.
 */
error: LocalApiProblem | null, 
/**
 * The models it can answer for now, by the API a client speaks: those of the providers
 * whose keys can answer (or that need none), as `GET /v1/models` lists them.
 */
served: Array<ServedModel>, };

/**
 * Why the local API could not start.
 */
export type LocalApiProblem = { "kind": "portInUse", port: number, } | { "kind": "bind", port: number, reason: string, };

/**
 * The local API: whether it is on and up, where, and what it served since it started. A view
 * of its own: the service's status holds the gateway's counters and start error, flattened and
 * worded here.
 */
export type LocalApiStatus = { enabled: boolean, running: boolean, 
/**
 * `http://127.0.0.1:PORT` while running; the base URL for OpenAI SDKs is this plus `/v1`.
 */
address: string | null, port: number, 
/**
 * Requests received, answering now, and answered with an error, since it started.
 */
requests: number, inFlight: number, failed: number, 
/**
 * Why it is enabled but not running.
 */
error: LocalApiProblem | null, 
/**
 * The models it can answer for now, by the API a client speaks: those of the providers
 * whose keys can answer (or that need none), as `GET /v1/models` lists them.
 */
served: Array<ServedModel>, };

/**
 * A new local API token, shown this once (the service answers the bare string).
 */
export type LocalApiToken = { token: string, };

/**
 * A message as saved, with its error code typed as the IPC error's (the service keeps the text
 * the reply failed with), and its attachments as the UI shows them.
 */
export type Message = { id: string, chatId: string, role: Role, content: string, status: MessageStatus, 
/**
 * Why the reply failed, in English (the fallback); set when `status` is `error`.
 */
error: string | null, 
/**
 * The error's code (`no_available_key`, `provider`, …) when `status` is `error`.
 */
errorCode: ErrorCode | null, 
/**
 * Why the reply failed, with what the UI needs to word it; set when `status` is `error`.
 */
errorDetails: ReplyError | null, 
/**
 * Which key answered: its label or its masked preview; `null` when none could.
 */
keyLabel: string | null, 
/**
 * Answered with the provider-level key (the pool was empty).
 */
providerKey: boolean, createdAt: number, 
/**
 * What the reply used, as the provider reported it; null when it reported nothing.
 */
usage: MessageUsage | null, 
/**
 * Images and text files sent with a user message, in order.
 */
attachments: Array<Attachment>, };

/**
 * How a message ended.
 */
export type MessageStatus = "complete" | "stopped" | "error";

/**
 * The tokens a reply used. `input` counts every prompt token, cached ones included (for
 * Anthropic: `input_tokens + cache_read_input_tokens + cache_creation_input_tokens`); `cached`
 * those read from the prompt cache ("cached 5 of 11 input tokens"). The UI reads it as a
 * message's `MessageUsage`.
 */
export type MessageUsage = { inputTokens: number, cachedTokens: number, outputTokens: number, };

export type ModelArgs = { model: string, };

/**
 * The models a provider's models endpoint lists.
 */
export type ModelList = { models: Array<string>, 
/**
 * When they were fetched (milliseconds since the epoch).
 */
fetchedAt: number, 
/**
 * Answered from what was fetched before, not asked again (`llmConfig:listModels` asks again
 * with `refresh: true`).
 */
cached: boolean, };

/**
 * A named token as the app shows it: never its value.
 */
export type NamedToken = { name: string, 
/**
 * Milliseconds since the epoch.
 */
createdAt: number, 
/**
 * When the ledger last recorded a request it sent (milliseconds); `None`: never (or its
 * history was purged).
 */
lastUsedAt: number | null, 
/**
 * Whether it is served: not expired, and not disabled by a server sharing this store.
 */
usable: boolean, 
/**
 * The coding agent Connect made it for (`claude-code`, `codex`, `gemini-cli`); `None`: made
 * by hand. Disconnecting the agent revokes it.
 */
agent: string | null, 
/**
 * What it may do, and until when.
 */
rules: TokenRules, 
/**
 * What it spent.
 */
spent: TokenSpend, };

/**
 * A named token just made, with its value: shown this once.
 */
export type NewNamedToken = { token: string, name: string, 
/**
 * Milliseconds since the epoch.
 */
createdAt: number, 
/**
 * When the ledger last recorded a request it sent (milliseconds); `None`: never (or its
 * history was purged).
 */
lastUsedAt: number | null, 
/**
 * Whether it is served: not expired, and not disabled by a server sharing this store.
 */
usable: boolean, 
/**
 * The coding agent Connect made it for (`claude-code`, `codex`, `gemini-cli`); `None`: made
 * by hand. Disconnecting the agent revokes it.
 */
agent: string | null, 
/**
 * What it may do, and until when.
 */
rules: TokenRules, 
/**
 * What it spent.
 */
spent: TokenSpend, };

/**
 * Arguments of a command that takes none; any field is rejected.
 */
export type NoArgs = Record<string, never>;

/**
 * Whether desktop notifications can be shown.
 */
export type Notifications = { "state": "available" } | { "state": "unavailable", detail?: string, };

/**
 * A desktop notification, worded by the UI from a `pool:alert`.
 */
export type NotifyArgs = { title: string, body: string, };

/**
 * A page of the app, as the window reopens on it: `chat`, `usage`, or a section of Settings.
 */
export type PageChoice = "chat" | "usage" | "settings/providers" | "settings/general" | "settings/localApi" | "settings/team" | "settings/about";

/**
 * One window of a plan, as read.
 */
export type PlanWindow = { span: WindowSpan, 
/**
 * The share used, 0 to 1.
 */
used: number, 
/**
 * When it is whole again, if the answer says (milliseconds since the epoch).
 */
resetsAt: number | null, };

/**
 * A loss of keys to tell the user of (the payload of `pool:alert`). Names as the user knows them:
 * the provider's, and the key's label or masked preview (never the key).
 */
export type PoolAlert = { "kind": "keyDisabled", providerId: string, provider: string, key: string, status: number, } | { "kind": "keyOutOfCredit", providerId: string, provider: string, key: string, } | { "kind": "providerUnusable", providerId: string, provider: string, } | { "kind": "keyWindowUsedUp", providerId: string, provider: string, key: string, resetsAt: number, } | { "kind": "keyExpiring", providerId: string, provider: string, key: string, expiresAt: number, };

/**
 * The pool's view of a provider's keys, with the backend's `now` so the UI can count down
 * cooldowns without trusting its own clock. This view and the four below are the pool's
 * statuses (keypool, which knows nothing of serde) reshaped: its times as milliseconds, its
 * errors worded, each `$NAME` key's unset variable joined in.
 */
export type PoolStatus = { providerId: string, now: number, keys: Array<KeyStatus>, };

/**
 * The UI's preferences, kept in the data directory (one set per Keypool profile); null: never
 * chosen. A view of its own: the file leaves out what was never chosen, the UI reads nulls.
 */
export type Preferences = { theme: ThemeChoice | null, language: LanguageChoice | null, 
/**
 * The page the window was left on.
 */
page: PageChoice | null, 
/**
 * The provider Settings → Providers showed last (it may have been deleted since).
 */
provider: string | null, };

/**
 * A text to import keys from: a paste, or the content of a `.txt`, `.csv` or `.json` file.
 */
export type PreviewKeyImportArgs = { providerId: string, 
/**
 * At most `LIMITS.importText` bytes.
 */
text: string, 
/**
 * `shapes` when absent: only keys of the shapes of the provider's kind. `one_per_line`
 * takes each line's longest key-like token, whatever it is: only when the user chose it.
 */
reading?: KeyReading, };

/**
 * A model's price, in US dollars per million tokens.
 */
export type Price = { model: string, inputPerMillion: number, 
/**
 * `None`: cached input costs what input costs.
 */
cachedInputPerMillion: number | null, outputPerMillion: number, updatedAt: number, };

/**
 * Why asking a provider (a key test, a model list) failed. A view of its own: keypool-llm's
 * problem holds its breakage as the client saw it, named here as a `BreakageKind`.
 */
export type ProbeProblem = { "kind": "envUnset", var: string, } | { "kind": "redirected" } | { "kind": "refused" } | { "kind": "unreachable", breakage: BreakageKind, } | { "kind": "unreadable" } | { "kind": "outOfCredit" };

/**
 * A provider as the services show it; its own key only as a masked preview.
 */
export type Provider = { 
/**
 * `openai`, `anthropic`, `gemini`, `local` for the built-in ones, a UUID for the others.
 */
id: string, name: string, kind: ProviderKind, baseUrl: string, 
/**
 * The provider-level key, masked; used while the pool is empty.
 */
apiKeyPreview: string | null, builtin: boolean, sortOrder: number, 
/**
 * The models offered when starting a chat with this provider.
 */
models: Array<string>, defaultModel: string | null, 
/**
 * The system prompt new chats with this provider start with.
 */
systemPrompt: string | null, 
/**
 * How many keys the pool holds; while 0, the provider-level key is used (or, without one,
 * no key at all).
 */
keyCount: number, 
/**
 * Its base URL is on this machine or a private network: a server there commonly needs no
 * key, and requests go without one while the pool is empty and no provider key is set.
 */
local: boolean, 
/**
 * A request can be answered as far as the stored keys tell: an enabled pool key, or while
 * the pool is empty the provider key, or none for a local server. A key may still be
 * resting (see [`answerable`]).
 */
answerable: boolean, 
/**
 * The last request sent to it without any key (while it has none) was refused with this
 * status, 401 or 403: the server needs a key after all, whatever its address suggests.
 * `None`: the last one was answered, or none was sent.
 */
keylessRefused: number | null, createdAt: number, updatedAt: number, };

/**
 * The provider a command reads.
 */
export type ProviderArgs = { providerId: string, };

/**
 * The payload of `llmConfig:changed`: a provider or its keys changed (a command's write, a bulk
 * import's batch, the pool disabling a key the provider rejected, or a change of the pool's
 * memory alone: a cooldown ended, a key back from out of credit).
 */
export type ProviderChanged = { providerId: string, 
/**
 * The change's generation: changes are counted in the order they commit, and a key command
 * answers the generation of its own (`Written`), so a view knows the echo of its write.
 */
generation: number, };

/**
 * Which kind of service a provider is; each kind is one row of keypool-llm's kind table.
 */
export type ProviderKind = "openai" | "anthropic" | "gemini" | "openrouter" | "deepseek" | "moonshot" | "siliconflow" | "groq" | "xai" | "zai" | "minimax" | "kimi" | "mistral" | "together" | "fireworks" | "ollama" | "lmstudio" | "azure" | "bedrock";

export type ProxyMode = "none" | "system" | "url";

/**
 * Which proxy provider requests over https go through (never for this machine): `none` (the
 * default), `system` (its `HTTPS_PROXY`/`ALL_PROXY`), or `url` with the address in `url`. An
 * argument (checked here) that the settings answer in the same form.
 */
export type ProxySetting = { mode: ProxyMode, 
/**
 * The proxy's address, with `mode: "url"` (and only then).
 */
url?: string, };

/**
 * Deletes the usage history before `before` (rounded down to the hour); all of it without.
 */
export type PurgeUsageArgs = { before?: number, };

export type Purged = { 
/**
 * How many attempts were deleted.
 */
attempts: number, };

/**
 * An alert as the app lists it: when it was told (milliseconds since the epoch), and what.
 */
export type RecentAlert = { at: number, alert: PoolAlert, };

/**
 * Each of the provider's key ids once, in the new order.
 */
export type ReorderApiKeysArgs = { providerId: string, ids: Array<string>, };

/**
 * Why a reply failed, with what the UI needs to word it in the user's language, with local
 * times and countdowns. The IPC layer passes it as it is (its TypeScript is generated from it).
 */
export type ReplyError = { "kind": "noKeys", provider: string, } | { "kind": "providerKeyUnresolved", provider: string, var: string, } | { "kind": "allBlocked", provider: string, keys: Array<BlockedKeyInfo>, firstFreeAt: number | null, last: LastAnswer | null, } | { "kind": "keyUnresolved", key: string, var: string, } | { "kind": "refused", status: number, message: string, } | { "kind": "imagesRefused", status: number, message: string, } | { "kind": "redirected", status: number, } | { "kind": "unreachable", breakage: BreakageKind, } | { "kind": "interrupted", breakage?: BreakageKind, status?: number, message?: string, } | { "kind": "storage" } | { "kind": "other", message: string, };

/**
 * Where a model asked for in a dialect goes, and why there.
 */
export type Resolution = { "kind": "routed", provider: string, model: string, via: Via, usable: boolean, } | { "kind": "otherApi", provider: string, } | { "kind": "unknown" };

/**
 * Who wrote a message.
 */
export type Role = "user" | "assistant";

/**
 * A route as Settings → Local API shows it: with its provider's name and whether it can be
 * answered now.
 */
export type Route = { 
/**
 * The provider's name, while it exists.
 */
providerName: string | null, state: RouteState, model: string, provider: string, toModel: string, };

/**
 * A route as the UI writes it.
 */
export type RouteInput = { 
/**
 * The models it takes: a glob, `*` any run of characters, `?` one (`claude-*`).
 */
model: string, 
/**
 * The provider's id.
 */
provider: string, 
/**
 * The model the provider is asked for.
 */
toModel: string, };

/**
 * Whether a route can be answered now.
 */
export type RouteState = "ready" | "noUsableKey" | "unknownProvider";

/**
 * What a route's test came to: the provider's reply, or why none came (as a chat says it).
 */
export type RouteTest = { 
/**
 * The provider's name and the model asked.
 */
provider: string, model: string, outcome: RouteTestOutcome, };

export type RouteTestOutcome = { "kind": "answered", reply: string, keyLabel: string | null, latencyMs: number, } | { "kind": "failed", error: ReplyError, };

/**
 * `chat:search`.
 */
export type SearchChatsArgs = { query: string, };

/**
 * A piece of a message around a match, on one line: `before` + `matched` + `after`, `matched`
 * being the query as the message writes it (for highlighting).
 */
export type SearchSnippet = { messageId: string, before: string, matched: string, after: string, };

/**
 * `chat:send`'s arguments besides its channel (`onEvent`).
 */
export type SendArgs = { request: SendRequest, };

/**
 * With `content`, a new user message; with `content` and `edit: true`, the last user message
 * rewritten (everything after it is dropped); without `content`, the last user message answered
 * again, replacing the replies after it (retry a failed reply, regenerate a good one).
 */
export type SendRequest = { chatId: string, content?: string, edit?: boolean, 
/**
 * Files attached with `chat:attach`, in order. A new message may be attachments alone
 * (no `content`); an edit without `attachments` keeps the message's.
 */
attachments?: Array<AttachmentRef>, };

/**
 * What a key row of the ledger sent its requests with: a key of the pool, the provider-level
 * key, or no key at all (a server on this machine, such as Ollama, while its provider has none).
 */
export type SentWith = "poolKey" | "providerKey" | "noKey";

/**
 * A model an endpoint serves, as listed (Settings → Local API shows them as `ServedModel`s).
 */
export type ServedModel = { model: string, 
/**
 * The provider a request naming the model alone goes to, by the name people know it by.
 */
provider: string, 
/**
 * The other providers of the dialect that can answer and list the model too: a client
 * reaches one of them as `name/model`.
 */
others: Array<string>, 
/**
 * The API a client asking for it speaks.
 */
api: ClientApi, };

/**
 * The user's limits of a key, both replaced: an absent one is removed.
 */
export type SetKeyLimitsArgs = { id: string, 
/**
 * Requests per minute (`LIMITS.rpmLimit`); absent: no limit.
 */
rpmLimit?: number, 
/**
 * Requests at once (`LIMITS.maxConcurrent`); absent: no limit.
 */
maxConcurrent?: number, };

/**
 * The preferences to change; at least one.
 */
export type SetPreferencesArgs = { theme?: ThemeChoice, language?: LanguageChoice, page?: PageChoice, 
/**
 * A provider's id (`LIMITS.id`, in bytes).
 */
provider?: string, };

/**
 * A model's price in US dollars per million tokens; cached input defaults to the input price.
 */
export type SetPriceArgs = { model: string, inputPerMillion: number, cachedInputPerMillion?: number, outputPerMillion: number, };

/**
 * Replaces every route (adding, editing, reordering and deleting are each a new list).
 */
export type SetRoutesArgs = { routes: Array<RouteInput>, };

/**
 * The app's preferences. A view of its own: the proxy in the form `settings:update` takes it.
 */
export type Settings = { 
/**
 * How long a chat may wait for a key to free up when all are spent or resting (seconds).
 */
maxWaitSeconds: number, 
/**
 * How long a chat keeps its key without a message (minutes).
 */
bindingIdleMinutes: number, 
/**
 * How long usage history is kept (days).
 */
usageRetentionDays: number, 
/**
 * Which proxy provider requests go through.
 */
proxy: ProxySetting, 
/**
 * A desktop notification when a key dies or a provider has no usable key left (on unless
 * switched off).
 */
notifyKeysLost: boolean, };

/**
 * A range of time, in milliseconds since the epoch.
 */
export type SourceRangeArgs = { from: number, to: number, };

/**
 * What one source spent, with `cached_share`: `cached_tokens / input_tokens` (`None` without
 * input), and its cost where its models have prices.
 */
export type SourceUsage = { source: UsageSource, cachedShare: number | null, 
/**
 * US dollars, over the models with a price; `None` when none of those that spent tokens
 * has one.
 */
cost: number | null, 
/**
 * Every model that spent tokens has a price, so `cost` is the whole cost.
 */
costComplete: boolean, requests: number, 
/**
 * Refused or broken off: every outcome but answered and stopped.
 */
failures: number, 
/**
 * Every prompt token, cached ones included.
 */
inputTokens: number, cachedTokens: number, outputTokens: number, };

export type SpanUnit = "hour" | "day" | "week" | "month";

/**
 * What a member may spend per period: US dollars (at the price table's prices) or tokens
 * (prompt, cached included, and output).
 */
export type SpendBudget = { "usd": number } | { "tokens": number };

/**
 * How to import a previewed text.
 */
export type StartKeyImportArgs = { importId: string, 
/**
 * Within `LIMITS.weight`, its default when absent.
 */
weight?: number, 
/**
 * Labels become `"{labelPrefix} #1"`, `#2`, …; absent or blank: no labels. Short enough
 * for the number to fit `LIMITS.keyLabel`.
 */
labelPrefix?: string, 
/**
 * At most `LIMITS.quotaGroup`; absent or blank: each key a group of its own.
 */
quotaGroup?: string, 
/**
 * Check each key with the provider's model list first (the UI's default: on).
 */
validate: boolean, 
/**
 * Also save the keys validation rejected, disabled with their reason.
 */
keepRejectedDisabled: boolean, 
/**
 * The `index` of each key of the preview the user left out: never sent, never saved.
 */
leftOut?: Array<number>, };

/**
 * What stopping a chat's reply answers, composed here from the chat asked for and whether the
 * service had a reply to stop.
 */
export type Stopped = { chatId: string, 
/**
 * Whether a reply was being written (and is now stopped).
 */
stopped: boolean, };

/**
 * Why a team that is on is disconnected.
 */
export type TeamReason = "unreachable" | "lost" | "secretMissing";

/**
 * A new team secret, shown this once: copy it to the other members, then connect with it.
 * Nothing is kept until `team:connect`. Composed here from the team crate's secret, as hex.
 */
export type TeamSecret = { secret: string, };

/**
 * Where the team secret is kept.
 */
export type TeamSecretPlace = "keychain" | "memory" | "none";

/**
 * Where the team stands: `off`, `connecting`, `connected`, or `disconnected` with a reason
 * (the service's phase, whose disconnected variant holds the reason).
 */
export type TeamState = "off" | "connecting" | "connected" | "disconnected";

/**
 * How this app stands with its team. Never holds the secret or the URL's password. A view of
 * its own: the service's phase is a state and a reason here, its times milliseconds.
 */
export type TeamStatus = { state: TeamState, 
/**
 * Why it is disconnected.
 */
reason: TeamReason | null, 
/**
 * The Redis URL as kept: without its password.
 */
redisUrl: string | null, 
/**
 * The URL has a password, kept beside the secret.
 */
hasPassword: boolean, team: string | null, 
/**
 * Members seen in the last minute, this one included (0 unless connected).
 */
members: number, 
/**
 * When a change from another member was last received (ms since the epoch).
 */
lastChangeAt: number | null, 
/**
 * When the app last connected or disconnected (ms since the epoch).
 */
since: number | null, secret: TeamSecretPlace, };

/**
 * A route to try (saved or not).
 */
export type TestRouteArgs = { route: RouteInput, };

/**
 * The colour theme: the OS's, or one chosen.
 */
export type ThemeChoice = "system" | "light" | "dark";

/**
 * A file whose mode Connect tightened.
 */
export type TightenedFile = { 
/**
 * As `Path::display` writes it.
 */
path: string, 
/**
 * Its permission bits before (`0o644` is 420).
 */
mode: number, };

export type ToggleApiKeyArgs = { id: string, enabled: boolean, };

/**
 * A named token's name: 1 to 64 of `A-Z a-z 0-9 . _ - @`, unique in any case (the service checks
 * the characters and the name's use).
 */
export type TokenNameArgs = { name: string, };

/**
 * What a named token may do: a server member's limits (each `None`, or no models, is no limit),
 * and the moment it stops working.
 */
export type TokenRules = { 
/**
 * What it may spend per `budget_period` (a month unless told): dollars at the price table's
 * prices, or tokens.
 */
budget: SpendBudget | null, budgetPeriod: BudgetPeriod | null, requestsPerMinute: number | null, tokensPerMinute: number | null, 
/**
 * Requests it may have in flight at once.
 */
maxInFlight: number | null, 
/**
 * Globs (`*`, `?`) of the models it may ask for, matched against the name asked (a route's
 * included) and the model routed to; empty: every model.
 */
models: Array<string>, 
/**
 * Milliseconds since the epoch; `None`: never.
 */
expiresAt: number | null, };

/**
 * What a named token may do (each left out: no limit). A budget is dollars or tokens per
 * `budgetPeriod` (a month unless told); `models` are globs (`*`, `?`); `expiresAt` is ms since
 * the epoch, ahead of now.
 */
export type TokenRulesInput = { budget?: BudgetInput, budgetPeriod?: BudgetPeriod, requestsPerMinute?: number, tokensPerMinute?: number, maxInFlight?: number, models?: Array<string>, expiresAt?: number, };

/**
 * What a named token spent, as the book counts it (from the store's tally at start, then every
 * answer).
 */
export type TokenSpend = { 
/**
 * This calendar month (UTC): tokens (prompt and output) and US dollars at the price table's
 * prices.
 */
monthTokens: number, monthUsd: number, 
/**
 * Of its budget, in the budget's unit and period; `None` without a budget.
 */
budgetUsed: number | null, };

/**
 * What the requests of one named token of the local API spent, or (`name` null) those sent
 * without one: the chat's and the local API's own token's. A view of its own: the report's line
 * also names an id and a provider, which a member has none of.
 */
export type TokenUsage = { name: string | null, requests: number, failed: number, 
/**
 * Every prompt token, cached ones included.
 */
inputTokens: number, cachedTokens: number, outputTokens: number, 
/**
 * US dollars at the price table's prices; null when no model it used has a price.
 */
costUsd: number | null, 
/**
 * Every model it used has a price: `costUsd` is its whole cost.
 */
costComplete: boolean, };

/**
 * At least one field to change.
 */
export type UpdateApiKeyArgs = { id: string, 
/**
 * An empty label removes the label.
 */
label?: string, apiKey?: KeyArg, enabled?: boolean, weight?: number, 
/**
 * Both of the key's own limits, replaced (as `llmConfig:setKeyLimits` does).
 */
limits?: KeyLimitsArg, 
/**
 * The key's quota group (`LIMITS.quotaGroup`, trimmed); `""` puts it in a group of its own.
 */
quotaGroup?: string, };

/**
 * What to set on every key named; at least one field.
 */
export type UpdateApiKeysArgs = { ids: Array<string>, enabled?: boolean, weight?: number, 
/**
 * An empty (or blank) group puts each key in a group of its own (no argument takes `null`).
 */
quotaGroup?: string, };

/**
 * At least one field to change.
 */
export type UpdateChatArgs = { id: string, title?: string, providerId?: string, model?: string, 
/**
 * `""` removes the system prompt.
 */
systemPrompt?: string, };

/**
 * At least one field to change.
 */
export type UpdateProviderArgs = { id: string, name?: string, kind?: ProviderKind, baseUrl?: string, 
/**
 * `""` removes the provider-level key.
 */
apiKey?: KeyArg, models?: Array<string>, 
/**
 * `""` clears the default model.
 */
defaultModel?: string, 
/**
 * `""` removes the default system prompt.
 */
systemPrompt?: string, 
/**
 * Required (`true`) to move `baseUrl` to another scheme, host or port while the provider
 * holds keys: they would be sent to the new host. Without it that change is a `validation`
 * error whose `details` name the keys.
 */
confirmHostChange?: boolean, 
/**
 * As in [`AddProviderArgs::on_my_network`], for a new `baseUrl`.
 */
onMyNetwork?: boolean, };

/**
 * The preferences to change; at least one, each within its `LIMITS`.
 */
export type UpdateSettingsArgs = { 
/**
 * How long a chat may wait for a key to free up when all are spent or resting, in seconds.
 */
maxWaitSeconds?: number, 
/**
 * How long a chat keeps its key without a message, in minutes.
 */
bindingIdleMinutes?: number, 
/**
 * How long usage history is kept, in days.
 */
usageRetentionDays?: number, 
/**
 * Which proxy provider requests go through.
 */
proxy?: ProxySetting, 
/**
 * A desktop notification when a key dies or a provider has no usable key left.
 */
notifyKeysLost?: boolean, };

/**
 * Sets what the named token `name` may do (its value stays).
 */
export type UpdateTokenArgs = { name: string, rules: TokenRulesInput, };

/**
 * The ledger of a range by source (every source, in the panel's order: the agents, the chat,
 * the others), and the agents whose cache share dropped as of `now`.
 */
export type UsageBySource = { sources: Array<SourceUsage>, drops: Array<CacheDrop>, };

/**
 * One bucket of one key's attempts; `at` is the bucket's start. `failovers`: attempts refused
 * in a way the pool moved on from (rate limited, auth rejected, out of credit).
 */
export type UsagePoint = { at: number, providerId: string, 
/**
 * `""` for the provider-level key, [`usage::NO_KEY`] for requests sent without any key.
 */
keyId: string, sentWith: SentWith, requests: number, failures: number, rateLimited: number, failovers: number, inputTokens: number, cachedTokens: number, outputTokens: number, };

/**
 * The usage of one provider (or all) over a range of time, in milliseconds since the epoch;
 * `to` defaults to now, `from` to 30 days before `to`. What `usage:getSummary` sums and
 * `usage:exportCsv` writes.
 */
export type UsageRangeArgs = { providerId?: string, from?: number, to?: number, };

/**
 * The buckets of a range (`[from, to)`), each key's in its own [`Point`].
 */
export type UsageSeries = { from: number, to: number, points: Array<UsagePoint>, };

/**
 * Buckets start at `from` (rounded down to the hour) and are an hour or 24 hours long: a `from`
 * at the user's midnight makes day buckets the user's days until a daylight-saving change. The
 * Usage page reads hours and sums them into the user's days.
 */
export type UsageSeriesArgs = { providerId?: string, 
/**
 * `""` for the provider-level key.
 */
keyId?: string, bucket: BucketArg, from: number, to: number, };

/**
 * Who asked: a coding agent, the app's chat, or another client (an SDK, a script).
 */
export type UsageSource = { "kind": "agent", agent: Agent, } | { "kind": "chat" } | { "kind": "other" };

/**
 * A summary of a range, with its totals and keys as [`TotalsDto`] and [`KeyUsageDto`].
 */
export type UsageSummary = { from: number, to: number, totals: UsageTotals, 
/**
 * Most requests first.
 */
keys: Array<KeyUsage>, 
/**
 * The models that spent tokens in the range and have no price, sorted: what a partial
 * cost is missing.
 */
unpricedModels: Array<string>, 
/**
 * The earliest attempt in the range; null when it holds none.
 */
firstAt: number | null, };

/**
 * Sums of attempts. `requests`: attempts sent; `failures`: all but the answered and the
 * stopped; `inputTokens` counts cached ones too. `cost` (US dollars) covers the models with a
 * price, null when none has one; `costComplete` says whether every model that spent tokens has a price.
 * A view of its own: a [`Spend`] flattened, without the failovers a summary does not show.
 */
export type UsageTotals = { requests: number, failures: number, rateLimited: number, inputTokens: number, cachedTokens: number, outputTokens: number, cost: number | null, costComplete: boolean, };

/**
 * Why a model goes where it goes: a route (its glob), `provider/model`, or a provider's list.
 */
export type Via = { "kind": "route", glob: string, } | { "kind": "prefix" } | { "kind": "listed" };

/**
 * A window of a budget: what is left of it, of how much, until when (milliseconds).
 */
export type Window = { remaining: number, limit: number | null, resetAt: number, };

/**
 * How long a window is.
 */
export type WindowSpan = { count: number, unit: SpanUnit, };

/**
 * What a committed write (or a change of the pool's memory) answers: its value, and the
 * generation it got, which the `llmConfig:changed` it caused carries too. The value is a struct:
 * its fields and `generation` are the answer's.
 */
export type Written<T> = { generation: number, } & T;

/**
 * The bounds of the commands' arguments (src-tauri/crates/api/src/ipc/limits.rs).
 */
export const LIMITS = {
  apiKey: { maxChars: 4096 },
  keyLabel: { maxChars: 100 },
  importText: { maxBytes: 16777216 },
  bulkIds: { maxItems: 100000 },
  quotaGroup: { maxChars: 64 },
  weight: { min: 1, max: 100, default: 1 },
  rpmLimit: { min: 1, max: 100000 },
  maxConcurrent: { min: 1, max: 1000 },
  providerName: { maxChars: 60 },
  models: { maxItems: 100 },
  modelName: { maxBytes: 256 },
  id: { maxBytes: 256 },
  chatTitle: { maxChars: 200 },
  systemPrompt: { maxChars: 50000 },
  message: { maxChars: 200000 },
  attachments: { maxItems: 10 },
  imageFile: { maxBytes: 20971520 },
  textFile: { maxBytes: 1048576 },
  attachmentName: { maxChars: 255 },
  attachmentData: { maxBytes: 27962028 },
  searchQuery: { maxChars: 200 },
  maxWaitSeconds: { min: 0, max: 120 },
  bindingIdleMinutes: { min: 1, max: 1440 },
  usageRetentionDays: { min: 1, max: 3650 },
  price: { min: 0.0, max: 100000.0 },
  seriesBuckets: { maxItems: 10000 },
  proxyUrl: { maxChars: 2048 },
  port: { min: 1024, max: 65535, default: 4141 },
  redisUrl: { maxChars: 2048 },
  teamName: { maxChars: 64 },
  routes: { maxItems: 100 },
  notificationTitle: { maxChars: 200 },
  notificationBody: { maxChars: 1000 },
  tokenName: { maxChars: 64 },
  tokenBudgetUsd: { min: 0.0, max: 1000000.0 },
  tokenBudgetTokens: { min: 0, max: 1000000000000 },
  tokenRequestsPerMinute: { min: 1, max: 1000000 },
  tokenTokensPerMinute: { min: 1, max: 1000000000000 },
  tokenInFlight: { min: 1, max: 10000 },
  tokenModels: { maxItems: 50 },
} as const;

/**
 * The provider kinds, in the order the form offers them (keypool-llm's `KINDS`), with what
 * their keys start with.
 */
export const PROVIDER_KINDS = [
  { id: "openai", defaultBaseUrl: "https://api.openai.com/v1", keyPrefixes: ["sk-"] },
  { id: "anthropic", defaultBaseUrl: "https://api.anthropic.com", keyPrefixes: ["sk-ant-"] },
  { id: "gemini", defaultBaseUrl: "https://generativelanguage.googleapis.com", keyPrefixes: ["AIza"] },
  { id: "openrouter", defaultBaseUrl: "https://openrouter.ai/api/v1", keyPrefixes: ["sk-or-"] },
  { id: "deepseek", defaultBaseUrl: "https://api.deepseek.com", keyPrefixes: ["sk-"] },
  { id: "moonshot", defaultBaseUrl: "https://api.moonshot.ai/v1", keyPrefixes: ["sk-"] },
  { id: "siliconflow", defaultBaseUrl: "https://api.siliconflow.com/v1", keyPrefixes: ["sk-"] },
  { id: "groq", defaultBaseUrl: "https://api.groq.com/openai/v1", keyPrefixes: ["gsk_"] },
  { id: "xai", defaultBaseUrl: "https://api.x.ai/v1", keyPrefixes: ["xai-"] },
  { id: "zai", defaultBaseUrl: "https://api.z.ai/api/anthropic", keyPrefixes: [] },
  { id: "minimax", defaultBaseUrl: "https://api.minimax.io/anthropic", keyPrefixes: [] },
  { id: "kimi", defaultBaseUrl: "https://api.kimi.com/coding", keyPrefixes: ["sk-kimi-"] },
  { id: "mistral", defaultBaseUrl: "https://api.mistral.ai/v1", keyPrefixes: [] },
  { id: "together", defaultBaseUrl: "https://api.together.xyz/v1", keyPrefixes: ["tgp_v1_"] },
  { id: "fireworks", defaultBaseUrl: "https://api.fireworks.ai/inference/v1", keyPrefixes: ["fw_"] },
  { id: "ollama", defaultBaseUrl: "http://127.0.0.1:11434", keyPrefixes: [] },
  { id: "lmstudio", defaultBaseUrl: "http://127.0.0.1:1234/v1", keyPrefixes: [] },
  { id: "azure", defaultBaseUrl: "https://RESOURCE.openai.azure.com/openai/v1", keyPrefixes: [] },
  { id: "bedrock", defaultBaseUrl: "https://bedrock-runtime.us-east-1.amazonaws.com/openai/v1", keyPrefixes: [] },
] as const satisfies readonly { id: ProviderKind; defaultBaseUrl: string; keyPrefixes: readonly string[] }[];

export type Commands = {
  "app:getStatus": { kind: "sync"; args: NoArgs; result: AppStatus };
  "app:getPreferences": { kind: "sync"; args: NoArgs; result: Preferences };
  "app:setPreferences": { kind: "sync"; args: SetPreferencesArgs; result: Preferences };
  "app:notify": { kind: "sync"; args: NotifyArgs; result: null };
  "app:getAlerts": { kind: "sync"; args: NoArgs; result: Alerts };
  "app:testNotification": { kind: "sync"; args: NotifyArgs; result: Notifications };
  "llmConfig:getProviders": { kind: "sync"; args: NoArgs; result: Array<Provider> };
  "llmConfig:addProvider": { kind: "sync"; args: AddProviderArgs; result: Provider };
  "llmConfig:updateProvider": { kind: "sync"; args: UpdateProviderArgs; result: Provider };
  "llmConfig:deleteProvider": { kind: "sync"; args: IdArgs; result: DeletedProvider };
  "llmConfig:getApiKeys": { kind: "sync"; args: ProviderArgs; result: Array<ApiKey> };
  "llmConfig:addApiKey": { kind: "sync"; args: AddApiKeyArgs; result: Written<ApiKey> };
  "llmConfig:updateApiKey": { kind: "sync"; args: UpdateApiKeyArgs; result: Written<ApiKey> };
  "llmConfig:setKeyLimits": { kind: "sync"; args: SetKeyLimitsArgs; result: Written<ApiKey> };
  "llmConfig:deleteApiKey": { kind: "sync"; args: IdArgs; result: Written<DeletedKey> };
  "llmConfig:toggleApiKey": { kind: "sync"; args: ToggleApiKeyArgs; result: Written<ApiKey> };
  "llmConfig:reorderApiKeys": { kind: "sync"; args: ReorderApiKeysArgs; result: Written<KeyList> };
  "llmConfig:getPoolStatus": { kind: "sync"; args: ProviderArgs; result: PoolStatus };
  "llmConfig:resetCooldown": { kind: "sync"; args: IdArgs; result: Written<CooldownReset> };
  "llmConfig:testApiKey": { kind: "async"; args: IdArgs; result: KeyTestResult };
  "llmConfig:previewKeyImport": { kind: "sync"; args: PreviewKeyImportArgs; result: KeyImportPreview };
  "llmConfig:startKeyImport": { kind: "async"; args: StartKeyImportArgs; result: KeyImportProgress };
  "llmConfig:cancelKeyImport": { kind: "async"; args: ImportIdArgs; result: KeyImportProgress };
  "llmConfig:updateApiKeys": { kind: "sync"; args: UpdateApiKeysArgs; result: Written<KeyList> };
  "llmConfig:deleteApiKeys": { kind: "sync"; args: KeyIdsArgs; result: Written<DeletedKeys> };
  "llmConfig:testApiKeys": { kind: "async"; args: KeyIdsArgs; result: Array<KeyTestResult> };
  "llmConfig:exportApiKeys": { kind: "async"; args: ExportApiKeysArgs; result: ExportedKeys };
  "llmConfig:listModels": { kind: "async"; args: ListModelsArgs; result: ModelList };
  "llmConfig:listModelsFor": { kind: "async"; args: ListModelsForArgs; result: ModelList };
  "localApi:getStatus": { kind: "sync"; args: NoArgs; result: LocalApiStatus };
  "localApi:configure": { kind: "async"; args: ConfigureLocalApiArgs; result: LocalApiConfigured };
  "localApi:regenerateToken": { kind: "async"; args: NoArgs; result: LocalApiToken };
  "localApi:listTokens": { kind: "sync"; args: NoArgs; result: Array<NamedToken> };
  "localApi:createToken": { kind: "sync"; args: CreateTokenArgs; result: NewNamedToken };
  "localApi:updateToken": { kind: "sync"; args: UpdateTokenArgs; result: Array<NamedToken> };
  "localApi:revokeToken": { kind: "sync"; args: TokenNameArgs; result: Array<NamedToken> };
  "localApi:getRoutes": { kind: "sync"; args: NoArgs; result: Array<Route> };
  "localApi:setRoutes": { kind: "sync"; args: SetRoutesArgs; result: Array<Route> };
  "localApi:testRoute": { kind: "async"; args: TestRouteArgs; result: RouteTest };
  "localApi:getAgents": { kind: "sync"; args: NoArgs; result: Agents };
  "localApi:connectAgent": { kind: "sync"; args: ConnectAgentArgs; result: AgentConnected };
  "localApi:disconnectAgent": { kind: "sync"; args: DisconnectAgentArgs; result: Agents };
  "team:getStatus": { kind: "sync"; args: NoArgs; result: TeamStatus };
  "team:connect": { kind: "async"; args: ConnectTeamArgs; result: TeamStatus };
  "team:disconnect": { kind: "async"; args: NoArgs; result: TeamStatus };
  "team:generateSecret": { kind: "sync"; args: NoArgs; result: TeamSecret };
  "settings:get": { kind: "sync"; args: NoArgs; result: Settings };
  "settings:update": { kind: "sync"; args: UpdateSettingsArgs; result: Settings };
  "usage:getSummary": { kind: "sync"; args: UsageRangeArgs; result: UsageSummary };
  "usage:getSeries": { kind: "sync"; args: UsageSeriesArgs; result: UsageSeries };
  "usage:exportCsv": { kind: "async"; args: UsageRangeArgs; result: ExportResult };
  "usage:getPrices": { kind: "sync"; args: NoArgs; result: Array<Price> };
  "usage:setPrice": { kind: "sync"; args: SetPriceArgs; result: Price };
  "usage:deletePrice": { kind: "sync"; args: ModelArgs; result: DeletedPrice };
  "usage:purge": { kind: "sync"; args: PurgeUsageArgs; result: Purged };
  "usage:getBySource": { kind: "sync"; args: SourceRangeArgs; result: UsageBySource };
  "usage:getByToken": { kind: "sync"; args: SourceRangeArgs; result: Array<TokenUsage> };
  "chat:list": { kind: "sync"; args: NoArgs; result: Array<Chat> };
  "chat:create": { kind: "sync"; args: CreateChatArgs; result: Chat };
  "chat:update": { kind: "sync"; args: UpdateChatArgs; result: Chat };
  "chat:delete": { kind: "sync"; args: IdArgs; result: DeletedChat };
  "chat:close": { kind: "sync"; args: IdArgs; result: ChatClosed };
  "chat:getMessages": { kind: "sync"; args: ChatIdArgs; result: Array<Message> };
  "chat:stop": { kind: "sync"; args: ChatIdArgs; result: Stopped };
  "chat:search": { kind: "sync"; args: SearchChatsArgs; result: Array<ChatSearchResult> };
  "chat:attach": { kind: "sync"; args: AttachArgs; result: Attachment };
  "chat:attachmentData": { kind: "sync"; args: AttachmentDataArgs; result: AttachmentData };
  "chat:exportMarkdown": { kind: "async"; args: ChatIdArgs; result: ExportResult };
  "chat:send": { kind: "stream"; args: SendArgs; result: Message; event: ChatEvent };
};

export type Events = {
  "llmConfig:changed": ProviderChanged;
  "llmConfig:keyImportProgress": KeyImportProgress;
  "team:changed": null;
  "pool:alert": PoolAlert;
};
