//! The local API end to end below Tauri: turned on through `localApi:configure`, called over
//! real HTTP as a tool would, forwarding to the fake provider through the pool.

use keypool_fake_provider::{FakeProvider, Reply};
use serde_json::{json, Value};

use crate::support::{Harness, START};

const KEY_A: &str = "sk-local-AAAAAAAAAAAAAAAAAAAAAAAA-0001";
const KEY_B: &str = "sk-local-BBBBBBBBBBBBBBBBBBBBBBBB-0002";

struct Endpoint {
    base: String,
    token: String,
    http: reqwest::Client,
}

impl Endpoint {
    async fn post(&self, path: &str, body: &Value, extra: &[(&str, &str)]) -> reqwest::Response {
        let mut request = self.http.post(format!("{}{path}", self.base)).bearer_auth(&self.token).json(body);
        for (name, value) in extra {
            request = request.header(*name, *value);
        }
        request.send().await.unwrap()
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Two providers on the fake (OpenAI-compatible "fake-openai" with keys A and B, Anthropic
/// "fake-anthropic" with key A), the endpoint on.
async fn setup(h: &Harness, fake: &FakeProvider) -> Endpoint {
    for (name, kind, base, model) in [
        ("fake-openai", "openai", format!("{}/v1", fake.url()), "gpt-fake"),
        ("fake-anthropic", "anthropic", fake.url(), "claude-fake"),
    ] {
        let provider =
            h.ok("llmConfig:addProvider", json!({ "name": name, "kind": kind, "baseUrl": base, "models": [model] }));
        for key in if kind == "openai" { vec![KEY_A, KEY_B] } else { vec![KEY_A] } {
            h.ok("llmConfig:addApiKey", json!({ "providerId": provider["id"], "apiKey": key }));
        }
    }
    let port = free_port();
    let configured = h.call_async("localApi:configure", json!({ "enabled": true, "port": port })).await.unwrap();
    assert_eq!(configured["running"], true, "{configured}");
    let token = configured["token"].as_str().expect("the token, the first time").to_owned();
    Endpoint { base: format!("http://127.0.0.1:{port}"), token, http: reqwest::Client::new() }
}

/// What the provider answers when called directly with key A.
async fn straight(url: String, body: &Value, auth: (&str, String)) -> Vec<u8> {
    let request = reqwest::Client::new().post(url).header(auth.0, auth.1).header("anthropic-version", "2023-06-01");
    request.json(body).send().await.unwrap().bytes().await.unwrap().to_vec()
}

fn chat(model: &str, text: &str, stream: bool) -> Value {
    json!({ "model": model, "stream": stream, "messages": [{ "role": "system", "content": "be brief" }, { "role": "user", "content": text }] })
}

#[tokio::test(flavor = "multi_thread")]
async fn answers_come_back_byte_for_byte_in_both_dialects() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let api = setup(&h, &fake).await;
    fake.always(KEY_A, Reply::text(&["Hello", " there"]));
    fake.always(KEY_B, Reply::text(&["Hello", " there"]));

    for stream in [false, true] {
        let through = api.post("/v1/chat/completions", &chat("gpt-fake", "hi", stream), &[]).await;
        assert_eq!(through.status(), 200);
        let via_keypool = through.bytes().await.unwrap();
        let direct = straight(
            fake.url() + "/v1/chat/completions",
            &chat("gpt-fake", "hi", stream),
            ("authorization", format!("Bearer {KEY_A}")),
        )
        .await;
        assert_eq!(via_keypool.to_vec(), direct, "OpenAI, stream={stream}: the provider's bytes, unchanged");

        let body = json!({ "model": "claude-fake", "max_tokens": 64, "stream": stream, "messages": [{ "role": "user", "content": "hi" }] });
        let through = api.post("/v1/messages", &body, &[("anthropic-version", "2023-06-01")]).await;
        assert_eq!(through.status(), 200);
        let via_keypool = through.bytes().await.unwrap();
        let direct = straight(fake.url() + "/v1/messages", &body, ("x-api-key", KEY_A.to_owned())).await;
        assert_eq!(via_keypool.to_vec(), direct, "Anthropic, stream={stream}: unchanged");
    }
    let counted = api.post("/v1/messages/count_tokens", &json!({ "model": "claude-fake", "messages": [] }), &[]).await;
    assert_eq!(counted.status(), 200, "count_tokens is passed through");
    assert!(counted.json::<Value>().await.unwrap()["input_tokens"].is_u64());
}

#[tokio::test(flavor = "multi_thread")]
async fn every_field_goes_upstream_untouched_and_no_key_comes_back() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let api = setup(&h, &fake).await;
    fake.always(KEY_A, Reply::text(&["ok"]));
    fake.always(KEY_B, Reply::text(&["ok"]));
    let raw = r#"{"model":"gpt-fake","messages":[{"role":"user","content":[{"type":"text","text":"what is this?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]}],"tools":[{"type":"function","function":{"name":"lookup","parameters":{"type":"object","properties":{"q":{"type":"string"}}}}}],"tool_choice":"auto","temperature":0.25,"x_unknown":[1,2.50,"z"]}"#;
    let response = api
        .http
        .post(format!("{}/v1/chat/completions", api.base))
        .bearer_auth(&api.token)
        .header("content-type", "application/json")
        .body(raw)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    for (name, _) in response.headers() {
        assert!(
            !name.as_str().starts_with("x-ratelimit") && name != "set-cookie",
            "no upstream account header: {name}"
        );
    }
    assert_eq!(fake.seen().last().unwrap().body, raw, "the body reached the provider byte for byte");

    // A `provider/model` prefix is dropped from `model` and from nothing else.
    let prefixed = raw.replacen(r#""model":"gpt-fake""#, r#""model":"fake-openai/gpt-fake""#, 1);
    let response = api
        .http
        .post(format!("{}/v1/chat/completions", api.base))
        .bearer_auth(&api.token)
        .body(prefixed)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(fake.seen().last().unwrap().body, raw, "only the prefix went");

    // A provider error echoing the key comes back with the key masked.
    fake.script(KEY_A, [Reply::status(400)]);
    fake.script(KEY_B, [Reply::status(400)]);
    let response = api.post("/v1/chat/completions", &chat("gpt-fake", "echo", false), &[]).await;
    assert_eq!(response.status(), 400, "a request's own error comes back as it came");
    let text = response.text().await.unwrap();
    assert!(!text.contains("sk-local-"), "no key in what comes back: {text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn failover_is_invisible_and_a_conversation_keeps_its_key() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let api = setup(&h, &fake).await;
    fake.script(KEY_A, [Reply::status_with(429, &[("retry-after", "600")])]);
    fake.always(KEY_A, Reply::text(&["from A"]));
    fake.always(KEY_B, Reply::text(&["from B"]));

    let first = api.post("/v1/chat/completions", &chat("gpt-fake", "conversation one", false), &[]).await;
    assert_eq!(first.status(), 200, "the client never sees the 429");
    let used: Vec<String> = fake.seen().iter().map(|s| s.key.clone()).collect();
    assert_eq!(used, [KEY_A, KEY_B], "A refused, B answered");

    // The same conversation, a turn later: same system prompt and first user message.
    let mut later = chat("gpt-fake", "conversation one", false);
    later["messages"].as_array_mut().unwrap().extend([
        json!({ "role": "assistant", "content": "from B" }),
        json!({ "role": "user", "content": "and then?" }),
    ]);
    api.post("/v1/chat/completions", &later, &[]).await;
    assert_eq!(fake.seen().last().unwrap().key, KEY_B, "the second turn stays on the first turn's key");

    // An explicit session id wins over the hash.
    fake.always(KEY_A, Reply::text(&["from A"]));
    let pinned = |text: &str| chat("gpt-fake", text, false);
    api.post("/v1/chat/completions", &pinned("x"), &[("x-keypool-session", "tool-42")]).await;
    let key = fake.seen().last().unwrap().key.clone();
    api.post("/v1/chat/completions", &pinned("y"), &[("x-keypool-session", "tool-42")]).await;
    assert_eq!(fake.seen().last().unwrap().key, key, "one session, one key, whatever the messages");

    // 401 on A: disabled and failed over, invisibly.
    fake.always(KEY_A, Reply::status(401));
    fake.always(KEY_B, Reply::text(&["from B"]));
    let response = api.post("/v1/chat/completions", &chat("gpt-fake", "conversation two", false), &[]).await;
    assert_eq!(response.status(), 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_token_is_required_and_web_pages_are_refused() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let api = setup(&h, &fake).await;
    let http = reqwest::Client::new();
    let url = format!("{}/v1/chat/completions", api.base);
    let body = chat("gpt-fake", "hi", false);
    let missing = http.post(&url).json(&body).send().await.unwrap();
    assert_eq!(missing.status(), 401);
    assert_eq!(missing.json::<Value>().await.unwrap()["error"]["code"], "invalid_api_key", "in OpenAI's words");
    let wrong = http
        .post(format!("{}/v1/messages", api.base))
        .header("x-api-key", "kp-local-wrong")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
    assert_eq!(wrong.json::<Value>().await.unwrap()["error"]["type"], "authentication_error", "in Anthropic's words");
    let page = http
        .post(&url)
        .bearer_auth(&api.token)
        .header("origin", "https://evil.example")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 403, "a web page is refused even with the token");
    assert!(fake.seen().is_empty(), "none reached the provider");

    let regenerated = h.call_async("localApi:regenerateToken", json!({})).await.unwrap();
    let new_token = regenerated["token"].as_str().unwrap();
    assert_ne!(new_token, api.token);
    let old = http.post(&url).bearer_auth(&api.token).json(&body).send().await.unwrap();
    assert_eq!(old.status(), 401, "the old token stops working at once");
    fake.always(KEY_A, Reply::text(&["ok"]));
    fake.always(KEY_B, Reply::text(&["ok"]));
    let new = http.post(&url).bearer_auth(new_token).json(&body).send().await.unwrap();
    assert_eq!(new.status(), 200, "the new one works");

    let status = h.ok("localApi:getStatus", json!({}));
    assert_eq!(status["requests"], 5, "every request counted: {status}");
    assert_eq!(status["failed"], 4, "four refused");
    let db = std::fs::read(h.dir.path().join(keypool_store::DATABASE_FILE_NAME)).unwrap();
    assert!(!db.windows(new_token.len()).any(|w| w == new_token.as_bytes()), "the token is not kept, only its hash");
}

/// A regenerate while the endpoint restarts (configure) must win whatever the interleaving: the
/// restart must not come back with the token it read before the regenerate.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn after_a_regenerate_the_old_token_is_refused_whatever_runs_beside_it() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let api = setup(&h, &fake).await;
    let http = reqwest::Client::new();
    let mut old = api.token.clone();
    for round in 0..20 {
        // Each round moves the endpoint to another port, so configure restarts it.
        let port = free_port();
        // On two threads of their own, truly at once.
        let runtime = tokio::runtime::Handle::current();
        let (configured, regenerated) = std::thread::scope(|threads| {
            let configure = threads.spawn(|| {
                runtime.block_on(h.call_async("localApi:configure", json!({ "enabled": true, "port": port })))
            });
            let regenerate = threads.spawn(|| runtime.block_on(h.call_async("localApi:regenerateToken", json!({}))));
            (configure.join().unwrap(), regenerate.join().unwrap())
        });
        assert_eq!(configured.unwrap()["running"], true, "round {round}: running");
        let new = regenerated.unwrap()["token"].as_str().unwrap().to_owned();
        let url = format!("http://127.0.0.1:{port}/v1/models");
        let with = |token: String| {
            let request = http.get(&url).bearer_auth(token);
            async move { request.send().await.unwrap().status().as_u16() }
        };
        // Wrong tokens from one peer lock it out, the right token included: the old token is
        // tried in the first rounds only, fewer than a lockout takes.
        if round < keypool_gateway::MAX_FAILURES / 2 {
            let refused = with(old.clone()).await;
            assert_eq!(refused, 401, "round {round}: the token before the regenerate is refused");
        }
        assert_eq!(with(new.clone()).await, 200, "round {round}: the new one serves");
        old = new;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_models_and_lists_speak_each_dialect() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let api = setup(&h, &fake).await;
    let unknown = api.post("/v1/chat/completions", &chat("no-such-model", "hi", false), &[]).await;
    assert_eq!(unknown.status(), 404);
    assert_eq!(unknown.json::<Value>().await.unwrap()["error"]["code"], "model_not_found");
    let unknown =
        api.post("/v1/messages", &json!({ "model": "no-such-model", "max_tokens": 1, "messages": [] }), &[]).await;
    assert_eq!(unknown.status(), 404);
    assert_eq!(unknown.json::<Value>().await.unwrap()["error"]["type"], "not_found_error");
    let crossed = api.post("/v1/chat/completions", &chat("claude-fake", "hi", false), &[]).await;
    assert_eq!(crossed.status(), 400, "an Anthropic model through the OpenAI path says where to go");

    let list = |anthropic: bool| {
        let mut request = api.http.get(format!("{}/v1/models", api.base)).bearer_auth(&api.token);
        if anthropic {
            request = request.header("anthropic-version", "2023-06-01");
        }
        request.send()
    };
    let openai: Value = list(false).await.unwrap().json().await.unwrap();
    assert_eq!(openai["object"], "list");
    let ids: Vec<&str> = openai["data"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        ["llama3.2", "gpt-fake", "fake-model"],
        "the built-in local server's model (it needs no key), the fake's own, and what its models endpoint listed \
         when the unknown model made the local API ask"
    );
    let anthropic: Value = list(true).await.unwrap().json().await.unwrap();
    assert_eq!(anthropic["data"][0]["id"], "claude-fake");
    assert_eq!(anthropic["data"][0]["type"], "model", "in Anthropic's format");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stream_that_breaks_ends_with_an_error_event_and_every_request_is_in_the_ledger() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let api = setup(&h, &fake).await;
    fake.always(KEY_A, Reply::Drop { chunks_before: vec!["partial".into()] });
    fake.always(KEY_B, Reply::Drop { chunks_before: vec!["partial".into()] });
    let response =
        api.post("/v1/chat/completions", &chat("gpt-fake", "hi", true), &[("user-agent", "my-agent/1.0")]).await;
    let text = response.text().await.unwrap();
    assert!(text.contains("partial"), "what came first passed: {text}");
    assert!(
        text.trim_end().ends_with("}") && text.contains(r#"data: {"error""#),
        "then an error in OpenAI's stream shape: {text}"
    );

    let target = h.dir.path().join("usage.csv");
    h.saves.answer(Some(target.clone()));
    h.call_async("usage:exportCsv", json!({})).await.unwrap();
    let csv = std::fs::read_to_string(&target).unwrap();
    assert!(
        csv.lines().any(|l| l.contains("my-agent/1.0") && l.contains("transport_error")),
        "the ledger has it, by its client: {csv}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_busy_port_is_reported_not_fatal() {
    let h = Harness::new();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let status = h.call_async("localApi:configure", json!({ "enabled": true, "port": port })).await.unwrap();
    assert_eq!(status["running"], false);
    assert_eq!(status["enabled"], true, "the choice is kept");
    assert_eq!(status["error"], json!({ "kind": "portInUse", "port": port }), "{status}");
    let off = h.call_async("localApi:configure", json!({ "enabled": false })).await.unwrap();
    assert_eq!((off["enabled"].as_bool(), off["error"].is_null()), (Some(false), true));
    let bad = h.call_async("localApi:configure", json!({ "enabled": true, "port": 80 })).await.unwrap_err();
    assert_eq!(bad.code, keypool_api::ipc::ErrorCode::Validation, "ports below 1024 are refused");
}

#[tokio::test(flavor = "multi_thread")]
async fn moving_to_a_busy_port_keeps_serving_on_the_old_one() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let endpoint = setup(&h, &fake).await;
    let old = endpoint.base.rsplit(':').next().unwrap().parse::<u16>().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let busy = taken.local_addr().unwrap().port();

    let status = h.call_async("localApi:configure", json!({ "enabled": true, "port": busy })).await.unwrap();
    assert_eq!(status["running"], true, "a port that is taken does not stop the endpoint: {status}");
    assert_eq!(status["port"], old, "it serves where it was: {status}");
    assert_eq!(status["error"], json!({ "kind": "portInUse", "port": busy }), "and says why it did not move: {status}");
    let models =
        endpoint.http.get(format!("{}/v1/models", endpoint.base)).bearer_auth(&endpoint.token).send().await.unwrap();
    assert_eq!(models.status(), 200, "the old port still answers");
    let kept = h.call("localApi:getStatus", json!({})).unwrap();
    assert_eq!(kept["port"], old, "the kept port is the one served, for the next start: {kept}");

    let free = free_port();
    let moved = h.call_async("localApi:configure", json!({ "enabled": true, "port": free })).await.unwrap();
    assert_eq!(
        (moved["running"].as_bool(), moved["port"].as_u64(), moved["error"].is_null()),
        (Some(true), Some(u64::from(free)), true),
        "{moved}"
    );
    drop(taken);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_two_providers_list_says_which_serves_it_and_how_to_ask_the_other() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let mut ids = Vec::new();
    for (name, key) in [("First", KEY_A), ("Second", KEY_B)] {
        let provider = h.ok(
            "llmConfig:addProvider",
            json!({ "name": name, "kind": "openai", "baseUrl": format!("{}/v1", fake.url()), "models": ["shared-model"] }),
        );
        h.ok("llmConfig:addApiKey", json!({ "providerId": provider["id"], "apiKey": key }));
        ids.push(provider["id"].clone());
    }
    let port = free_port();
    let configured = h.call_async("localApi:configure", json!({ "enabled": true, "port": port })).await.unwrap();
    let api = Endpoint {
        base: format!("http://127.0.0.1:{port}"),
        token: configured["token"].as_str().unwrap().to_owned(),
        http: reqwest::Client::new(),
    };
    let shared = configured["served"].as_array().unwrap().iter().find(|m| m["model"] == "shared-model").cloned();
    assert_eq!(
        shared,
        Some(json!({ "model": "shared-model", "provider": "First", "others": ["Second"], "api": "openai" })),
        "the status names the provider a bare name goes to, and the other that lists it"
    );

    let list: Value = api
        .http
        .get(format!("{}/v1/models", api.base))
        .bearer_auth(&api.token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let owners: Vec<(&str, &str)> = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["id"].as_str().unwrap(), m["owned_by"].as_str().unwrap()))
        .filter(|(id, _)| id.ends_with("shared-model"))
        .collect();
    assert_eq!(
        owners,
        [("shared-model", "First"), ("Second/shared-model", "Second")],
        "GET /v1/models says who serves the bare name (owned_by), and lists the other's as provider/model"
    );

    fake.always(KEY_A, Reply::text(&["from first"]));
    fake.always(KEY_B, Reply::text(&["from second"]));
    let bare = api.post("/v1/chat/completions", &chat("shared-model", "hi", false), &[]).await;
    assert_eq!(bare.status(), 200);
    assert_eq!(fake.seen().last().unwrap().key, KEY_A, "the bare name goes to First, as listed");
    let named = api.post("/v1/chat/completions", &chat("Second/shared-model", "hi", false), &[]).await;
    assert_eq!(named.status(), 200);
    let seen = fake.seen().last().unwrap().clone();
    assert_eq!((seen.key.as_str(), seen.model.as_str()), (KEY_B, "shared-model"), "the listed name reaches Second");

    // The user's route sends the bare name to Second: the list follows it.
    h.ok(
        "localApi:setRoutes",
        json!({ "routes": [{ "model": "shared-*", "provider": ids[1], "toModel": "shared-model" }] }),
    );
    let status = h.ok("localApi:getStatus", json!({}));
    let shared = status["served"].as_array().unwrap().iter().find(|m| m["model"] == "shared-model").cloned();
    assert_eq!(
        shared,
        Some(json!({ "model": "shared-model", "provider": "Second", "others": ["First"], "api": "openai" })),
        "the provider the route sends it to, and First as the other"
    );
    let list: Value = api
        .http
        .get(format!("{}/v1/models", api.base))
        .bearer_auth(&api.token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let owners: Vec<(&str, &str)> = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["id"].as_str().unwrap(), m["owned_by"].as_str().unwrap()))
        .filter(|(id, _)| id.ends_with("shared-model"))
        .collect();
    assert_eq!(owners, [("shared-model", "Second"), ("First/shared-model", "First")], "as routed");
}

#[tokio::test(flavor = "multi_thread")]
async fn every_model_the_app_offers_is_routed_and_the_status_names_what_can_be_answered() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    // Its models endpoint lists two models; its own list is empty, its default is a third.
    fake.models(&["listed-one", "listed-two"]);
    let provider = h.ok(
        "llmConfig:addProvider",
        json!({ "name": "lan", "kind": "openai", "baseUrl": format!("{}/v1", fake.url()), "defaultModel": "the-default" }),
    );
    let keyless = h.ok(
        "llmConfig:addProvider",
        json!({ "name": "remote", "kind": "anthropic", "baseUrl": "https://anthropic.invalid", "models": ["claude-x"] }),
    );
    assert_eq!(
        (provider["answerable"].clone(), keyless["answerable"].clone()),
        (json!(true), json!(false)),
        "loopback needs no key"
    );
    let port = free_port();
    let configured = h.call_async("localApi:configure", json!({ "enabled": true, "port": port })).await.unwrap();
    let api = Endpoint {
        base: format!("http://127.0.0.1:{port}"),
        token: configured["token"].as_str().unwrap().to_owned(),
        http: reqwest::Client::new(),
    };
    assert_eq!(
        configured["served"],
        json!([
            { "model": "llama3.2", "provider": "Local", "others": [], "api": "openai" },
            { "model": "the-default", "provider": "lan", "others": [], "api": "openai" },
        ]),
        "only what can be answered now: the local servers need no key, the remote provider has none"
    );

    let default = api.post("/v1/chat/completions", &chat("the-default", "hi", false), &[]).await;
    assert_eq!(default.status(), 200, "the provider's default model is routed");
    // Nobody asked the provider for its list yet: the local API asks it, as the New-chat dialog would.
    let listed = api.post("/v1/chat/completions", &chat("listed-two", "hi", false), &[]).await;
    assert_eq!(listed.status(), 200, "a model the provider lists is routed");
    assert_eq!(fake.seen().last().map(|s| s.model.clone()), Some("listed-two".into()), "and sent upstream");
    let status = h.ok("localApi:getStatus", json!({}));
    let served: Vec<&str> = status["served"].as_array().unwrap().iter().map(|m| m["model"].as_str().unwrap()).collect();
    assert_eq!(
        served,
        ["llama3.2", "the-default", "listed-one", "listed-two"],
        "the status names them all now: {status}"
    );
    let unknown = api.post("/v1/chat/completions", &chat("nobody-lists-this", "hi", false), &[]).await;
    assert_eq!(unknown.status(), 404, "a model nobody offers is still unknown");
    h.call_async("localApi:configure", json!({ "enabled": false })).await.unwrap();
}

/// Named tokens: each serves as itself beside the endpoint's own, the ledger keeps every request
/// under its name (the Usage page's table by token), a revoke stops one at once and only it,
/// and a bad or taken name is refused with nothing written.
#[tokio::test(flavor = "multi_thread")]
async fn named_tokens_serve_under_their_names_and_are_revoked_alone() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let api = setup(&h, &fake).await;
    fake.always(KEY_A, Reply::text(&["ok"]));
    fake.always(KEY_B, Reply::text(&["ok"]));
    let made = h.ok("localApi:createToken", json!({ "name": "ci-bot" }));
    assert_eq!(made["name"], "ci-bot");
    let ci = made["token"].as_str().expect("the token, this once").to_owned();
    let script = h.ok("localApi:createToken", json!({ "name": "script@home" }))["token"].as_str().unwrap().to_owned();
    assert!(ci.starts_with("kp-local-") && ci != script && ci != api.token);

