//! The local API's routes from Settings → Local API: kept, applied at once to the running
//! endpoint, refused with an issue per field, tried with a tiny request.

use keypool_api::ipc::IssueCode;
use keypool_fake_provider::{FakeProvider, Reply};
use serde_json::{json, Value};

use crate::support::Harness;

const KEY: &str = "sk-routes-AAAAAAAAAAAAAAAAAAAAAAAA-0001";

/// An OpenAI-compatible provider on the fake with a key, and an Anthropic one whose only key is
/// turned off: their ids.
fn providers(h: &Harness, fake: &FakeProvider) -> (String, String) {
    let openai = h.ok(
        "llmConfig:addProvider",
        json!({ "name": "Fake OpenAI", "kind": "openai", "baseUrl": format!("{}/v1", fake.url()), "models": ["gpt-fake"] }),
    );
    h.ok("llmConfig:addApiKey", json!({ "providerId": openai["id"], "apiKey": KEY }));
    let keyless = h.ok(
        "llmConfig:addProvider",
        json!({ "name": "Keyless Anthropic", "kind": "anthropic", "baseUrl": format!("{}/anthropic", fake.url()), "models": ["claude-x"] }),
    );
    let off =
        h.ok("llmConfig:addApiKey", json!({ "providerId": keyless["id"], "apiKey": "sk-ant-routes-off-000000000001" }));
    h.ok("llmConfig:toggleApiKey", json!({ "id": off["id"], "enabled": false }));
    (openai["id"].as_str().unwrap().to_owned(), keyless["id"].as_str().unwrap().to_owned())
}

