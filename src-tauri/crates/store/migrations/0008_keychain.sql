-- Keys at rest in the operating system's keychain. A key is stored either in this database
-- (`storage = 'database'`: `api_key` holds the key or a `$NAME` reference) or in the keychain
-- (`storage = 'keychain'`: the keychain holds it under the key's id; `api_key` is NULL and
-- `preview` keeps its masked form for display). SQLite cannot relax a NOT NULL column in place,
-- so the table is rebuilt with every row and index as it was.
CREATE TABLE llm_provider_api_keys_v8 (
    id              TEXT PRIMARY KEY NOT NULL,
    provider_id     TEXT NOT NULL REFERENCES providers (id) ON DELETE CASCADE,
    label           TEXT,
    storage         TEXT NOT NULL DEFAULT 'database' CHECK (storage IN ('keychain', 'database')),
    api_key         TEXT CHECK (api_key IS NULL OR length(trim(api_key)) > 0),
    preview         TEXT,
    enabled         INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    weight          INTEGER NOT NULL DEFAULT 1 CHECK (weight BETWEEN 1 AND 100),
    sort_order      INTEGER NOT NULL DEFAULT 0,
    disabled_reason TEXT,
    disabled_at     INTEGER,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    rpm_limit       INTEGER CHECK (rpm_limit IS NULL OR rpm_limit BETWEEN 1 AND 100000),
    max_concurrent  INTEGER CHECK (max_concurrent IS NULL OR max_concurrent BETWEEN 1 AND 1000),
    CHECK ((storage = 'database') = (api_key IS NOT NULL)),
    CHECK (storage = 'database' OR preview IS NOT NULL)
) STRICT;

INSERT INTO llm_provider_api_keys_v8
    (id, provider_id, label, storage, api_key, preview, enabled, weight, sort_order, disabled_reason,
     disabled_at, created_at, updated_at, rpm_limit, max_concurrent)
SELECT id, provider_id, label, 'database', api_key, NULL, enabled, weight, sort_order, disabled_reason,
       disabled_at, created_at, updated_at, rpm_limit, max_concurrent
FROM llm_provider_api_keys;

DROP TABLE llm_provider_api_keys;
ALTER TABLE llm_provider_api_keys_v8 RENAME TO llm_provider_api_keys;
CREATE INDEX llm_provider_api_keys_by_provider ON llm_provider_api_keys (provider_id, sort_order, created_at);

-- The provider-level key, likewise: in the keychain under `provider:<id>` or in `api_key`.
ALTER TABLE providers ADD COLUMN api_key_storage TEXT NOT NULL DEFAULT 'database'
    CHECK (api_key_storage IN ('keychain', 'database'));
ALTER TABLE providers ADD COLUMN api_key_preview TEXT;
