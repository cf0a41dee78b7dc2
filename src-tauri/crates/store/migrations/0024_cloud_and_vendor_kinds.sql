-- Providers may be Mistral, Together AI, Fireworks AI, Ollama (its Anthropic-compatible API),
-- LM Studio, Azure OpenAI or Amazon Bedrock (the kinds of keypool-llm's `KINDS`; a test holds
-- the two together). Rebuilt as 0014 did.
CREATE TABLE providers_v24 (
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

INSERT INTO providers_v24
    (id, name, kind, base_url, api_key, builtin, sort_order, created_at, updated_at, models, default_model,
     system_prompt, api_key_storage, api_key_preview)
SELECT id, name, kind, base_url, api_key, builtin, sort_order, created_at, updated_at, models, default_model,
       system_prompt, api_key_storage, api_key_preview
FROM providers;

DROP TABLE providers;
ALTER TABLE providers_v24 RENAME TO providers;
