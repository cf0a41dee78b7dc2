//! Provider commands: add, update, delete; validated like the key commands.

use keypool_api::ipc::{ErrorCode, IssueCode};
use serde_json::{json, Value};

use crate::support::Harness;

#[test]
fn add_update_and_delete_a_provider() {
    let h = Harness::new();
    let added = h.ok(
        "llmConfig:addProvider",
        json!({ "name": " Gateway ", "kind": "openai", "baseUrl": "https://gw.example/v1",
                "apiKey": "sk-gateway-provider-level-0000", "models": ["m1", "m2"], "defaultModel": "m2" }),
    );
    let id = added["id"].as_str().unwrap().to_owned();
    assert_eq!(added["name"], "Gateway", "the name is trimmed");
    assert_eq!(added["apiKeyPreview"], "sk-…0000", "the provider-level key is masked");
    assert_eq!(added["models"], json!(["m1", "m2"]), "models are stored");
    assert_eq!(added["builtin"], false, "added providers are not built in");
    assert!(h.events.take().contains(&id), "the UI is told");

    let updated = h.ok("llmConfig:updateProvider", json!({ "id": id, "kind": "anthropic", "apiKey": "" }));
    assert_eq!(updated["kind"], "anthropic", "the kind changes");
    assert_eq!(updated["apiKeyPreview"], Value::Null, "an empty apiKey removes the provider key");

    h.ok("llmConfig:addApiKey", json!({ "providerId": id, "apiKey": "sk-pool-key-in-gateway-1111" }));
    h.ok("llmConfig:addApiKey", json!({ "providerId": id, "apiKey": "sk-pool-key-in-gateway-2222" }));
    let chat = h.ok("chat:create", json!({ "providerId": id }));
    assert_eq!(chat["model"], "m2", "a new chat takes the provider's default model");

    let deleted = h.ok("llmConfig:deleteProvider", json!({ "id": id }));
    assert_eq!(deleted, json!({ "id": id, "deletedKeys": 2 }), "deleting says how many keys went with it");
    let err = h.err("llmConfig:getApiKeys", json!({ "providerId": id }));
    assert_eq!(err.code, ErrorCode::NotFound, "the provider is gone");
    let chats = h.ok("chat:list", json!({}));
    assert_eq!(chats[0]["id"], chat["id"], "its chat is kept");
    assert_eq!(chats[0]["providerId"], Value::Null, "detached from the deleted provider");
}

#[test]
fn bad_provider_input_is_rejected_and_writes_nothing() {
    let h = Harness::new();
    let before = h.snapshot();
    let cases = [
        (json!({ "name": "", "kind": "openai", "baseUrl": "https://x" }), "name"),
        (json!({ "name": "x", "kind": "cohere", "baseUrl": "https://x" }), "kind"),
        (json!({ "name": "x", "kind": "openai", "baseUrl": "ftp://x" }), "baseUrl"),
        (json!({ "name": "x", "kind": "openai", "baseUrl": "not a url" }), "baseUrl"),
        (json!({ "name": "x", "kind": "openai", "baseUrl": "https://x", "models": ["ok", " "] }), "models[1]"),
        (json!({ "name": "x", "kind": "openai", "baseUrl": "https://x", "apiKey": "two words" }), "apiKey"),
        (
            json!({ "name": "x", "kind": "openai", "baseUrl": "https://x", "models": ["a"], "defaultModel": "b" }),
            "defaultModel",
        ),
        (json!({ "name": "x", "kind": "openai" }), "baseUrl"),
        (json!({ "name": "x", "kind": "openai", "baseUrl": "https://x", "region": "eu" }), "region"),
    ];
    for (args, path) in cases {
        let err = h.err("llmConfig:addProvider", args.clone());
        assert_eq!(err.code, ErrorCode::Validation, "{args}: {err:?}");
        let issues = err.issues.unwrap_or_default();
        assert!(issues.iter().any(|i| i.path == path), "{args}: an issue at {path}, got {issues:?}");
    }
    let err = h.err("llmConfig:updateProvider", json!({ "id": "openai" }));
    assert_eq!(err.code, ErrorCode::Validation, "an update must change something");
    let err = h.err("llmConfig:updateProvider", json!({ "id": "ghost", "name": "x" }));
    assert_eq!(err.code, ErrorCode::NotFound, "unknown provider");
    let err = h.err("llmConfig:deleteProvider", json!({ "id": "ghost" }));
    assert_eq!(err.code, ErrorCode::NotFound, "unknown provider");
    assert_eq!(h.snapshot(), before, "nothing was written");
}

