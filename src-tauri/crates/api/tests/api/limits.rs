//! The pool's knowledge of limits through the commands: the user's limits per key, the wait a
//! chat may take (Settings → General), and what each key has left in `getPoolStatus`.

use keypool_api::ipc::ErrorCode;
use keypool_fake_provider::{FakeProvider, RateLimit};
use serde_json::{json, Value};

use crate::support::Harness;

#[test]
fn user_limits_are_validated_set_and_cleared() {
    let h = Harness::new();
    let key = h.ok(
        "llmConfig:addApiKey",
        json!({ "providerId": "openai", "apiKey": "sk-limits-AAAAAAAAAAAA0001", "rpmLimit": 60, "maxConcurrent": 2 }),
    );
    assert_eq!((key["rpmLimit"].clone(), key["maxConcurrent"].clone()), (json!(60), json!(2)), "stored as given");
    let id = key["id"].as_str().unwrap().to_owned();
    let before = h.snapshot();
    for (args, path) in [
        (json!({ "id": id, "rpmLimit": 0 }), "rpmLimit"),
        (json!({ "id": id, "rpmLimit": 100_001 }), "rpmLimit"),
        (json!({ "id": id, "rpmLimit": 1.5 }), "rpmLimit"),
        (json!({ "id": id, "rpmLimit": "3" }), "rpmLimit"),
        (json!({ "id": id, "rpmLimit": null }), "rpmLimit"),
        (json!({ "id": id, "maxConcurrent": 1_001 }), "maxConcurrent"),
        (json!({ "id": id, "maxConcurrent": -1 }), "maxConcurrent"),
    ] {
        let err = h.err("llmConfig:setKeyLimits", args.clone());
        assert_eq!(err.code, ErrorCode::Validation, "{args}");
        assert!(err.issues.unwrap_or_default().iter().any(|i| i.path == path), "{args}: an issue at {path}");
    }
    let err =
        h.err("llmConfig:addApiKey", json!({ "providerId": "openai", "apiKey": "sk-x-BBBBBBBBBBBBB", "rpmLimit": 0 }));
    assert_eq!(err.code, ErrorCode::Validation, "0 is no limit to add with either");
    assert_eq!(h.snapshot(), before, "nothing was written");

    let changed = h.ok("llmConfig:setKeyLimits", json!({ "id": id, "maxConcurrent": 5 }));
    assert_eq!(changed["maxConcurrent"], 5, "set");
    assert_eq!(changed["rpmLimit"], Value::Null, "an absent limit is removed: both are replaced");
    let err = h.err("llmConfig:setKeyLimits", json!({ "id": "ghost" }));
    assert_eq!(err.code, ErrorCode::NotFound, "unknown key");
}

#[test]
fn the_wait_a_chat_may_take_is_a_setting_that_survives_a_restart() {
    let h = Harness::new();
    let defaults = h.ok("settings:get", json!({}));
    assert_eq!(defaults["maxWaitSeconds"], 20, "20 s by default");
    for bad in [json!(121), json!(-1), json!("5"), json!(null), json!(2.5)] {
        let err = h.err("settings:update", json!({ "maxWaitSeconds": bad }));
        assert_eq!(err.code, ErrorCode::Validation, "{bad} is refused");
    }
    assert_eq!(h.err("settings:update", json!({})).code, ErrorCode::Validation, "an update changes something");
    assert_eq!(h.ok("settings:update", json!({ "maxWaitSeconds": 5 }))["maxWaitSeconds"], 5);
    assert_eq!(h.ctx.keys().unwrap().pool().max_wait().as_secs(), 5, "the pool uses it at once");
    let h = h.reopen();
    assert_eq!(h.ok("settings:get", json!({}))["maxWaitSeconds"], 5, "kept across a restart");
    assert_eq!(h.ctx.keys().unwrap().pool().max_wait().as_secs(), 5, "and applied at startup");
}

