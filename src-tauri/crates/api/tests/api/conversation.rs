//! The conversation tools and the errors people read, through IPC against the fake provider:
//! system prompts, edit and resend, regenerate, search, Markdown export, the provider's model
//! list, and failed replies saved as codes with parameters.

use keypool_api::ipc::ErrorCode;
use keypool_fake_provider::{FakeProvider, Reply};
use serde_json::{json, Value};

use crate::chat::{fake_provider, new_chat};
use crate::support::Harness;

fn contents(messages: &Value) -> Vec<(String, String)> {
    messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["role"].as_str().unwrap().to_owned(), m["content"].as_str().unwrap().to_owned()))
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_chat_sends_its_system_prompt_first_and_new_chats_take_the_providers() {
    for kind in ["openai", "anthropic"] {
        let h = Harness::new();
        let fake = FakeProvider::start().await;
        let provider = fake_provider(&h, &fake, kind, &["main"]);
        let updated = h.ok("llmConfig:updateProvider", json!({ "id": provider, "systemPrompt": "Answer in haiku." }));
        assert_eq!(updated["systemPrompt"], "Answer in haiku.", "{kind}: the provider keeps a default");

        let chat = h.ok("chat:create", json!({ "providerId": provider }));
        assert_eq!(chat["systemPrompt"], "Answer in haiku.", "{kind}: a new chat starts with it");
        let chat = chat["id"].as_str().unwrap().to_owned();
        fake.script("key-main", [Reply::text(&["ok"])]);
        h.send(&chat, Some("hello"), |_| {}).await.unwrap();
        let seen = fake.seen().pop().unwrap();
        assert_eq!(seen.system.as_deref(), Some("Answer in haiku."), "{kind}: sent as the system prompt");

        let changed = h.ok("chat:update", json!({ "id": chat, "systemPrompt": "Be terse." }));
        assert_eq!(changed["systemPrompt"], "Be terse.", "{kind}: a chat has its own");
        fake.script("key-main", [Reply::text(&["ok"])]);
        h.send(&chat, Some("again"), |_| {}).await.unwrap();
        assert_eq!(fake.seen().pop().unwrap().system.as_deref(), Some("Be terse."), "{kind}: the chat's own is sent");

        let cleared = h.ok("chat:update", json!({ "id": chat, "systemPrompt": "" }));
        assert_eq!(cleared["systemPrompt"], Value::Null, "{kind}: an empty prompt removes it");
        fake.script("key-main", [Reply::text(&["ok"])]);
        h.send(&chat, Some("third"), |_| {}).await.unwrap();
        assert_eq!(fake.seen().pop().unwrap().system, None, "{kind}: and none is sent");

        let none = h.ok("chat:create", json!({ "providerId": provider, "systemPrompt": "" }));
        assert_eq!(none["systemPrompt"], Value::Null, "{kind}: a new chat may opt out of the default");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn edit_resend_and_regenerate_replace_what_follows_the_last_question() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = fake_provider(&h, &fake, "openai", &["main"]);
    let chat = new_chat(&h, &provider);
    fake.script("key-main", [Reply::text(&["Paris"]), Reply::text(&["Rome"]), Reply::text(&["Roma"])]);
    h.send(&chat, Some("Capital of France?"), |_| {}).await.unwrap();

    let (reply, events) =
        h.send_request(json!({ "chatId": chat, "content": "Capital of Italy?", "edit": true }), |_| {}).await.unwrap();
    assert_eq!(reply["content"], "Rome", "the edited question is answered");
    assert_eq!(events[0]["type"], "userMessage", "the edited message is sent back");
    assert_eq!(events[0]["message"]["content"], "Capital of Italy?", "with its new text");
    assert_eq!(fake.seen().pop().unwrap().last_user, "Capital of Italy?", "the provider saw the new text");
    let messages = h.ok("chat:getMessages", json!({ "chatId": chat }));
    assert_eq!(
        contents(&messages),
        pairs(&[("user", "Capital of Italy?"), ("assistant", "Rome")]),
        "the old question and its reply are replaced"
    );

    let (again, events) = h.send(&chat, None, |_| {}).await.unwrap();
    assert_eq!(again["content"], "Roma", "regenerate answers the same question again");
    assert_ne!(events[0]["type"], "userMessage", "no new user message");
    let messages = h.ok("chat:getMessages", json!({ "chatId": chat }));
    assert_eq!(
        contents(&messages),
        pairs(&[("user", "Capital of Italy?"), ("assistant", "Roma")]),
        "the new reply replaces the old one"
    );
    assert_eq!(fake.seen().pop().unwrap().messages, 1, "the replaced reply is not sent as history");

    let err = h.send_request(json!({ "chatId": chat, "edit": true }), |_| {}).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Validation, "an edit needs the new text");
    let empty = new_chat(&h, &provider);
    let err = h.send_request(json!({ "chatId": empty, "content": "x", "edit": true }), |_| {}).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Validation, "nothing to edit in an empty chat");
    assert_eq!(h.ok("chat:getMessages", json!({ "chatId": empty })), json!([]), "and nothing was written");
}