    let issue = |args: Value| {
        let error = h.err("localApi:createToken", args);
        error.issues.unwrap()[0].code.name()
    };
    let before = h.ok("localApi:listTokens", json!({}));
    assert_eq!(issue(json!({ "name": "CI-BOT" })), "token_name_taken", "a name is taken in any case");
    assert_eq!(issue(json!({ "name": "two words" })), "bad_token_name");
    assert_eq!(issue(json!({ "name": "x".repeat(65) })), "too_long");
    assert_eq!(issue(json!({ "name": "  " })), "blank");
    assert_eq!(h.ok("localApi:listTokens", json!({})), before, "nothing was written");

    let url = format!("{}/v1/chat/completions", api.base);
    let send = |token: String, stream: bool| {
        let request = api.http.post(&url).bearer_auth(token).json(&chat("gpt-fake", "hi", stream));
        async move { request.send().await.unwrap() }
    };
    for (token, times) in [(&ci, 3), (&script, 1), (&api.token, 2)] {
        for i in 0..times {
            let answer = send(token.clone(), i % 2 == 1).await;
            assert_eq!(answer.status(), 200);
            answer.bytes().await.unwrap();
        }
    }
    let listed = h.ok("localApi:listTokens", json!({}));
    assert_eq!(listed.as_array().unwrap().len(), 2);
    assert_eq!(listed[0]["name"], "ci-bot");
    assert_eq!(listed[0]["lastUsedAt"], START.as_millis(), "when it was last used: {listed}");
    assert_eq!(listed[0]["usable"], true);
    assert!(!listed.to_string().contains("kp-local-"), "a listing never holds a token");

