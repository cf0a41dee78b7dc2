-- The team's ledger: one row per upstream attempt of every replica, lean (ids and numbers), the
-- names in small tables of their own. Never a key's value or a token: a key is its team identity
-- (a MAC under the team secret, the same on every replica) or `local:` and its id, and its label.

-- The replicas writing here, by the id each keeps in its data dir (`server-replica-id`).
CREATE TABLE ledger_replicas (id serial PRIMARY KEY, name text NOT NULL UNIQUE);
CREATE TABLE ledger_providers (id serial PRIMARY KEY, name text NOT NULL UNIQUE);
CREATE TABLE ledger_keys (
    id          serial PRIMARY KEY,
    provider_id integer NOT NULL REFERENCES ledger_providers (id),
    identity    text NOT NULL,
    label       text,
    UNIQUE (provider_id, identity)
);
CREATE TABLE ledger_models (id serial PRIMARY KEY, name text NOT NULL UNIQUE);
-- The clients: `chat`, or a client's user agent.
CREATE TABLE ledger_sources (id serial PRIMARY KEY, name text NOT NULL UNIQUE);
CREATE TABLE ledger_members (id serial PRIMARY KEY, name text NOT NULL UNIQUE);
CREATE TABLE ledger_outcomes (id smallint PRIMARY KEY, name text NOT NULL UNIQUE);
INSERT INTO ledger_outcomes (id, name) VALUES
    (0, 'ok'), (1, 'rate_limited'), (2, 'auth_rejected'), (3, 'quota_exhausted'),
    (4, 'provider_error'), (5, 'transport_error'), (6, 'stopped');

-- The attempts, a partition per UTC month (`ledger_attempts_YYYY_MM`, made ahead by the
-- replicas, dropped past `ledger_retention_months`). `(replica_id, seq)` is an attempt's key: a
-- row shipped again (Postgres committed, the answer was lost) is kept once. The ids point into
-- the tables above (no foreign keys: every insert would check them); `key_id` NULL is the
-- provider-level key, `member_id` NULL the server's own token.
CREATE TABLE ledger_attempts (
    at            timestamptz NOT NULL,
    replica_id    integer NOT NULL,
    seq           bigint NOT NULL,
    provider_id   integer NOT NULL,
    key_id        integer,
    model_id      integer NOT NULL,
    source_id     integer NOT NULL,
    member_id     integer,
    outcome       smallint NOT NULL,
    status        smallint,
    ttft_ms       integer,
    latency_ms    integer NOT NULL,
    input_tokens  integer,          -- every prompt token, cached ones included
    cached_tokens integer,
    output_tokens integer,
    PRIMARY KEY (replica_id, seq, at)
) PARTITION BY RANGE (at);

-- Rows arrive about in time order: a BRIN index finds a range for a few pages of index a month.
CREATE INDEX ledger_attempts_by_time ON ledger_attempts USING brin (at);
