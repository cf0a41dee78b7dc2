//! The schema, as an ordered list of migrations. `PRAGMA user_version` records how many have
//! run. Migrations are append-only: never edit one that has shipped, add the next.

use std::sync::LazyLock;

use rusqlite_migration::{Migrations, M};

const SOURCES: &[&str] = &[
    include_str!("../migrations/0001_settings.sql"),
    include_str!("../migrations/0002_providers_and_api_keys.sql"),
    include_str!("../migrations/0003_provider_models_and_chats.sql"),
    include_str!("../migrations/0004_message_provider_key.sql"),
    include_str!("../migrations/0005_key_limits.sql"),
    include_str!("../migrations/0006_usage_ledger.sql"),
    include_str!("../migrations/0007_conversation_tools.sql"),
    include_str!("../migrations/0008_keychain.sql"),
    include_str!("../migrations/0009_key_quota_group.sql"),
    include_str!("../migrations/0010_gemini_provider_kind.sql"),
    include_str!("../migrations/0011_gemini_builtin_provider.sql"),
    include_str!("../migrations/0012_attachments.sql"),
    include_str!("../migrations/0013_current_builtin_models.sql"),
    include_str!("../migrations/0014_openrouter_provider_kind.sql"),
    include_str!("../migrations/0015_usage_without_a_key.sql"),
    include_str!("../migrations/0016_members.sql"),
    include_str!("../migrations/0017_key_enabled_at.sql"),
    include_str!("../migrations/0018_usage_by_source.sql"),
    include_str!("../migrations/0019_member_agent.sql"),
    include_str!("../migrations/0020_ledger_outbox.sql"),
    include_str!("../migrations/0021_keyless_answers.sql"),
    include_str!("../migrations/0022_provider_kinds_balances_windows.sql"),
];

/// The schema version this build writes and understands.
pub const SCHEMA_VERSION: u32 = SOURCES.len() as u32;

pub(crate) static MIGRATIONS: LazyLock<Migrations<'static>> =
    LazyLock::new(|| Migrations::new(SOURCES.iter().map(|sql| M::up(sql)).collect()));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_are_valid() {
        MIGRATIONS.validate().expect("every migration must apply cleanly to an empty database");
    }
}

/// Upgrades from every earlier schema version, with data in it: nothing may be lost.
#[cfg(test)]
mod upgrade_tests {
    use rusqlite::Connection;

    use super::*;
    use crate::{Database, DATABASE_FILE_NAME};

    /// Every key's columns as they were from v9 to v16 (later versions add columns).
    const KEYS_AS_OF_V9: &str = "SELECT id, provider_id, label, api_key, enabled, weight, sort_order, \
                                 disabled_reason, disabled_at, created_at, updated_at, rpm_limit, max_concurrent, \
                                 storage, preview, quota_group FROM llm_provider_api_keys ORDER BY id";

