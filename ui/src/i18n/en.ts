/**
 * The English messages: the reference every other language must match key for key (a missing or
 * extra key in another dictionary is a type error). `{name}` marks an interpolated value.
 */
export const en = {
  'app.starting': 'Starting Keypool',
  'app.backendUnreachable': "Keypool's backend did not answer",
  'app.dataUnavailable': 'Keypool could not open your data',
  'startup.databaseFile': 'Database file:',
  'startup.notModified':
    'Your file was not modified or replaced. Move it aside (or restore a backup) and restart Keypool to begin with a new database, or install the Keypool version that created it.',
  'startup.logDetails': 'Details are in the log:',

  'nav.main': 'Main',
  'nav.chat': 'Chat',
  'nav.settings': 'Settings',

  'chat.title': 'Chat',
  'chat.emptyTitle': 'No conversations yet',
  'chat.emptyBody':
    'Add API keys in Settings → Providers, then start a chat. Keypool picks a key from the pool for each chat and keeps the chat on it.',

  'settings.title': 'Settings',
  'settings.sections': 'Settings sections',
  'settings.providers': 'Providers',
  'settings.general': 'General',
  'settings.about': 'About',

  'about.version': 'Version',
  'about.data': 'Data',
  'about.logs': 'Logs',

  'general.language': 'Language',
  'general.languageSystem': 'Same as the system ({language})',
  'general.theme': 'Theme',
  'general.themeSystem': 'Same as the system',
  'general.themeLight': 'Light',
  'general.themeDark': 'Dark',

  'providers.title': 'Providers',
  'providers.intro':
    'Each provider holds a pool of API keys. Keypool spreads requests over the pool by weight, keeps each chat on one key so the provider’s prompt cache stays warm, and fails over when a key is rate-limited or revoked.',
  'providers.loading': 'Loading providers…',
  'providers.loadFailed': 'Could not load the providers: {message}',
  'providers.retry': 'Try again',
  'providers.keyCount': 'Keys in the pool: {count}',
  'providers.kind.openai': 'OpenAI-compatible',
  'providers.kind.anthropic': 'Anthropic',
  'provider.baseUrl': 'Base URL',
  'provider.providerKey': 'Provider-level key',
  'provider.noProviderKey': 'Not set',
  'provider.providerKeyFallback': 'used only while the pool is empty',
  'provider.readOnly': 'Provider settings are read-only for now.',

  'pool.title': 'API Key Pool',
  'pool.summary': 'Keys on: {enabled} of {total}',
  'pool.add': 'Add key',
  'pool.paste': 'Paste several',
  'pool.loading': 'Loading keys…',
  'pool.loadFailed': 'Could not load the keys: {message}',
  'pool.emptyTitle': 'No keys in the pool yet',
  'pool.emptyBody':
    'Add several keys for this provider and Keypool spreads requests over them, keeps each chat on one key, and switches to another key when one is rate-limited or revoked.',
  'pool.emptyWeights':
    'Weights set each key’s share: a key with weight 3 gets three requests for every one that a key with weight 1 gets.',
  'pool.emptyFallbackSet': 'While the pool is empty, the provider-level key ({preview}) is used.',
  'pool.emptyFallbackUnset':
    'While the pool is empty, the provider-level key is used; this provider has none, so add a key to chat with it.',
  'pool.colKey': 'Key',
  'pool.colWeight': 'Weight',
  'pool.colState': 'State',
  'pool.colUsage': 'Usage',
  'pool.colEnabled': 'On',
  'pool.added': 'Key added.',
  'pool.addedMany': 'Keys added: {count}.',
  'pool.deleted': 'Key deleted.',
  'pool.moved': '{name} moved to position {position} of {total}.',
  'pool.actionFailed': 'That did not work: {message}',

  'key.unlabeled': 'Unlabeled key',
  'key.envRef': 'from the environment',
  'key.weightOf': 'Weight of {name}',
  'key.use': 'Use {name}',
  'key.delete': 'Delete',
  'key.deleteLabel': 'Delete {name}',
  'key.resetCooldown': 'Reset cooldown',
  'key.resetCooldownLabel': 'Reset the cooldown of {name}',
  'key.move': 'Move {name}',
  'key.moveHint': 'Drag, or press the Up and Down arrow keys, to change the order.',

  'state.active': 'Active',
  'state.cooling': 'Cooling, {time} left',
  'state.coolingDone': 'Cooling, ending…',
  'state.disabledAfter': 'Disabled after {status} at {time}',
  'state.disabledReason': 'Disabled ({reason}) at {time}',
  'state.off': 'Off',

  'usage.requests': 'Requests: {count}',
  'usage.failures': 'Failures: {count}',
  'usage.lastUsed': 'Last used {when}',
  'usage.never': 'Not used yet',

  'add.title': 'Add an API key',
  'add.apiKey': 'API key',
  'add.apiKeyHint': 'Paste the key, or write $NAME to read it from the environment variable NAME each time it is used.',
  'add.envRefNote': 'Read from the environment variable {name} when used.',
  'add.show': 'Show key',
  'add.hide': 'Hide key',
  'add.label': 'Label',
  'add.optional': 'optional',
  'add.labelPlaceholder': 'e.g. Production #1',
  'add.weight': 'Weight',
  'add.weightHint': '1–100, default 1. A higher weight gets a larger share of requests.',
  'add.submit': 'Add key',
  'add.saving': 'Adding…',

  'bulk.title': 'Paste several keys',
  'bulk.keys': 'Keys, one per line',
  'bulk.hint': 'Blank lines are skipped. Every key gets the weight below and no label; you can add labels later.',
  'bulk.count': 'Keys to add: {count}',
  'bulk.submit': 'Add keys',
  'bulk.line': 'Line {line}: {message}',
  'bulk.partial': 'Added: {added}. The lines left in the box were not added; fix them and try again.',
  'bulk.none': 'Paste at least one key.',

  'delete.title': 'Delete this key?',
  'delete.body': '“{name}” will be removed from the pool. This cannot be undone: to use the key again you will have to add it again.',
  'delete.confirm': 'Delete key',

  'common.cancel': 'Cancel',
  'common.close': 'Close',

  'error.apiKeyRequired': 'Enter an API key.',
  'error.apiKeyTooLong': 'An API key is at most 4096 characters.',
  'error.apiKeySpaces': 'A key has no spaces or line breaks. To add several at once, use “Paste several”.',
  'error.envName': 'After $ write an environment variable name: letters, digits and _, not starting with a digit (e.g. $OPENAI_API_KEY).',
  'error.labelTooLong': 'A label is at most 100 characters.',
  'error.weightRange': 'The weight is a whole number from 1 to 100.',
} as const;

export type MessageKey = keyof typeof en;
/** A language's messages: exactly the English keys. */
export type Dictionary = { readonly [K in MessageKey]: string };