#[test]
fn plain_http_is_refused_unless_the_host_is_local() {
    let h = Harness::new();
    let before = h.snapshot();
    for base_url in ["http://api.openai.com/v1", "http://203.0.113.7:8080/v1"] {
        let err = h.err("llmConfig:addProvider", json!({ "name": "x", "kind": "openai", "baseUrl": base_url }));
        let issue = err.issues.unwrap_or_default().into_iter().find(|i| i.path == "baseUrl").expect("at baseUrl");
        assert!(issue.message.contains("unencrypted"), "{base_url}: the message says why: {}", issue.message);
        let err = h.err("llmConfig:updateProvider", json!({ "id": "local", "baseUrl": base_url }));
        assert_eq!(err.code, ErrorCode::Validation, "{base_url}: refused on update too");
    }
    assert_eq!(h.snapshot(), before, "nothing was written");
    // Names are unique (in any case), so each provider of the loop has its own.
    for (i, base_url) in ["http://127.0.0.1:11434/v1", "http://localhost:8080", "http://[::1]:4000"].iter().enumerate()
    {
        h.ok("llmConfig:addProvider", json!({ "name": format!("here {i}"), "kind": "openai", "baseUrl": base_url }));
    }
    // Another machine on the network: the keys would travel to it unencrypted, so only with the
    // user's word that the host is theirs.
    for (i, base_url) in
        ["http://192.168.1.9:8000/v1", "http://ollama:11434/v1", "http://gpu-box.local/v1"].iter().enumerate()
    {
        let before = h.snapshot();
        let err = h
            .err("llmConfig:addProvider", json!({ "name": format!("lan {i}"), "kind": "openai", "baseUrl": base_url }));
        let issues = err.issues.unwrap_or_default();
        assert_eq!(issues[0].path, "onMyNetwork", "{base_url}: the question is asked: {issues:?}");
        assert_eq!(h.snapshot(), before, "{base_url}: nothing written without the answer");
        let lan = h.ok(
            "llmConfig:addProvider",
            json!({ "name": format!("lan {i}"), "kind": "openai", "baseUrl": base_url, "onMyNetwork": true }),
        );
        let id = lan["id"].as_str().unwrap();
        h.ok("llmConfig:updateProvider", json!({ "id": id, "name": format!("renamed {i}") }));
        h.ok("llmConfig:updateProvider", json!({ "id": id, "baseUrl": base_url }));
        let moved = h.err("llmConfig:updateProvider", json!({ "id": id, "baseUrl": "http://10.0.0.7/v1" }));
        assert_eq!(
            moved.issues.unwrap_or_default()[0].path,
            "onMyNetwork",
            "{base_url}: a new address is asked about again"
        );
    }
}