#[tokio::test(flavor = "multi_thread")]
async fn search_finds_titles_and_messages_in_any_case_and_script() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = fake_provider(&h, &fake, "openai", &["main"]);
    let (soup, trip, other) = (new_chat(&h, &provider), new_chat(&h, &provider), new_chat(&h, &provider));
    fake.always("key-main", Reply::text(&["noted"]));
    h.send(&soup, Some("Рецепт БОРЩА, пожалуйста"), |_| {}).await.unwrap();
    h.send(&trip, Some("Plan a trip"), |_| {}).await.unwrap();
    let long = format!("{} then we eat borscht in Kyiv {}", "word ".repeat(40), "more ".repeat(40));
    h.send(&trip, Some(&long), |_| {}).await.unwrap();
    h.send(&other, Some("nothing to see"), |_| {}).await.unwrap();

    let found = h.ok("chat:search", json!({ "query": "борщ" }));
    assert_eq!(found.as_array().unwrap().len(), 1, "Cyrillic matches regardless of case: {found}");
    assert_eq!(found[0]["chat"]["id"], soup.as_str(), "the soup chat");
    assert_eq!(found[0]["inTitle"], true, "its title came from the message");
    assert_eq!(found[0]["snippet"]["matched"], "БОРЩ", "the match as written, for highlighting");

    let found = h.ok("chat:search", json!({ "query": "BORSCHT" }));
    assert_eq!(found[0]["chat"]["id"], trip.as_str(), "the trip chat, by a message in it");
    assert_eq!(found[0]["inTitle"], false, "not by its title");
    let snippet = &found[0]["snippet"];
    assert_eq!(snippet["matched"], "borscht", "the matched text");
    let shown = format!("{}{}{}", snippet["before"].as_str().unwrap(), "borscht", snippet["after"].as_str().unwrap());
    assert!(shown.starts_with('…') && shown.ends_with('…'), "a long message is cut around the match: {shown}");
    assert!(shown.chars().count() < 140, "to a short piece: {shown}");

    assert_eq!(h.ok("chat:search", json!({ "query": "zebra" })), json!([]), "no match, no chats");
    let err = h.err("chat:search", json!({ "query": "  " }));
    assert_eq!(err.code, ErrorCode::Validation, "a blank query is refused");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_chat_exports_as_markdown_where_the_user_chooses() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = fake_provider(&h, &fake, "openai", &["main"]);
    let chat = h.ok("chat:create", json!({ "providerId": provider, "systemPrompt": "Be kind." }));
    let chat = chat["id"].as_str().unwrap().to_owned();
    fake.script("key-main", [Reply::text(&["```rust\nfn main() {}\n```"])]);
    h.send(&chat, Some("Show me: Rust / main?"), |_| {}).await.unwrap();

    h.saves.answer(None);
    let cancelled = h.call_async("chat:exportMarkdown", json!({ "chatId": chat })).await.unwrap();
    assert_eq!(cancelled["path"], Value::Null, "cancelling the dialog writes nothing");

    let target = h.dir.path().join("export.md");
    h.saves.answer(Some(target.clone()));
    let written = h.call_async("chat:exportMarkdown", json!({ "chatId": chat })).await.unwrap();
    assert_eq!(written["rows"], 2, "both messages");
    let text = std::fs::read_to_string(&target).unwrap();
    assert!(text.starts_with("# Show me: Rust / main?\n"), "the title heads it: {text}");
    assert!(text.contains("## System\n\nBe kind."), "with the system prompt");
    assert!(text.contains("## User\n\nShow me: Rust / main?"), "the question");
    assert!(text.contains("## Assistant\n\n```rust\nfn main() {}\n```"), "the reply, its code block intact");

    let err = h.call_async("chat:exportMarkdown", json!({ "chatId": "ghost" })).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::NotFound, "an unknown chat");
    assert_eq!(serde_json::to_value(&err).unwrap()["details"], json!({ "kind": "notFound", "what": "chat" }));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_model_list_comes_from_the_provider_in_both_dialects() {
    for kind in ["openai", "anthropic"] {
        let h = Harness::new();
        let fake = FakeProvider::start().await;
        let provider = fake_provider(&h, &fake, kind, &["main"]);
        // More than one of Anthropic's pages (1000 a page).
        let many: Vec<String> = (0..1500).map(|i| format!("model-{i:04}")).collect();
        fake.models(&many.iter().map(String::as_str).collect::<Vec<_>>());

        let list = h.call_async("llmConfig:listModels", json!({ "providerId": provider })).await.unwrap();
        let models: Vec<&str> = list["models"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
        assert_eq!(models.len(), 1500, "{kind}: every model, across pages");
        assert_eq!((models[0], models[1499]), ("model-0000", "model-1499"), "{kind}: in the provider's order");
        assert_eq!(list["cached"], false, "{kind}: fetched");
        let asked = fake.seen().iter().filter(|s| s.path.ends_with("models")).count();
        assert_eq!(asked, if kind == "anthropic" { 2 } else { 1 }, "{kind}: one request per page");
        assert!(fake.seen().iter().all(|s| s.key == "key-main"), "{kind}: asked with the pool's key");

        let again = h.call_async("llmConfig:listModels", json!({ "providerId": provider })).await.unwrap();
        assert_eq!(again["cached"], true, "{kind}: the second time from memory");
        assert_eq!(fake.seen().len(), asked, "{kind}: without asking");
        fake.models(&["only-one"]);
        let fresh =
            h.call_async("llmConfig:listModels", json!({ "providerId": provider, "refresh": true })).await.unwrap();
        assert_eq!(fresh["models"], json!(["only-one"]), "{kind}: refresh asks again");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_list_that_fails_says_why_in_codes() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = fake_provider(&h, &fake, "openai", &["a", "b"]);
    fake.always("key-a", Reply::status(401));
    fake.always("key-b", Reply::status(401));
    let err = h.call_async("llmConfig:listModels", json!({ "providerId": provider })).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Provider, "{err:?}");
    let details = serde_json::to_value(&err).unwrap()["details"].clone();
    assert_eq!(details["kind"], "upstream", "{details}");
    assert_eq!(details["status"], 401, "the provider's status");
    assert_eq!(details["problem"], json!({ "kind": "refused" }), "refused");
    assert_eq!(fake.seen().len(), 2, "each key was asked once before giving up");

    // A server that is not there.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let gone = h.ok(
        "llmConfig:addProvider",
        json!({ "name": "Gone", "kind": "openai", "baseUrl": format!("http://{closed}/v1") }),
    );
    let err = h.call_async("llmConfig:listModels", json!({ "providerId": gone["id"] })).await.unwrap_err();
    let details = serde_json::to_value(&err).unwrap()["details"].clone();
    assert_eq!(details["problem"], json!({ "kind": "unreachable", "breakage": "connect" }), "{details}");
}

