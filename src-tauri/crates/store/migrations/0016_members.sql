-- Members of a server's shared endpoint (keypool-server): each has its own token, of which only
-- the SHA-256 is kept, and optional limits. Names are 1 to 64 of A-Z a-z 0-9 . _ - @, unique in
-- any case. `source` says who manages the row: the config file (`[[members]]`, applied at start
-- and on SIGHUP) or the command line (`keypool-server members add|update|revoke`).
CREATE TABLE members (
    name                TEXT PRIMARY KEY NOT NULL COLLATE NOCASE
                        CHECK (length(name) BETWEEN 1 AND 64),
    token_sha256        TEXT NOT NULL UNIQUE CHECK (length(token_sha256) = 64),
    source              TEXT NOT NULL CHECK (source IN ('cli', 'config')),
    enabled             INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    expires_at          INTEGER,          -- ms since the epoch; NULL: never
    budget_usd          REAL CHECK (budget_usd IS NULL OR budget_usd >= 0),
    budget_tokens       INTEGER CHECK (budget_tokens IS NULL OR budget_tokens >= 0),
    budget_period       TEXT NOT NULL DEFAULT 'month' CHECK (budget_period IN ('day', 'week', 'month', 'total')),
    requests_per_minute INTEGER CHECK (requests_per_minute IS NULL OR requests_per_minute > 0),
    tokens_per_minute   INTEGER CHECK (tokens_per_minute IS NULL OR tokens_per_minute > 0),
    max_in_flight       INTEGER CHECK (max_in_flight IS NULL OR max_in_flight > 0),
    models              TEXT NOT NULL DEFAULT '[]',  -- JSON array of globs; empty: every model
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL,
    CHECK (budget_usd IS NULL OR budget_tokens IS NULL)
) STRICT;

-- What each member spent through this server, per budget period ('day:2026-12-10',
-- 'week:2026-12-07' (its Monday), 'month:2026-12', 'total'; UTC): tokens, and US dollars in
-- millionths at the prices of the moment. A team's replicas each keep their own share; Redis
-- sums them.
CREATE TABLE member_spend (
    member    TEXT NOT NULL COLLATE NOCASE,
    period    TEXT NOT NULL,
    tokens    INTEGER NOT NULL,
    micro_usd INTEGER NOT NULL,
    PRIMARY KEY (member, period)
) STRICT, WITHOUT ROWID;

-- The member whose token sent the request (NULL: the app, or the server's own token).
ALTER TABLE usage_attempts ADD COLUMN member TEXT;
CREATE INDEX usage_attempts_by_member ON usage_attempts (member, at) WHERE member IS NOT NULL;
