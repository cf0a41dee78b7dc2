-- Providers may be a coding plan: Z.ai's GLM Coding Plan, MiniMax's, Kimi Code (the kinds of
-- keypool-llm's `KINDS`; a test holds the two together). Rebuilt as 0014 did.
CREATE TABLE providers_v23 (
    id              TEXT PRIMARY KEY NOT NULL,
    name            TEXT NOT NULL,
    kind            TEXT NOT NULL CHECK (kind IN ('openai', 'anthropic', 'gemini', 'openrouter', 'deepseek', 'moonshot', 'siliconflow', 'groq', 'xai', 'zai', 'minimax', 'kimi')),
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

INSERT INTO providers_v23
    (id, name, kind, base_url, api_key, builtin, sort_order, created_at, updated_at, models, default_model,
     system_prompt, api_key_storage, api_key_preview)
SELECT id, name, kind, base_url, api_key, builtin, sort_order, created_at, updated_at, models, default_model,
       system_prompt, api_key_storage, api_key_preview
FROM providers;

DROP TABLE providers;
ALTER TABLE providers_v23 RENAME TO providers;

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
