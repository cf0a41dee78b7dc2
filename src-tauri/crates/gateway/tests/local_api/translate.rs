//! A client routed to a provider of another dialect: its request read and written again, the
//! answer (whole, streamed, with tool calls, or a refusal) back in the client's dialect, through
//! the pool as any request (the ledger counts the provider's usage).

use keypool_fake_provider::Reply;
use keypool_llm::{ProviderKind, Usage};

use crate::support::*;

fn claude_body(stream: bool) -> String {
    json!({ "model": "fake/gpt-5", "max_tokens": 256, "stream": stream,
        "system": [{ "type": "text", "text": "You are Claude Code." }],
        "tools": [{ "name": "Read", "description": "Reads a file", "input_schema": { "type": "object" } }],
        "messages": [{ "role": "user", "content": "read a.rs" }] })
    .to_string()
}

async fn post(api: &LocalApi, path: &str, body: &str) -> (u16, String) {
    let auth = format!("Bearer {TOKEN}");
    let (status, text, _) =
        api.post_raw(path, body, &[("authorization", auth.as_str()), ("anthropic-version", "2023-06-01")]).await;
    (status, text)
}

/// The SSE events of a stream: (name, data as JSON).
fn events(text: &str) -> Vec<(String, serde_json::Value)> {
    text.split("\n\n")
        .filter_map(|event| {
            let name = event.lines().find_map(|l| l.strip_prefix("event: ")).unwrap_or_default().to_owned();
            let data = event.lines().find_map(|l| l.strip_prefix("data: "))?;
            Some((name, serde_json::from_str(data).ok()?))
        })
        .collect()
}

#[tokio::test]
async fn an_anthropic_client_is_answered_by_an_openai_pool_whole_and_streamed() {
    let api = LocalApi::of_kind(ProviderKind::Openai, None, &["a"]).await;
    let (status, text) = post(&api, "/v1/messages", &claude_body(false)).await;
    assert_eq!(status, 200, "answered: {text}");
    let message: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(message["type"], "message", "an Anthropic Message: {text}");
    assert_eq!(message["content"][0]["text"], "Hello from the fake provider.");
    assert_eq!(message["usage"]["cache_read_input_tokens"], 5, "the cached tokens in Anthropic's terms: {text}");
    let seen = api.fake.seen();
    assert_eq!(seen[0].path, "/v1/chat/completions", "asked in OpenAI's dialect");
    assert_eq!(seen[0].system.as_deref(), Some("You are Claude Code."), "its system prompt carried");
    assert_eq!(seen[0].model, "gpt-5", "the route's model");

    let (status, text) = post(&api, "/v1/messages", &claude_body(true)).await;
    assert_eq!(status, 200);
    let events = events(&text);
    let names: Vec<&str> = events.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names.first(), Some(&"message_start"), "Anthropic's events: {names:?}");
    assert_eq!(names.last(), Some(&"message_stop"));
    let said: String = events.iter().filter_map(|(_, data)| data["delta"]["text"].as_str()).collect();
    assert_eq!(said, "Hello from the fake provider.", "the text, piece by piece");
    let usages: Vec<Option<Usage>> = api.attempts().iter().map(|a| a.usage).collect();
    assert!(usages.iter().all(|u| u.is_some_and(|u| u.cached == 5)), "the ledger has the provider's usage: {usages:?}");
}

