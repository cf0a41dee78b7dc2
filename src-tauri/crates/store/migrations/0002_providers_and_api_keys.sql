-- LLM providers and the pool of API keys of each.
CREATE TABLE providers (
    id          TEXT PRIMARY KEY NOT NULL,
    name        TEXT NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('openai', 'anthropic')),
    base_url    TEXT NOT NULL,
    -- The provider-level key, used only while the pool has no entries at all.
    api_key     TEXT,
    builtin     INTEGER NOT NULL DEFAULT 0 CHECK (builtin IN (0, 1)),
    sort_order  INTEGER NOT NULL DEFAULT 0,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
) STRICT;

INSERT INTO providers (id, name, kind, base_url, builtin, sort_order, created_at, updated_at) VALUES
    ('openai',    'OpenAI',    'openai',    'https://api.openai.com/v1',  1, 0, CAST(unixepoch('subsec') * 1000 AS INTEGER), CAST(unixepoch('subsec') * 1000 AS INTEGER)),
    ('anthropic', 'Anthropic', 'anthropic', 'https://api.anthropic.com',  1, 1, CAST(unixepoch('subsec') * 1000 AS INTEGER), CAST(unixepoch('subsec') * 1000 AS INTEGER)),
    ('local',     'Local',     'openai',    'http://127.0.0.1:11434/v1',  1, 2, CAST(unixepoch('subsec') * 1000 AS INTEGER), CAST(unixepoch('subsec') * 1000 AS INTEGER));

-- Times are milliseconds since the Unix epoch.
CREATE TABLE llm_provider_api_keys (
    id              TEXT PRIMARY KEY NOT NULL,
    provider_id     TEXT NOT NULL REFERENCES providers (id) ON DELETE CASCADE,
    label           TEXT,
    -- The key itself, or `$NAME` for the environment variable NAME.
    api_key         TEXT NOT NULL CHECK (length(trim(api_key)) > 0),
    enabled         INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    weight          INTEGER NOT NULL DEFAULT 1 CHECK (weight BETWEEN 1 AND 100),
    sort_order      INTEGER NOT NULL DEFAULT 0,
    -- Set when the pool disabled the key after the provider rejected it (e.g. 'HTTP 401').
    disabled_reason TEXT,
    disabled_at     INTEGER,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
) STRICT;

CREATE INDEX llm_provider_api_keys_by_provider
    ON llm_provider_api_keys (provider_id, sort_order, created_at);