    let range = json!({ "from": 0, "to": START.as_millis() + 1 });
    let by_token = h.ok("usage:getByToken", range.clone());
    let requests =
        |name: Value| by_token.as_array().unwrap().iter().find(|l| l["name"] == name).map(|l| l["requests"].clone());
    assert_eq!(requests(json!("ci-bot")), Some(json!(3)), "{by_token}");
    assert_eq!(requests(json!("script@home")), Some(json!(1)));
    assert_eq!(requests(Value::Null), Some(json!(2)), "the endpoint's own token: no name");

    let left = h.ok("localApi:revokeToken", json!({ "name": "CI-bot" }));
    assert_eq!(left.as_array().unwrap().len(), 1, "revoked, in any case: {left}");
    assert_eq!(send(ci.clone(), false).await.status(), 401, "a revoked token stops at once");
    assert_eq!(send(script.clone(), false).await.status(), 200, "the other goes on");
    assert_eq!(send(api.token.clone(), false).await.status(), 200, "and the endpoint's own");
    let gone = h.err("localApi:revokeToken", json!({ "name": "ci-bot" }));
    assert_eq!(gone.code, keypool_api::ipc::ErrorCode::NotFound);
    let by_token = h.ok("usage:getByToken", range);
    assert!(
        by_token.as_array().unwrap().iter().any(|l| l["name"] == "ci-bot" && l["requests"] == 3),
        "what a revoked token spent stays under its name: {by_token}"
    );