    /// A database file at schema `version`, filled by `fill`.
    fn database_at(version: usize, fill: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join(DATABASE_FILE_NAME)).unwrap();
        MIGRATIONS.to_version(&mut conn, version).unwrap();
        conn.execute_batch(fill).unwrap();
        dir
    }

    fn rows(db: &Database, sql: &str) -> Vec<String> {
        rows_of(&db.lock().unwrap(), sql)
    }

    /// Every row of `sql`, its values written out and joined by `|`.
    fn rows_of(conn: &Connection, sql: &str) -> Vec<String> {
        let mut stmt = conn.prepare(sql).unwrap();
        let columns = stmt.column_count();
        let mut out = Vec::new();
        let mut rows = stmt.query([]).unwrap();
        while let Some(row) = rows.next().unwrap() {
            out.push(
                (0..columns)
                    .map(|i| format!("{:?}", row.get::<_, rusqlite::types::Value>(i).unwrap()))
                    .collect::<Vec<_>>()
                    .join("|"),
            );
        }
        out
    }

    #[test]
    fn upgrade_from_v1_keeps_settings() {
        let dir = database_at(1, "INSERT INTO settings VALUES ('language', 'ja', 5);");
        let db = Database::open(dir.path()).expect("a v1 database upgrades");
        assert_eq!(db.schema_version().unwrap(), SCHEMA_VERSION, "it reaches the latest schema");
        assert_eq!(
            rows(&db, "SELECT * FROM settings"),
            ["Text(\"language\")|Text(\"ja\")|Integer(5)"],
            "settings kept"
        );
        assert_eq!(
            rows(&db, "SELECT id FROM providers ORDER BY sort_order"),
            ["Text(\"openai\")", "Text(\"anthropic\")", "Text(\"gemini\")", "Text(\"local\")"],
            "the built-ins are added, Google Gemini after Anthropic"
        );
        let copy = dir.path().join(format!("{DATABASE_FILE_NAME}.v1.bak"));
        assert!(copy.is_file(), "a pre-upgrade copy exists");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&copy).unwrap().permissions().mode();
            assert_eq!(mode & 0o077, 0, "the copy holds keys too: private to the user, got {mode:o}");
        }
        let copied = Connection::open(&copy).unwrap();
        let language: String = copied.query_row("SELECT value FROM settings", [], |r| r.get(0)).unwrap();
        assert_eq!(language, "ja", "the copy holds the data as it was before the upgrade");
    }

    #[test]
    fn upgrade_from_v2_keeps_providers_and_every_key_field() {
        let fill = "
            INSERT INTO providers (id, name, kind, base_url, api_key, builtin, sort_order, created_at, updated_at)
              VALUES ('gw', 'Gateway', 'openai', 'https://gw/v1', 'sk-provider', 0, 9, 1, 2);
            INSERT INTO llm_provider_api_keys
              (id, provider_id, label, api_key, enabled, weight, sort_order, disabled_reason, disabled_at, created_at, updated_at)
            VALUES
              ('k1', 'openai', 'prod', 'sk-one', 1, 3, 0, NULL, NULL, 10, 11),
              ('k2', 'openai', NULL, '$ENV_KEY', 0, 100, 1, 'HTTP 401', 12, 13, 14),
              ('k3', 'gw', 'gw key', 'sk-three', 1, 1, 0, NULL, NULL, 15, 16);";
        let dir = database_at(2, fill);
        let before = rows_of(
            &Connection::open(dir.path().join(DATABASE_FILE_NAME)).unwrap(),
            "SELECT * FROM llm_provider_api_keys ORDER BY id",
        );
        let db = Database::open(dir.path()).expect("a v2 database upgrades");
        let v2_columns = "id, provider_id, label, api_key, enabled, weight, sort_order, disabled_reason, disabled_at, \
                          created_at, updated_at";
        let after = rows(&db, &format!("SELECT {v2_columns} FROM llm_provider_api_keys ORDER BY id"));
        assert_eq!(after, before, "every key field is kept");
        let limits = rows(&db, "SELECT rpm_limit, max_concurrent FROM llm_provider_api_keys ORDER BY id");
        assert!(limits.iter().all(|row| row == "Null|Null"), "keys from before have no limits: {limits:?}");
        let gw = rows(
            &db,
            "SELECT name, base_url, api_key, sort_order, models, default_model FROM providers WHERE id = 'gw'",
        );
        assert_eq!(
            gw,
            ["Text(\"Gateway\")|Text(\"https://gw/v1\")|Text(\"sk-provider\")|Integer(10)|Text(\"[]\")|Null"],
            "a user's provider is kept, with no models yet, one place down: Google Gemini came in after Anthropic"
        );
        assert!(dir.path().join(format!("{DATABASE_FILE_NAME}.v2.bak")).is_file(), "a pre-upgrade copy exists");
    }

    #[test]
    fn upgrade_from_v8_keeps_every_key_and_puts_each_in_a_group_of_its_own() {
        let fill = "
            INSERT INTO llm_provider_api_keys
              (id, provider_id, label, storage, api_key, preview, enabled, weight, sort_order, created_at, updated_at,
               rpm_limit, max_concurrent)
            VALUES
              ('k1', 'openai', 'prod', 'database', 'sk-one', NULL, 1, 3, 0, 10, 11, 60, NULL),
              ('k2', 'openai', NULL, 'keychain', NULL, 'sk-…wxyz', 0, 1, 1, 12, 13, NULL, 2);";
        let dir = database_at(8, fill);
        let columns = "id, provider_id, label, storage, api_key, preview, enabled, weight, sort_order, created_at, \
                       updated_at, rpm_limit, max_concurrent";
        let select = format!("SELECT {columns} FROM llm_provider_api_keys ORDER BY id");
        let before = rows_of(&Connection::open(dir.path().join(DATABASE_FILE_NAME)).unwrap(), &select);
        let db = Database::open(dir.path()).expect("a v8 database upgrades");
        let after = rows(&db, &select);
        assert_eq!(after, before, "every key field is kept");
        assert_eq!(
            rows(&db, "SELECT quota_group FROM llm_provider_api_keys ORDER BY id"),
            ["Null", "Null"],
            "keys from before have no quota group: each is a group of its own"
        );
    }

    #[test]
    fn upgrade_from_v9_keeps_providers_keys_and_chats_and_accepts_gemini() {
        let fill = "
            INSERT INTO providers (id, name, kind, base_url, api_key, builtin, sort_order, created_at, updated_at,
                                   models, default_model, system_prompt, api_key_storage, api_key_preview)
              VALUES ('gw', 'Gateway', 'openai', 'https://gw/v1', NULL, 0, 9, 1, 2, '[\"m\"]', 'm', 'be brief',
                      'keychain', 'sk-…abcd');
            INSERT INTO llm_provider_api_keys (id, provider_id, api_key, created_at, updated_at, quota_group)
              VALUES ('k1', 'gw', 'sk-one', 10, 11, 'project-1'), ('k2', 'openai', 'sk-two', 12, 13, NULL);
            INSERT INTO chats (id, title, provider_id, model, created_at, updated_at) VALUES ('c1', 'hi', 'gw', 'm', 1, 1);";
        let dir = database_at(9, fill);
        // Every column but the order, which 0011 moves, and the built-ins' model lists, which
        // 0013 moves on (their own tests check both).
        let providers = "SELECT id, name, kind, base_url, api_key, builtin, created_at, updated_at, \
                         system_prompt, api_key_storage, api_key_preview, \
                         CASE builtin WHEN 0 THEN models END, CASE builtin WHEN 0 THEN default_model END \
                         FROM providers WHERE id <> 'gemini' ORDER BY id";
        let keys = KEYS_AS_OF_V9;
        let chats = "SELECT id, provider_id FROM chats ORDER BY id";
        let before = {
            let conn = Connection::open(dir.path().join(DATABASE_FILE_NAME)).unwrap();
            [rows_of(&conn, providers), rows_of(&conn, keys), rows_of(&conn, chats)]
        };
        let db = Database::open(dir.path()).expect("a v9 database upgrades");
        let after = [rows(&db, providers), rows(&db, keys), rows(&db, chats)];
        assert_eq!(after, before, "every provider, key and chat is kept as it was: no cascade on the rebuild");
        let conn = db.lock().unwrap();
        conn.execute(
            "INSERT INTO providers (id, name, kind, base_url, created_at, updated_at) \
             VALUES ('g', 'Gemini', 'gemini', 'https://generativelanguage.googleapis.com', 1, 1)",
            [],
        )
        .expect("a Gemini provider is accepted");
        assert!(
            conn.execute(
                "INSERT INTO providers (id, name, kind, base_url, created_at, updated_at) VALUES ('x', 'X', 'mystery', 'u', 1, 1)",
                [],
            )
            .is_err(),
            "an unknown kind is still refused"
        );
        let fk: bool = conn.pragma_query_value(None, "foreign_keys", |r| r.get(0)).unwrap();
        assert!(fk, "foreign keys are on once the migrations ran");
        conn.execute("DELETE FROM providers WHERE id = 'gw'", []).unwrap();
        assert_eq!(
            rows_of(&conn, "SELECT id FROM llm_provider_api_keys ORDER BY id"),
            ["Text(\"k2\")"],
            "the keys still refer to the rebuilt table: deleting a provider deletes its keys"
        );
    }

    #[test]
    fn upgrade_from_v10_adds_google_gemini_after_anthropic_and_keeps_everything_else() {
        let fill = "
            INSERT INTO providers (id, name, kind, base_url, api_key, builtin, sort_order, created_at, updated_at,
                                   models, default_model, system_prompt, api_key_storage, api_key_preview)
              VALUES ('gw', 'Gateway', 'openai', 'https://gw/v1', 'sk-provider', 0, 3, 1, 2, '[\"m\"]', 'm',
                      'be brief', 'database', NULL),
                     ('gw2', 'Second', 'anthropic', 'https://gw2', NULL, 0, 4, 3, 4, '[]', NULL, NULL,
                      'database', NULL);
            INSERT INTO llm_provider_api_keys (id, provider_id, api_key, created_at, updated_at, quota_group)
              VALUES ('k1', 'gw', 'sk-one', 10, 11, 'project-1'), ('k2', 'local', 'sk-two', 12, 13, NULL);
            INSERT INTO chats (id, title, provider_id, model, created_at, updated_at) VALUES ('c1', 'hi', 'gw', 'm', 1, 1);";
        let dir = database_at(10, fill);
        // The built-ins' model lists move on in 0013 (its own test checks them).
        let columns = "id, name, kind, base_url, api_key, builtin, created_at, updated_at, \
                       CASE builtin WHEN 0 THEN models END, CASE builtin WHEN 0 THEN default_model END, \
                       system_prompt, api_key_storage, api_key_preview";
        let providers = format!("SELECT {columns} FROM providers WHERE id <> 'gemini' ORDER BY id");
        let keys = KEYS_AS_OF_V9;
        let chats = "SELECT * FROM chats ORDER BY id";
        let before = {
            let conn = Connection::open(dir.path().join(DATABASE_FILE_NAME)).unwrap();
            [rows_of(&conn, &providers), rows_of(&conn, keys), rows_of(&conn, chats)]
        };
        let db = Database::open(dir.path()).expect("a v10 database upgrades");
        let after = [rows(&db, &providers), rows(&db, keys), rows(&db, chats)];
        assert_eq!(after, before, "every provider, key and chat is kept as it was");
        assert_eq!(
            rows(&db, "SELECT id, sort_order FROM providers ORDER BY sort_order, id"),
            [
                "Text(\"openai\")|Integer(0)",
                "Text(\"anthropic\")|Integer(1)",
                "Text(\"gemini\")|Integer(2)",
                "Text(\"local\")|Integer(3)",
                "Text(\"gw\")|Integer(4)",
                "Text(\"gw2\")|Integer(5)",
            ],
            "Google Gemini comes after Anthropic; the others keep their order among themselves"
        );
        assert_eq!(
            rows(
                &db,
                "SELECT name, kind, base_url, builtin, api_key, default_model FROM providers WHERE id = 'gemini'"
            ),
            ["Text(\"Google Gemini\")|Text(\"gemini\")|Text(\"https://generativelanguage.googleapis.com\")|\
              Integer(1)|Null|Text(\"gemini-2.5-flash\")"],
            "the built-in provider, at the host root, with no key"
        );
        assert!(dir.path().join(format!("{DATABASE_FILE_NAME}.v10.bak")).is_file(), "a pre-upgrade copy exists");
    }

    #[test]
    fn upgrade_from_v10_keeps_a_provider_that_holds_the_id_gemini_already() {
        let fill = "
            INSERT INTO providers (id, name, kind, base_url, builtin, sort_order, created_at, updated_at)
              VALUES ('gemini', 'My proxy', 'gemini', 'https://proxy.example', 0, 7, 1, 2);";
        let dir = database_at(10, fill);
        // Every column but the built-ins' model lists, which 0013 moves on (its own test checks them).
        let all = "SELECT id, name, kind, base_url, api_key, builtin, sort_order, created_at, updated_at, \
                   CASE builtin WHEN 0 THEN models END, CASE builtin WHEN 0 THEN default_model END, \
                   system_prompt, api_key_storage, api_key_preview FROM providers ORDER BY id";
        let before = rows_of(&Connection::open(dir.path().join(DATABASE_FILE_NAME)).unwrap(), all);
        let db = Database::open(dir.path()).expect("a v10 database upgrades");
        assert_eq!(rows(&db, all), before, "nothing is replaced or moved: the user's provider stays as it was");
    }

    #[test]
    fn upgrade_from_v11_keeps_messages_and_links_attachments_to_them() {
        let fill = "
            INSERT INTO chats (id, title, provider_id, model, created_at, updated_at) VALUES ('c', 'T', 'openai', 'm', 1, 2);
            INSERT INTO messages (id, chat_id, role, content, created_at) VALUES ('m1', 'c', 'user', 'hi', 3);";
        let dir = database_at(11, fill);
        let db = Database::open(dir.path()).expect("a v11 database upgrades");
        assert_eq!(rows(&db, "SELECT id, content FROM messages"), ["Text(\"m1\")|Text(\"hi\")"], "messages are kept");
        let conn = db.lock().unwrap();
        let row = crate::attachments::AttachmentRow {
            sha256: "a".repeat(64),
            kind: crate::attachments::AttachmentKind::Text,
            media_type: "text/plain".into(),
            size: 2,
            width: None,
            height: None,
            send: None,
            thumbnail: None,
            created_at: 4,
        };
        crate::attachments::insert(&conn, &row).unwrap();
        crate::attachments::link(&conn, "m1", &[("a".repeat(64), "n.txt".into())]).unwrap();
        let linked = crate::attachments::of_chat(&conn, "c").unwrap();
        assert_eq!(linked["m1"][0].name, "n.txt", "an old message can carry an attachment");
        conn.execute("DELETE FROM chats WHERE id = 'c'", []).unwrap();
        assert_eq!(
            crate::attachments::forget_unused(&conn, &["a".repeat(64)]).unwrap().len(),
            1,
            "deleting the chat unlinks it (the link cascades), so the file is unused"
        );
    }

    #[test]
    fn upgrade_from_v11_offers_current_models_unless_the_user_changed_the_list() {
        // Anthropic's list was edited by the user; OpenAI's is the one 0003 wrote.
        let fill = "UPDATE providers SET models = '[\"claude-sonnet-4-5\",\"my-model\"]' WHERE id = 'anthropic';";
        let dir = database_at(11, fill);
        let db = Database::open(dir.path()).expect("a v11 database upgrades");
        let models = "SELECT id, models, default_model FROM providers ORDER BY sort_order";
        assert_eq!(
            rows(&db, models),
            [
                "Text(\"openai\")|Text(\"[\\\"gpt-5-mini\\\",\\\"gpt-5\\\",\\\"gpt-4.1\\\"]\")|Text(\"gpt-5-mini\")",
                "Text(\"anthropic\")|Text(\"[\\\"claude-sonnet-4-5\\\",\\\"my-model\\\"]\")|Text(\"claude-sonnet-4-5\")",
                "Text(\"gemini\")|Text(\"[\\\"gemini-2.5-flash\\\",\\\"gemini-2.5-pro\\\",\\\"gemini-2.5-flash-lite\\\"]\")|Text(\"gemini-2.5-flash\")",
                "Text(\"local\")|Text(\"[\\\"llama3.2\\\"]\")|Text(\"llama3.2\")",
            ],
            "the untouched list moves to current models; an edited one stays as the user left it"
        );
    }

    #[test]
    fn upgrade_from_v14_moves_attempts_of_providers_without_a_key_of_their_own_apart() {
        // Local has no key of its own: its attempts under the provider-level key went without one.
        // Gateway has one (in the database), Vault has one (in the keychain): theirs stay.
        let fill = "
            INSERT INTO providers (id, name, kind, base_url, api_key, created_at, updated_at)
              VALUES ('gw', 'Gateway', 'openai', 'https://gw/v1', 'sk-provider', 1, 1);
            INSERT INTO providers (id, name, kind, base_url, api_key, created_at, updated_at, api_key_storage,
                                   api_key_preview)
              VALUES ('vault', 'Vault', 'openai', 'https://vault/v1', NULL, 1, 1, 'keychain', 'sk-…abcd');
            INSERT INTO usage_attempts (at, provider_id, key_id, model, source, outcome, latency_ms)
              VALUES (1, 'local', NULL, 'llama3.2', 'chat', 'ok', 5), (2, 'gw', NULL, 'm', 'chat', 'ok', 5),
                     (3, 'vault', NULL, 'm', 'chat', 'ok', 5), (4, 'local', 'k1', 'llama3.2', 'chat', 'ok', 5);
            INSERT INTO usage_hourly (hour, provider_id, key_id, model, requests, failures, rate_limited, failovers,
                                      input_tokens, cached_tokens, output_tokens, latencies)
              VALUES (0, 'local', '', 'llama3.2', 1, 0, 0, 0, 0, 0, 0, x''),
                     (0, 'gw', '', 'm', 1, 0, 0, 0, 0, 0, 0, x''),
                     (0, 'vault', '', 'm', 1, 0, 0, 0, 0, 0, 0, x''),
                     (0, 'local', 'k1', 'llama3.2', 1, 0, 0, 0, 0, 0, 0, x'');";
        let dir = database_at(14, fill);
        let db = Database::open(dir.path()).expect("a v14 database upgrades");
        assert_eq!(
            rows(&db, "SELECT provider_id, key_id FROM usage_attempts ORDER BY at"),
            [
                "Text(\"local\")|Text(\"(no key)\")",
                "Text(\"gw\")|Null",
                "Text(\"vault\")|Null",
                "Text(\"local\")|Text(\"k1\")"
            ],
            "Local's keyless attempt is told apart; the provider-level keys' and a pool key's stay"
        );
        assert_eq!(
            rows(&db, "SELECT provider_id, key_id FROM usage_hourly ORDER BY provider_id, key_id"),
            [
                "Text(\"gw\")|Text(\"\")",
                "Text(\"local\")|Text(\"(no key)\")",
                "Text(\"local\")|Text(\"k1\")",
                "Text(\"vault\")|Text(\"\")"
            ],
            "and so are the hourly totals, which sum the attempts"
        );
        assert_eq!(crate::usage::NO_KEY, "(no key)", "the id the migration writes is the one the ledger writes");
    }

    #[test]
    fn keys_from_before_0017_were_never_enabled_again() {
        let before = SOURCES.iter().position(|sql| sql.contains("ADD COLUMN enabled_at")).expect("0017 is listed");
        let fill = "INSERT INTO providers (id, name, kind, base_url, created_at, updated_at) \
                      VALUES ('p', 'P', 'openai', 'https://p.example/v1', 1, 1);
                    INSERT INTO llm_provider_api_keys (id, provider_id, api_key, enabled, disabled_reason, created_at, updated_at) \
                      VALUES ('k', 'p', 'sk-0123456789012345678901', 1, NULL, 1, 2);";
        let dir = database_at(before, fill);
        let db = Database::open(dir.path()).expect("the database upgrades");
        assert_eq!(rows(&db, "SELECT id, enabled_at FROM llm_provider_api_keys"), ["Text(\"k\")|Null"], "no stamp");
    }

    #[test]
    fn every_schema_version_upgrades_to_the_latest() {
        for version in 0..SCHEMA_VERSION as usize {
            let dir = database_at(version, "");
            let db = Database::open(dir.path()).unwrap_or_else(|e| panic!("v{version} must upgrade: {e}"));
            assert_eq!(db.schema_version().unwrap(), SCHEMA_VERSION, "v{version} reaches the latest");
        }
    }
}
