-- Providers may be OpenRouter (`kind = 'openrouter'`). The kinds allowed here are the rows of
-- keypool-llm's `KINDS`; a test holds the two together. SQLite cannot change a CHECK in place,
-- so the table is rebuilt with every row and column as it was (as 0010 did: migrations run with
-- foreign keys off, so dropping the old table deletes no key and no chat's provider).
CREATE TABLE providers_v14 (
    id              TEXT PRIMARY KEY NOT NULL,
    name            TEXT NOT NULL,
    kind            TEXT NOT NULL CHECK (kind IN ('openai', 'anthropic', 'gemini', 'openrouter')),
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

INSERT INTO providers_v14
    (id, name, kind, base_url, api_key, builtin, sort_order, created_at, updated_at, models, default_model,
     system_prompt, api_key_storage, api_key_preview)
SELECT id, name, kind, base_url, api_key, builtin, sort_order, created_at, updated_at, models, default_model,
       system_prompt, api_key_storage, api_key_preview
FROM providers;

DROP TABLE providers;
ALTER TABLE providers_v14 RENAME TO providers;