#[test]
fn moving_a_provider_with_keys_to_another_host_needs_confirmation() {
    let h = Harness::new();
    let id = h
        .ok("llmConfig:addProvider", json!({ "name": "GW", "kind": "openai", "baseUrl": "https://gw.example/v1" }))
        ["id"]
        .as_str()
        .unwrap()
        .to_owned();
    // Without keys, nothing can leak: the address moves freely.
    h.ok("llmConfig:updateProvider", json!({ "id": id, "baseUrl": "https://gw2.example/v1" }));
    h.ok("llmConfig:addApiKey", json!({ "providerId": id, "apiKey": "sk-move-me-AAAAAAAAAAAA1111", "label": "prod" }));
    h.ok("llmConfig:addApiKey", json!({ "providerId": id, "apiKey": "sk-move-me-BBBBBBBBBBBB2222" }));
    // The same origin with another path is not a move.
    h.ok("llmConfig:updateProvider", json!({ "id": id, "baseUrl": "https://gw2.example/openai/v1" }));

    let before = h.snapshot();
    for moved in ["https://evil.example/v1", "https://gw2.example:8443/openai/v1", "http://127.0.0.1:9/v1"] {
        let err = h.err("llmConfig:updateProvider", json!({ "id": id, "baseUrl": moved }));
        assert_eq!(err.code, ErrorCode::Validation, "{moved}: a validation error");
        assert!(err.issues.as_ref().unwrap().iter().any(|i| i.path == "baseUrl"), "{moved}: at baseUrl");
        let details = serde_json::to_value(&err.details).unwrap();
        assert_eq!(details["kind"], "hostChange", "{moved}: the UI learns what to ask: {details}");
        assert_eq!(details["keys"], json!(["prod", "sk-…2222"]), "{moved}: the keys that would be sent, by name");
        assert_eq!(details["to"], moved, "{moved}: and where");
        assert!(!err.message.contains("AAAAAAAA"), "never the key itself: {}", err.message);
        assert_eq!(h.snapshot(), before, "{moved}: nothing changed");
    }
    let moved = h.ok(
        "llmConfig:updateProvider",
        json!({ "id": id, "baseUrl": "https://evil.example/v1", "confirmHostChange": true }),
    );
    assert_eq!(moved["baseUrl"], "https://evil.example/v1", "confirmed, the address moves");
    let err = h.err("llmConfig:updateProvider", json!({ "id": id, "confirmHostChange": true }));
    assert_eq!(err.code, ErrorCode::Validation, "a confirmation alone changes nothing");
}

#[test]
fn a_name_another_provider_has_is_refused_at_the_name_in_any_case() {
    let h = Harness::new();
    let gateway = h.ok(
        "llmConfig:addProvider",
        json!({ "name": "Gateway", "kind": "openai", "baseUrl": "https://gw.example/v1" }),
    );
    let before = h.snapshot();
    for name in ["Gateway", " gateway ", "GATEWAY", "openai", "Local"] {
        let err =
            h.err("llmConfig:addProvider", json!({ "name": name, "kind": "openai", "baseUrl": "https://x.example" }));
        assert_eq!(err.code, ErrorCode::Validation, "{name}: taken");
        let issue = &err.issues.expect("issues")[0];
        assert_eq!(
            (issue.path.as_str(), issue.code),
            ("name", IssueCode::NameTaken),
            "{name}: a field error at the name"
        );
        let err = h.err("llmConfig:updateProvider", json!({ "id": "anthropic", "name": name }));
        assert_eq!(err.issues.expect("issues")[0].code, IssueCode::NameTaken, "{name}: renaming to it is refused too");
    }
    assert_eq!(h.snapshot(), before, "nothing was written");
    let renamed = h.ok("llmConfig:updateProvider", json!({ "id": gateway["id"], "name": "gateway" }));
    assert_eq!(renamed["name"], "gateway", "a provider may change the case of its own name");
    h.ok("llmConfig:updateProvider", json!({ "id": gateway["id"], "name": "gateway", "models": ["m"] }));
}

