-- Providers may be any kind of keypool-llm's `KINDS` added since 0014: the prepaid vendors
-- (DeepSeek, Moonshot, SiliconFlow), Groq, xAI, Mistral, Together AI, Fireworks AI, the coding
-- plans (Z.ai, MiniMax, Kimi Code), Ollama's Anthropic API, LM Studio, Azure OpenAI and Amazon
-- Bedrock (a test holds the CHECK to the table). The table is rebuilt as 0014 did, every row and
-- column as it was.
CREATE TABLE providers_v22 (
    id              TEXT PRIMARY KEY NOT NULL,
    name            TEXT NOT NULL,
    kind            TEXT NOT NULL CHECK (kind IN ('openai', 'anthropic', 'gemini', 'openrouter', 'deepseek', 'moonshot', 'siliconflow', 'groq', 'xai', 'zai', 'minimax', 'kimi', 'mistral', 'together', 'fireworks', 'ollama', 'lmstudio', 'azure', 'bedrock')),
    base_url        TEXT NOT NULL,
    api_key         TEXT,
    builtin         INTEGER NOT NULL DEFAULT 0 CHECK (builtin IN (0, 1)),
    sort_order      INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    models          TEXT NOT NULL DEFAULT '[]',
    default_model   TEXT,
    system_prompt   TEXT,
    api_key_storage TEXT NOT NULL DEFAULT 'database' CHECK (api_key_storage IN ('keychain', 'database')),
    api_key_preview TEXT
) STRICT;

INSERT INTO providers_v22
    (id, name, kind, base_url, api_key, builtin, sort_order, created_at, updated_at, models, default_model,
     system_prompt, api_key_storage, api_key_preview)
SELECT id, name, kind, base_url, api_key, builtin, sort_order, created_at, updated_at, models, default_model,
       system_prompt, api_key_storage, api_key_preview
FROM providers;

DROP TABLE providers;
ALTER TABLE providers_v22 RENAME TO providers;

-- The last balance read of each key whose provider answers one (DeepSeek, Moonshot, SiliconFlow,
-- OpenRouter): what it found, or why it found nothing. Kept so a key's row shows its balance
-- after a restart and in `keypool-server keys list`; a key's deletion takes its reading along.
CREATE TABLE key_balances (
    key_id   TEXT PRIMARY KEY NOT NULL REFERENCES llm_provider_api_keys (id) ON DELETE CASCADE,
    read_at  INTEGER NOT NULL,
    -- What is left, in `currency` (ISO 4217); both null: no limit, or nothing readable.
    amount   REAL,
    currency TEXT CHECK (currency IS NULL OR length(currency) = 3),
    usable   INTEGER NOT NULL DEFAULT 1 CHECK (usable IN (0, 1)),
    -- Why nothing was read (the provider's words masked, or what the answer lacked).
    problem  TEXT,
    -- The answer's HTTP status, when one came.
    status   INTEGER
) STRICT;

-- The last plan-window read of each key whose provider answers one (Z.ai, MiniMax): each
-- window's span, share used and reset (`windows`, JSON: [{"span":{"count","unit"},"used",
-- "resetsAt"}]), or why nothing was read. A key's deletion takes its reading along.
CREATE TABLE key_windows (
    key_id   TEXT PRIMARY KEY NOT NULL REFERENCES llm_provider_api_keys (id) ON DELETE CASCADE,
    read_at  INTEGER NOT NULL,
    windows  TEXT NOT NULL DEFAULT '[]',
    problem  TEXT,
    status   INTEGER
) STRICT;