#[tokio::test]
async fn a_tool_call_streamed_by_an_openai_pool_reaches_an_anthropic_client_whole() {
    let api = LocalApi::of_kind(ProviderKind::Openai, None, &["a"]).await;
    let call = Reply::ToolCall { name: "Read".into(), arguments: r#"{"file_path":"a.rs"}"#.into() };
    api.fake.script("key-a", [call.clone(), call]);
    let (status, text) = post(&api, "/v1/messages", &claude_body(true)).await;
    assert_eq!(status, 200, "{text}");
    let events = events(&text);
    let start =
        events.iter().find(|(name, data)| name == "content_block_start" && data["content_block"]["type"] == "tool_use");
    let start = start.unwrap_or_else(|| panic!("a tool_use block: {text}"));
    assert_eq!(start.1["content_block"]["name"], "Read");
    let arguments: String = events.iter().filter_map(|(_, data)| data["delta"]["partial_json"].as_str()).collect();
    assert_eq!(serde_json::from_str::<serde_json::Value>(&arguments).unwrap(), json!({ "file_path": "a.rs" }));
    let stop = events.iter().find_map(|(_, data)| data["delta"]["stop_reason"].as_str());
    assert_eq!(stop, Some("tool_use"), "Claude Code runs the tool on tool_use");
    let seen = api.fake.seen();
    let tools: serde_json::Value = serde_json::from_str(&seen[0].body).unwrap();
    assert_eq!(tools["tools"][0]["function"]["name"], "Read", "the tool offered in OpenAI's shape");

    let (status, text) = post(&api, "/v1/messages", &claude_body(false)).await;
    assert_eq!(status, 200);
    let message: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(message["content"][0]["type"], "tool_use", "whole too: {text}");
    assert_eq!(message["stop_reason"], "tool_use");
}

#[tokio::test]
async fn a_codex_client_is_answered_by_an_anthropic_pool() {
    let api = LocalApi::of_kind(ProviderKind::Anthropic, None, &["a"]).await;
    let body = json!({ "model": "fake/claude-sonnet-4-6", "instructions": "You are Codex.", "stream": true,
        "input": [{ "type": "message", "role": "user", "content": [{ "type": "input_text", "text": "hi" }] }] });
    let (status, text) = post(&api, "/v1/responses", &body.to_string()).await;
    assert_eq!(status, 200, "{text}");
    let events = events(&text);
    let said: String = events
        .iter()
        .filter(|(n, _)| n == "response.output_text.delta")
        .filter_map(|(_, d)| d["delta"].as_str())
        .collect();
    assert_eq!(said, "Hello from the fake provider.");
    let completed = events.iter().find(|(n, _)| n == "response.completed").expect("Codex waits for response.completed");
    assert_eq!(completed.1["response"]["usage"]["input_tokens_details"]["cached_tokens"], 5);
    let seen = api.fake.seen();
    assert_eq!(seen[0].path, "/v1/messages", "asked in Anthropic's dialect");
    assert_eq!(seen[0].system.as_deref(), Some("You are Codex."));
}

/// Codex's request after `turns` exchanges of one session: its instructions, tools and the whole history, no marks.
fn codex_turn(turns: usize, stream: bool) -> serde_json::Value {
    let mut input = Vec::new();
    for turn in 0..turns {
        input.push(json!({ "type": "message", "role": "user", "content": [{ "type": "input_text", "text": format!("step {turn}") }] }));
        input.push(json!({ "type": "message", "role": "assistant", "content": [{ "type": "output_text", "text": format!("did {turn}") }] }));
    }
    input.push(json!({ "type": "message", "role": "user", "content": [{ "type": "input_text", "text": format!("step {turns}") }] }));
    json!({ "model": "fake/claude-sonnet-4-6", "instructions": "You are Codex.", "stream": stream, "input": input,
        "tools": [{ "type": "function", "name": "shell", "parameters": { "type": "object" } }] })
}

#[tokio::test]
async fn a_codex_session_on_an_anthropic_pool_is_cached_and_each_answer_has_its_own_id() {
    let api = LocalApi::of_kind(ProviderKind::Anthropic, None, &["a"]).await;
    let mut ids = Vec::new();
    for (turns, stream) in [(0, true), (1, true), (2, false)] {
        let (status, text) = post(&api, "/v1/responses", &codex_turn(turns, stream).to_string()).await;
        assert_eq!(status, 200, "{text}");
        let response = if stream {
            let events = events(&text);
            let created: Vec<_> = events.iter().filter_map(|(_, d)| d["response"]["id"].as_str()).collect();
            assert!(created.windows(2).all(|w| w[0] == w[1]), "one id in every event of a stream: {created:?}");
            events.into_iter().find(|(n, _)| n == "response.completed").expect("completed").1["response"].clone()
        } else {
            serde_json::from_str::<serde_json::Value>(&text).unwrap()
        };
        let id = response["id"].as_str().unwrap_or_default().to_owned();
        assert!(id.starts_with("resp_") && id.len() > 20, "a Responses id: {id}");
        assert!(response["created_at"].as_i64().is_some_and(|t| t > 1_600_000_000), "its time: {response}");
        ids.push(id);
    }
    ids.dedup();
    assert_eq!(ids.len(), 3, "each answer its own id: {ids:?}");
    let seen = api.fake.seen();
    // System (after the tools), the newest turn and the user turn before it: three of four.
    let marks: Vec<usize> = seen.iter().map(|s| s.breakpoints).collect();
    assert_eq!(marks, [2, 3, 3], "the first has no earlier user turn to mark");
    fn unmark(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Object(members) => {
                members.remove("cache_control");
                members.values_mut().for_each(unmark);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(unmark),
            _ => {}
        }
    }
    let unmarked = |s: &keypool_fake_provider::Seen| {
        let mut body = serde_json::from_str(&s.body).unwrap();
        unmark(&mut body);
        body
    };
    let bodies: Vec<serde_json::Value> = seen.iter().map(unmarked).collect();
    let earlier = |body: &serde_json::Value| body["messages"].as_array().unwrap()[..3].to_vec();
    assert_eq!(earlier(&bodies[1]), earlier(&bodies[2]), "the earlier turns are written as they were");
    let bodies: Vec<serde_json::Value> = seen.iter().map(|s| serde_json::from_str(&s.body).unwrap()).collect();
    assert_eq!(bodies[2]["system"][0]["cache_control"]["type"], "ephemeral");

    // An Anthropic client goes as it is: its own marks, byte for byte.
    let body = claude_body(false).replace("fake/gpt-5", "fake/claude-sonnet-4-6");
    let (status, _) = post(&api, "/v1/messages", &body).await;
    assert_eq!(status, 200);
    let last = api.fake.seen().pop().unwrap();
    assert_eq!(last.breakpoints, 0, "none added to a request that goes as it is");
    assert_eq!(
        last.body,
        body.replace("fake/claude-sonnet-4-6", "claude-sonnet-4-6"),
        "as it came, but the route's model"
    );
}

#[tokio::test]
async fn a_providers_refusal_reaches_the_client_in_its_own_dialect() {
    let api = LocalApi::of_kind(ProviderKind::Openai, None, &["a"]).await;
    api.fake.script("key-a", [Reply::Status { status: 400, headers: vec![], message: "model not supported".into() }]);
    let (status, text) = post(&api, "/v1/messages", &claude_body(false)).await;
    assert_eq!(status, 400);
    let error: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(error["type"], "error", "Anthropic's error shape: {text}");
    assert_eq!(error["error"]["type"], "invalid_request_error");
    assert!(error["error"]["message"].as_str().unwrap().contains("model not supported"), "in the provider's words");
    let server_tool = json!({ "model": "fake/gpt-5", "max_tokens": 1, "messages": [{ "role": "user", "content": "hi" }],
        "tools": [{ "type": "web_search_20250305", "name": "web_search" }] });
    let (status, text) = post(&api, "/v1/messages", &server_tool.to_string()).await;
    assert_eq!(status, 200, "answered without the tool only Anthropic runs: {text}");
    let sent: serde_json::Value = serde_json::from_str(&api.fake.seen().last().unwrap().body).unwrap();
    assert!(sent.get("tools").is_none(), "the server tool was left out (the README's table says so): {sent}");
    let anthropic = LocalApi::of_kind(ProviderKind::Anthropic, None, &["b"]).await;
    let stored = json!({ "model": "fake/claude-x", "input": "more", "previous_response_id": "resp_1" });
    let (status, text) = post(&anthropic, "/v1/responses", &stored.to_string()).await;
    assert_eq!(status, 400, "a stored response cannot go to another provider: {text}");
    assert!(text.contains("previous_response_id"), "names what cannot go: {text}");
    assert!(anthropic.fake.seen().is_empty(), "and nothing went upstream");
}

#[tokio::test]
async fn a_gemini_client_names_provider_slash_model_in_its_path() {
    // Gemini CLI writes the model into the path as it is given: `-m fake/gpt-5` asks for
    // `/v1beta/models/fake/gpt-5:streamGenerateContent`.
    let api = LocalApi::of_kind(ProviderKind::Openai, None, &["a"]).await;
    let body = json!({ "contents": [{ "role": "user", "parts": [{ "text": "hello" }] }] }).to_string();
    let (status, text) = post(&api, "/v1beta/models/fake/gpt-5:streamGenerateContent?alt=sse", &body).await;
    assert_eq!(status, 200, "answered: {text}");
    // Google ends its events with CRLF pairs.
    let said: String = events(&text.replace("\r\n", "\n"))
        .iter()
        .filter_map(|(_, data)| data["candidates"][0]["content"]["parts"][0]["text"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(said, "Hello from the fake provider.", "in Gemini's chunks: {text}");
    let seen = api.fake.seen();
    assert_eq!(
        (seen[0].path.as_str(), seen[0].model.as_str()),
        ("/v1/chat/completions", "gpt-5"),
        "the provider's own API"
    );
}