    // Turned off and on again, it serves the named tokens still.
    let port: u16 = api.base.rsplit(':').next().unwrap().parse().unwrap();
    h.call_async("localApi:configure", json!({ "enabled": false })).await.unwrap();
    h.call_async("localApi:configure", json!({ "enabled": true, "port": port })).await.unwrap();
    assert_eq!(send(script.clone(), false).await.status(), 200, "after a restart of the endpoint");
    let db = std::fs::read(h.dir.path().join(keypool_store::DATABASE_FILE_NAME)).unwrap();
    assert!(!db.windows(script.len()).any(|w| w == script.as_bytes()), "only its hash is kept");
}

/// A Claude Code subagent (its `x-claude-code-agent-id`) goes where a `subagent:` route sends
/// it, translated when that pool speaks another API, while the main agent stays on its own; with
/// no key in the subagent's pool, the main route answers it.
#[tokio::test(flavor = "multi_thread")]
async fn subagents_take_their_own_route_and_come_back_to_the_main_one_without_a_key() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let api = setup(&h, &fake).await;
    let providers = h.ok("llmConfig:getProviders", json!({}));
    let openai = providers.as_array().unwrap().iter().find(|p| p["name"] == "fake-openai").unwrap()["id"].clone();
    h.ok(
        "localApi:setRoutes",
        json!({ "routes": [{ "model": "subagent:claude-*", "provider": openai, "toModel": "gpt-fake" }] }),
    );
    let ask = |subagent: Option<&'static str>| {
        let body =
            json!({ "model": "claude-fake", "max_tokens": 64, "messages": [{ "role": "user", "content": "hi" }] });
        let mut headers = vec![("anthropic-version", "2023-06-01"), ("x-claude-code-session-id", "session-1")];
        headers.extend(subagent.map(|id| ("x-claude-code-agent-id", id)));
        let api = &api;
        async move {
            let answer = api.post("/v1/messages", &body, &headers).await;
            let status = answer.status();
            (status, answer.json::<Value>().await.unwrap())
        }
    };
    let asked = |fake: &FakeProvider| fake.seen().last().map(|s| (s.path.clone(), s.model.clone())).unwrap();

    let (status, main) = ask(None).await;
    assert_eq!(status, 200, "{main}");
    assert_eq!(asked(&fake), ("/v1/messages".into(), "claude-fake".into()), "the main agent stays on its pool");
    let (status, sub) = ask(Some("agent-7")).await;
    assert_eq!(status, 200, "{sub}");
    assert_eq!(sub["type"], "message", "answered in Anthropic's words: {sub}");
    assert_eq!(asked(&fake), ("/v1/chat/completions".into(), "gpt-fake".into()), "the subagent on its route's pool");

    // The subagent's pool without a key: back to the main route.
    for key in h.ok("llmConfig:getApiKeys", json!({ "providerId": openai })).as_array().unwrap() {
        h.ok("llmConfig:toggleApiKey", json!({ "id": key["id"], "enabled": false }));
    }
    let (status, back) = ask(Some("agent-7")).await;
    assert_eq!(status, 200, "answered all the same: {back}");
    assert_eq!(asked(&fake), ("/v1/messages".into(), "claude-fake".into()), "by the main route");
}