#[tokio::test(flavor = "multi_thread")]
async fn pool_status_shows_what_each_key_has_left() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = crate::support::add_fake_provider(&h, &fake, &["m"]);
    h.ok("llmConfig:addApiKey", json!({ "providerId": provider, "apiKey": "sk-left-AAAAAAAAAAAAAA01", "label": "a" }));
    fake.limit("sk-left-AAAAAAAAAAAAAA01", RateLimit { requests: 5, window_ms: 60_000 });
    let chat = h.ok("chat:create", json!({ "providerId": provider }))["id"].as_str().unwrap().to_owned();
    for message in ["one", "two"] {
        h.send(&chat, Some(message), |_| {}).await.unwrap();
    }
    let status = h.ok("llmConfig:getPoolStatus", json!({ "providerId": provider }));
    let budget = &status["keys"][0]["budgets"][0];
    assert_eq!(budget["scope"], "m", "per model, as OpenAI counts: {status}");
    assert_eq!(budget["requests"]["remaining"], 3, "3 of 5 left after two requests");
    assert_eq!(budget["requests"]["limit"], 5, "of 5");
    assert!(budget["requests"]["resetAt"].as_i64().unwrap() > status["now"].as_i64().unwrap(), "resets later");
    assert_eq!(status["keys"][0]["inFlight"], 0, "nothing in flight");
}

/// Settings → General → Proxy: none by default; the system's, or an address, from then on and
/// after a restart; an address that is no proxy is refused and changes nothing.
#[tokio::test(flavor = "multi_thread")]
async fn the_proxy_is_a_setting_that_provider_requests_follow() {
    let h = Harness::new();
    assert_eq!(h.ok("settings:get", json!({}))["proxy"], json!({ "mode": "none" }), "none by default");
    for bad in [
        json!({ "mode": "url", "url": "ftp://proxy.example" }),
        json!({ "mode": "url", "url": "not an address" }),
        json!({ "mode": "url" }),
        json!({ "mode": "none", "url": "http://proxy.example:3128" }),
        json!({ "mode": "sometimes" }),
    ] {
        let before = h.snapshot();
        let err = h.err("settings:update", json!({ "proxy": bad }));
        assert!(err.issues.unwrap_or_default().iter().any(|i| i.path.starts_with("proxy")), "{bad}: refused at proxy");
        assert_eq!(h.snapshot(), before, "{bad}: nothing changed");
    }

    // A listener standing in for the proxy: an https request elsewhere reaches it as a tunnel.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let proxy = format!("http://{}", listener.local_addr().unwrap());
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let record = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut first = [0u8; 128];
            let n = std::io::Read::read(&mut &stream, &mut first).unwrap_or(0);
            record.lock().unwrap().push(String::from_utf8_lossy(&first[..n]).into_owned());
        }
    });
    let updated = h.ok("settings:update", json!({ "proxy": { "mode": "url", "url": proxy } }));
    assert_eq!(updated["proxy"], json!({ "mode": "url", "url": proxy }), "kept");
    let provider = h.ok(
        "llmConfig:addProvider",
        json!({ "name": "Far", "kind": "openai", "baseUrl": "https://provider.example/v1", "apiKey": "sk-proxy-00000000000001" }),
    )["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let _ = h.call_async("llmConfig:listModels", json!({ "providerId": provider, "refresh": true })).await;
    assert!(
        seen.lock().unwrap().iter().any(|first| first.starts_with("CONNECT provider.example:443")),
        "the request went through the chosen proxy: {:?}",
        seen.lock().unwrap()
    );
    let h = h.reopen();
    assert_eq!(h.ok("settings:get", json!({}))["proxy"]["mode"], "url", "after a restart too");
    h.ok("settings:update", json!({ "proxy": { "mode": "system" } }));
    assert_eq!(h.ok("settings:get", json!({}))["proxy"], json!({ "mode": "system" }));
}