/// A failed reply is saved with its error as a code with parameters, and reads the same after
/// a restart; the English stays only as the fallback.
#[tokio::test(flavor = "multi_thread")]
async fn failed_replies_keep_their_reason_as_codes_with_parameters() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = fake_provider(&h, &fake, "openai", &["A", "B"]);
    fake.always("key-A", Reply::status_with(429, &[("retry-after", "600")]));
    fake.always("key-B", Reply::status(401));
    h.ok("settings:update", json!({ "maxWaitSeconds": 0 }));
    let chat = new_chat(&h, &provider);
    let (reply, _) = h.send(&chat, Some("hi"), |_| {}).await.unwrap();
    assert_eq!(reply["status"], "error");
    let details = &reply["errorDetails"];
    assert_eq!(details["kind"], "allBlocked", "{details}");
    assert_eq!(details["provider"], "Fake", "the provider by name");
    let keys = details["keys"].as_array().unwrap();
    let a = keys.iter().find(|k| k["name"] == "A").unwrap();
    assert_eq!(a["state"], "cooling", "A rests after its 429: {a}");
    assert_eq!(a["until"], json!(crate::support::START.as_millis() + 600_000), "until the announced time");
    let b = keys.iter().find(|k| k["name"] == "B").unwrap();
    assert_eq!((b["state"].as_str(), b["status"].as_u64()), (Some("disabled"), Some(401)), "B was refused: {b}");
    assert_eq!(details["last"]["status"], 401, "the last answer");

    fake.always("key-A", Reply::status(400));
    h.ok("llmConfig:resetCooldown", json!({ "id": id_of_key(&h, &provider, "A") }));
    let (reply, _) = h.send(&chat, None, |_| {}).await.unwrap();
    assert_eq!(reply["errorDetails"], json!({ "kind": "refused", "status": 400, "message": "scripted HTTP 400" }));

    let h = h.reopen();
    let messages = h.ok("chat:getMessages", json!({ "chatId": chat }));
    let saved = messages.as_array().unwrap().last().unwrap();
    assert_eq!(saved["errorDetails"]["kind"], "refused", "the reason survives a restart: {saved}");
}

