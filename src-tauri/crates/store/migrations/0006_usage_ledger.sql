-- The usage ledger: one row per upstream attempt. Times are milliseconds since the epoch.
-- provider_id and key_id are kept as they were (no foreign key): history outlives a deleted key.
CREATE TABLE usage_attempts (
    id            INTEGER PRIMARY KEY,
    at            INTEGER NOT NULL,
    provider_id   TEXT NOT NULL,
    key_id        TEXT,             -- NULL: the provider-level key
    model         TEXT NOT NULL,
    chat_id       TEXT,
    source        TEXT NOT NULL,    -- 'chat', or a local API client's user agent
    outcome       TEXT NOT NULL CHECK (outcome IN ('ok', 'rate_limited', 'auth_rejected', 'quota_exhausted',
                                                   'provider_error', 'transport_error', 'stopped')),
    status        INTEGER,
    ttft_ms       INTEGER,
    latency_ms    INTEGER NOT NULL,
    input_tokens  INTEGER,          -- every prompt token, cached ones included
    cached_tokens INTEGER,
    output_tokens INTEGER
) STRICT;

CREATE INDEX usage_attempts_by_time ON usage_attempts (at);

-- Hourly totals per provider, key and model, written in the same transactions as the attempts
-- they sum: summaries over months read these, not every attempt.
CREATE TABLE usage_hourly (
    hour          INTEGER NOT NULL, -- the start of the UTC hour
    provider_id   TEXT NOT NULL,
    key_id        TEXT NOT NULL,    -- '' for the provider-level key
    model         TEXT NOT NULL,
    requests      INTEGER NOT NULL,
    failures      INTEGER NOT NULL, -- every outcome but ok and stopped
    rate_limited  INTEGER NOT NULL,
    failovers     INTEGER NOT NULL, -- rate limited, auth rejected or out of credit: the pool moved on
    input_tokens  INTEGER NOT NULL,
    cached_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    latencies     BLOB NOT NULL,    -- a latency histogram (see usage.rs)
    PRIMARY KEY (hour, provider_id, key_id, model)
) STRICT, WITHOUT ROWID;

CREATE INDEX usage_hourly_by_provider ON usage_hourly (provider_id, hour);

-- Prices per model, as the user enters them: US dollars per million tokens.
CREATE TABLE model_prices (
    model              TEXT PRIMARY KEY NOT NULL,
    input_per_million  REAL NOT NULL CHECK (input_per_million >= 0),
    cached_per_million REAL CHECK (cached_per_million >= 0),
    output_per_million REAL NOT NULL CHECK (output_per_million >= 0),
    updated_at         INTEGER NOT NULL
) STRICT;

-- What each reply used.
ALTER TABLE messages ADD COLUMN input_tokens INTEGER;
ALTER TABLE messages ADD COLUMN cached_tokens INTEGER;
ALTER TABLE messages ADD COLUMN output_tokens INTEGER;

-- The key a chat is kept on, so a restart keeps it there (its prompt cache warm).
ALTER TABLE chats ADD COLUMN key_id TEXT;
ALTER TABLE chats ADD COLUMN key_used_at INTEGER;
