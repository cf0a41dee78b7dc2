-- keypool-server with its team's ledger in Postgres (`ledger = "postgres://…"`): the attempts
-- that could not reach Postgres yet, shipped oldest first and deleted once Postgres has them.
-- `seq` is each attempt's key there (with the replica's id), so an attempt shipped twice
-- (Postgres committed, the answer was lost) is kept once. Names, not Postgres' ids: those may
-- not be known while it is away. Never a key's value: a key is its team identity (or `local:`
-- and its id) and its label.
CREATE TABLE ledger_outbox (
    seq            INTEGER PRIMARY KEY NOT NULL,
    at             INTEGER NOT NULL,          -- ms since the epoch
    provider       TEXT NOT NULL,             -- the provider's name
    key_identity   TEXT,                      -- NULL: the provider-level key
    key_label      TEXT,
    model          TEXT NOT NULL,
    source         TEXT NOT NULL,
    member         TEXT,                      -- NULL: the server's own token
    outcome        TEXT NOT NULL,
    status         INTEGER,
    ttft_ms        INTEGER,
    latency_ms     INTEGER NOT NULL,
    input_tokens   INTEGER,
    cached_tokens  INTEGER,
    output_tokens  INTEGER
) STRICT;

-- The next attempt number this replica may use: reserved a block at a time before any of it is
-- used, so a restart never uses one again.
CREATE TABLE ledger_sequence (
    id    INTEGER PRIMARY KEY NOT NULL CHECK (id = 1),
    next  INTEGER NOT NULL
) STRICT;