#[tokio::test(flavor = "multi_thread")]
async fn routes_are_kept_applied_at_once_and_there_after_a_restart() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let (openai, keyless) = providers(&h, &fake);
    fake.always(KEY, Reply::text(&["routed"]));
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let configured = h.call_async("localApi:configure", json!({ "enabled": true, "port": port })).await.unwrap();
    let token = configured["token"].as_str().unwrap().to_owned();

    let saved = h.ok(
        "localApi:setRoutes",
        json!({ "routes": [
            { "model": "claude-*", "provider": openai, "toModel": "gpt-fake" },
            { "model": "*", "provider": keyless, "toModel": "claude-x" },
        ] }),
    );
    assert_eq!(
        saved,
        json!([
            { "model": "claude-*", "provider": openai, "providerName": "Fake OpenAI", "toModel": "gpt-fake", "state": "ready" },
            { "model": "*", "provider": keyless, "providerName": "Keyless Anthropic", "toModel": "claude-x", "state": "noUsableKey" },
        ]),
        "each route with its provider's name, and whether it can answer"
    );

    // At once, on the running endpoint: Claude's model through the first route, to the OpenAI pool.
    let answer = reqwest::Client::new()
        .post(format!("http://127.0.0.1:{port}/v1/messages"))
        .header("x-api-key", &token)
        .header("anthropic-version", "2023-06-01")
        .json(&json!({ "model": "claude-sonnet-4-6", "max_tokens": 10, "messages": [{ "role": "user", "content": "hi" }] }))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200, "the first matching route answered");
    let body: Value = answer.json().await.unwrap();
    assert_eq!(body["content"][0]["text"], "routed", "in Claude's dialect: {body}");
    assert!(fake.seen().iter().any(|s| s.model == "gpt-fake"), "the provider was asked for gpt-fake");

    // Any other model falls to the catch-all, whose provider has no key: said in the client's dialect.
    let refused = reqwest::Client::new()
        .post(format!("http://127.0.0.1:{port}/v1/chat/completions"))
        .bearer_auth(&token)
        .json(&json!({ "model": "gpt-anything", "messages": [{ "role": "user", "content": "hi" }] }))
        .send()
        .await
        .unwrap();
    assert!(refused.status().is_client_error() || refused.status().is_server_error(), "no key: refused");
    let text = refused.text().await.unwrap();
    assert!(text.contains("Keyless Anthropic"), "the refusal names the route's provider: {text}");

    let reopened = h.reopen();
    assert_eq!(reopened.ok("localApi:getRoutes", json!({})), saved, "kept: the same routes after a restart");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bad_glob_an_unknown_provider_and_an_empty_model_are_refused_each_at_its_field() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let (openai, _) = providers(&h, &fake);
    h.ok("localApi:setRoutes", json!({ "routes": [{ "model": "gpt-*", "provider": openai, "toModel": "gpt-fake" }] }));
    let before = h.snapshot();

    let error = h.err(
        "localApi:setRoutes",
        json!({ "routes": [
            { "model": "claude-[a-z]*", "provider": openai, "toModel": "gpt-fake" },
            { "model": "ok-*", "provider": openai, "toModel": "  " },
        ] }),
    );
    let issues: Vec<(String, IssueCode)> = error.issues.unwrap().into_iter().map(|i| (i.path, i.code)).collect();
    assert_eq!(
        issues,
        [("routes[0].model".to_owned(), IssueCode::BadGlob), ("routes[1].toModel".to_owned(), IssueCode::Blank)],
        "each problem at its route and field"
    );
    let error =
        h.err("localApi:setRoutes", json!({ "routes": [{ "model": "x", "provider": "gone", "toModel": "y" }] }));
    let issue = &error.issues.unwrap()[0];
    assert_eq!(
        (issue.path.as_str(), issue.code),
        ("routes[0].provider", IssueCode::UnknownProvider),
        "no such provider"
    );
    assert_eq!(h.snapshot(), before, "a refused list changes nothing");
    assert_eq!(h.ok("localApi:getRoutes", json!({}))[0]["model"], "gpt-*", "the routes as they were");

    h.ok("llmConfig:deleteProvider", json!({ "id": openai }));
    assert_eq!(
        h.ok("localApi:getRoutes", json!({}))[0]["state"],
        "unknownProvider",
        "a route whose provider was deleted says so"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn trying_a_route_sends_a_tiny_request_and_shows_the_answer_or_why_none_came() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let (openai, keyless) = providers(&h, &fake);
    fake.script(KEY, [Reply::text(&["O", "K"])]);

    let tried = h
        .call_async(
            "localApi:testRoute",
            json!({ "route": { "model": "claude-*", "provider": openai, "toModel": "gpt-fake" } }),
        )
        .await
        .unwrap();
    assert_eq!(tried["provider"], "Fake OpenAI");
    assert_eq!(tried["outcome"]["kind"], "answered", "{tried}");
    assert_eq!(tried["outcome"]["reply"], "OK", "the provider's reply");
    let asked = fake.seen().into_iter().last().unwrap();
    assert_eq!(asked.model, "gpt-fake", "the route's model was asked");

    let tried = h
        .call_async(
            "localApi:testRoute",
            json!({ "route": { "model": "*", "provider": keyless, "toModel": "claude-x" } }),
        )
        .await
        .unwrap();
    assert_eq!(tried["outcome"]["kind"], "failed", "{tried}");
    let error = &tried["outcome"]["error"];
    assert_eq!(
        (error["kind"].as_str(), error["provider"].as_str(), error["keys"][0]["state"].as_str()),
        (Some("allBlocked"), Some("Keyless Anthropic"), Some("disabled")),
        "a provider with no usable key says so, key by key, as a chat would: {error}"
    );

    fake.script(KEY, [Reply::status(404)]);
    let tried = h
        .call_async(
            "localApi:testRoute",
            json!({ "route": { "model": "x", "provider": openai, "toModel": "no-such-model" } }),
        )
        .await
        .unwrap();
    assert_eq!(tried["outcome"]["error"]["kind"], "refused", "the provider's refusal: {tried}");
    assert_eq!(tried["outcome"]["error"]["status"], 404);
}

#[tokio::test(flavor = "multi_thread")]
async fn provider_slash_model_names_a_provider_by_its_name_before_another_by_its_id() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    // Named `gemini`, as the built-in Google Gemini's id is.
    let mine = h.ok(
        "llmConfig:addProvider",
        json!({ "name": "gemini", "kind": "openai", "baseUrl": format!("{}/v1", fake.url()), "models": ["gpt-fake"] }),
    );
    h.ok("llmConfig:addApiKey", json!({ "providerId": mine["id"], "apiKey": KEY }));
    fake.always(KEY, Reply::text(&["mine"]));
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let configured = h.call_async("localApi:configure", json!({ "enabled": true, "port": port })).await.unwrap();
    let answer = reqwest::Client::new()
        .post(format!("http://127.0.0.1:{port}/v1/chat/completions"))
        .bearer_auth(configured["token"].as_str().unwrap())
        .json(&json!({ "model": "gemini/gpt-fake", "messages": [{ "role": "user", "content": "hi" }] }))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200, "the provider named gemini answered, not the built-in one");
    let body: Value = answer.json().await.unwrap();
    assert_eq!(body["choices"][0]["message"]["content"], "mine", "{body}");
}