fn id_of_key(h: &Harness, provider: &str, label: &str) -> String {
    let keys = h.ok("llmConfig:getApiKeys", json!({ "providerId": provider }));
    let key = keys.as_array().unwrap().iter().find(|k| k["label"] == label).unwrap();
    key["id"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_test_names_its_problem_and_brings_back_a_key_with_credit_again() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = fake_provider(&h, &fake, "openai", &["main"]);
    let key = id_of_key(&h, &provider, "main");
    fake.script("key-main", [Reply::QuotaExceeded]);
    fake.always("key-main", Reply::text(&["fine"]));
    let chat = new_chat(&h, &provider);
    h.ok("settings:update", json!({ "maxWaitSeconds": 0 }));
    h.send(&chat, Some("hi"), |_| {}).await.unwrap();
    let status = h.ok("llmConfig:getPoolStatus", json!({ "providerId": provider }));
    assert_eq!(status["keys"][0]["state"], "exhausted", "out of credit after the 429 insufficient_quota");

    let tested = h.call_async("llmConfig:testApiKey", json!({ "id": key })).await.unwrap();
    assert_eq!(tested["ok"], true, "the credit check passed: {tested}");
    let status = h.ok("llmConfig:getPoolStatus", json!({ "providerId": provider }));
    assert_eq!(status["keys"][0]["state"], "active", "and the key is back in rotation");

    let env = h.ok("llmConfig:addApiKey", json!({ "providerId": provider, "apiKey": "$KEYPOOL_TEST_UNSET_VAR" }));
    let tested = h.call_async("llmConfig:testApiKey", json!({ "id": env["id"] })).await.unwrap();
    assert_eq!(tested["problem"], json!({ "kind": "envUnset", "var": "KEYPOOL_TEST_UNSET_VAR" }), "{tested}");
    let status = h.ok("llmConfig:getPoolStatus", json!({ "providerId": provider }));
    let unset: Vec<&Value> = status["keys"].as_array().unwrap().iter().map(|k| &k["unsetVar"]).collect();
    assert_eq!(unset, [&Value::Null, &json!("KEYPOOL_TEST_UNSET_VAR")], "the key table sees it without a test");
}