#[test]
fn providers_say_whether_they_need_a_key_and_can_answer() {
    let h = Harness::new();
    let providers = h.ok("llmConfig:getProviders", json!({}));
    let flags = |providers: &Value| -> Vec<(String, bool, bool)> {
        providers
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["id"].as_str().unwrap().to_owned(),
                    p["local"].as_bool().unwrap(),
                    p["answerable"].as_bool().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(
        flags(&providers),
        [
            ("openai".into(), false, false),
            ("anthropic".into(), false, false),
            ("gemini".into(), false, false),
            ("local".into(), true, true)
        ],
        "a local server needs no key; a remote one with none cannot answer"
    );
    let key = h.ok("llmConfig:addApiKey", json!({ "providerId": "openai", "apiKey": "sk-answer-AAAAAAAAAAAA1111" }));
    h.ok("llmConfig:updateProvider", json!({ "id": "anthropic", "apiKey": "sk-ant-provider-level-2222" }));
    let providers = h.ok("llmConfig:getProviders", json!({}));
    assert_eq!(
        flags(&providers)[..2],
        [("openai".into(), false, true), ("anthropic".into(), false, true)],
        "a key, or its own key"
    );
    h.ok("llmConfig:toggleApiKey", json!({ "id": key["id"], "enabled": false }));
    let providers = h.ok("llmConfig:getProviders", json!({}));
    assert_eq!(flags(&providers)[0], ("openai".into(), false, false), "a pool of keys all off cannot answer");
}

#[tokio::test]
async fn the_models_of_a_provider_not_saved_yet_are_listed_without_saving_anything() {
    use keypool_fake_provider::{FakeProvider, Reply};
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    fake.models(&["m-one", "m-two"]);
    let before = h.snapshot();
    let base = format!("{}/v1", fake.url());
    let listed = h
        .call_async(
            "llmConfig:listModelsFor",
            json!({ "kind": "openai", "baseUrl": base, "apiKey": "sk-unsaved-AAAA1111" }),
        )
        .await
        .unwrap();
    assert_eq!(listed["models"], json!(["m-one", "m-two"]), "the form's provider lists its models: {listed}");
    assert_eq!(listed["cached"], false, "asked now");
    assert_eq!(fake.seen().last().map(|s| s.key.clone()), Some("sk-unsaved-AAAA1111".into()), "with the form's key");
    let keyless = h.call_async("llmConfig:listModelsFor", json!({ "kind": "openai", "baseUrl": base })).await.unwrap();
    assert_eq!(keyless["models"], json!(["m-one", "m-two"]), "or with none, as a local server is asked");
    assert_eq!(fake.seen().last().map(|s| s.key.clone()), Some(String::new()), "no key was sent");

    let secret = "sk-echoed-BBBBBBBBBBBBBBBBBBBB2222";
    let message = format!("Incorrect API key provided: {secret}");
    fake.always(secret, Reply::Status { status: 401, headers: Vec::new(), message });
    let refused = h
        .call_async("llmConfig:listModelsFor", json!({ "kind": "openai", "baseUrl": base, "apiKey": secret }))
        .await
        .expect_err("refused");
    assert_eq!(refused.code, ErrorCode::Provider, "the provider's refusal");
    let words = serde_json::to_string(&refused).unwrap();
    assert!(!words.contains(secret), "the key never comes back, not even in the provider's words: {words}");

    let err = h
        .call_async("llmConfig:listModelsFor", json!({ "kind": "openai", "baseUrl": "http://api.example.com/v1" }))
        .await
        .expect_err("plain http to the internet");
    assert_eq!(err.issues.expect("issues")[0].path, "baseUrl", "refused as addProvider refuses it");
    let seen = fake.seen().len();
    let lan = json!({ "kind": "openai", "baseUrl": "http://192.168.1.9:9/v1", "apiKey": "sk-unsaved-AAAA1111" });
    let err = h.call_async("llmConfig:listModelsFor", lan).await.expect_err("plain http to the network");
    assert_eq!(
        err.issues.expect("issues")[0].path,
        "onMyNetwork",
        "the key would travel unencrypted: asked first, as addProvider asks"
    );
    assert_eq!(fake.seen().len(), seen, "nothing was sent anywhere");
    assert_eq!(h.snapshot(), before, "nothing was saved");
}

/// The store takes exactly the kinds of keypool-llm's table: the `CHECK` on `providers.kind`
/// names each row's id, and nothing else (a new kind is a row and a migration).
#[test]
fn the_stores_kinds_are_the_kind_tables_rows() {
    let dir = tempfile::tempdir().unwrap();
    let db = keypool_store::Database::open(dir.path()).expect("a new database opens");
    let conn = db.lock().unwrap();
    let sql: String = conn
        .query_row("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'providers'", [], |r| r.get(0))
        .unwrap();
    let list = sql.split("kind IN (").nth(1).and_then(|rest| rest.split(')').next()).expect("a CHECK on kind");
    let mut stored: Vec<&str> = list.split(',').map(|id| id.trim().trim_matches('\'')).collect();
    let mut rows: Vec<&str> = keypool_llm::KINDS.iter().map(|row| row.id).collect();
    stored.sort_unstable();
    rows.sort_unstable();
    assert_eq!(stored, rows, "providers.kind's CHECK lists every kind of KINDS and no other");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_local_server_that_refused_a_request_without_a_key_is_said_to_need_one() {
    use crate::chat::{fake_provider, new_chat};
    use keypool_fake_provider::{FakeProvider, Reply};
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    // On loopback with no key at all: sent without one.
    let provider = fake_provider(&h, &fake, "openai", &[]);
    let refused = |h: &Harness| {
        let providers = h.ok("llmConfig:getProviders", json!({}));
        providers.as_array().unwrap().iter().find(|p| p["id"] == provider.as_str()).unwrap()["keylessRefused"].clone()
    };
    assert_eq!(refused(&h), Value::Null, "nothing sent yet: nothing to follow");

    fake.always("", Reply::status(401));
    let (failed, _) = h.send(&new_chat(&h, &provider), Some("hi"), |_| {}).await.unwrap();
    assert_eq!(failed["status"], "error", "refused without a key");
    assert_eq!(refused(&h), json!(401), "the card follows what the server answered, not its address");

    fake.always("", Reply::text(&["fine"]));
    h.send(&new_chat(&h, &provider), Some("again"), |_| {}).await.unwrap();
    assert_eq!(refused(&h), Value::Null, "it answers without a key now: none needed");
}

/// Azure OpenAI and Amazon Bedrock take only their own addresses: a resource's v1 address, a
/// region's runtime. Anything else is refused at the base URL, naming what is wanted, and
/// changes nothing.
#[test]
fn azure_and_bedrock_providers_need_a_resource_and_a_region_in_their_base_url() {
    let h = Harness::new();
    let refused = |kind: &str, base_url: &str, code: IssueCode| {
        let before = h.snapshot();
        let err = h.err(
            "llmConfig:addProvider",
            json!({ "name": format!("{kind} {}", base_url.len()), "kind": kind, "baseUrl": base_url }),
        );
        let issues = err.issues.unwrap_or_default();
        assert_eq!((issues[0].path.as_str(), issues[0].code), ("baseUrl", code), "{kind} {base_url}: {issues:?}");
        assert!(
            issues[0].message.contains(if kind == "azure" { "RESOURCE" } else { "REGION" }),
            "{}",
            issues[0].message
        );
        assert_eq!(h.snapshot(), before, "{base_url}: nothing written");
    };
    refused("azure", "https://RESOURCE.openai.azure.com/openai/v1", IssueCode::AzureResourceUrl);
    refused("azure", "https://contoso.openai.azure.com/openai/deployments/gpt-4o", IssueCode::AzureResourceUrl);
    refused("bedrock", "https://bedrock-runtime.amazonaws.com/openai/v1", IssueCode::BedrockRegionUrl);
    let azure = h.ok(
        "llmConfig:addProvider",
        json!({ "name": "Azure", "kind": "azure", "baseUrl": "https://contoso.openai.azure.com/openai/v1" }),
    );
    let bedrock = h.ok(
        "llmConfig:addProvider",
        json!({ "name": "Bedrock", "kind": "bedrock", "baseUrl": "https://bedrock-runtime.eu-central-1.amazonaws.com/openai/v1" }),
    );
    let before = h.snapshot();
    let err = h.err(
        "llmConfig:updateProvider",
        json!({ "id": bedrock["id"], "baseUrl": "https://bedrock-runtime.example.com/openai/v1" }),
    );
    assert_eq!(err.issues.unwrap_or_default()[0].code, IssueCode::BedrockRegionUrl, "a new URL is held to the kind");
    let err = h.err("llmConfig:updateProvider", json!({ "id": azure["id"], "kind": "bedrock" }));
    assert_eq!(
        err.issues.unwrap_or_default()[0].code,
        IssueCode::BedrockRegionUrl,
        "and a new kind to the URL it keeps"
    );
    assert_eq!(h.snapshot(), before, "nothing changed");
}
