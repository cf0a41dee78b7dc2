//! Gemini against the fake provider: a chat streams and reads its usage, whole replies too, the
//! key never goes into a URL, and every row of the table of refusals does what it says to the
//! pool: a per-minute quota rests only that model, a per-day quota uses it up until midnight in
//! Los Angeles, an invalid key's 400 disables it, other 400s are the request's, 503 rests the key
//! briefly, the billing words never mean out of credit; safety blocks and unfinished streams end
//! as such; and keys of one project share one refusal when their quota group says so.

use keypool_fake_provider::gemini::{ProjectLimit, PER_DAY_QUOTA, PER_MINUTE_QUOTA, THOUGHT_TOKENS};
use keypool_fake_provider::{CACHED_TOKENS, INPUT_TOKENS};
use keypool_llm::{Breakage, Interruption};

use crate::support::*;

fn quota(quota_id: &str, retry_delay: Option<&str>) -> Reply {
    Reply::QuotaRefused { quota_id: quota_id.to_owned(), retry_delay: retry_delay.map(str::to_owned) }
}

async fn gemini(keys: &[(&str, u32)]) -> Rig {
    Rig::new(ProviderKind::Gemini, keys).await
}

#[tokio::test]
async fn a_gemini_chat_streams_and_reports_its_usage_with_the_thoughts() {
    let rig = gemini(&[("a", 1)]).await;
    let mut request = rig.request("chat", true);
    request.messages.insert(0, ChatMessage::new(Role::System, "be brief"));
    request.messages.push(ChatMessage::new(Role::Assistant, "hi!"));
    request.messages.push(ChatMessage::new(Role::User, "again"));
    let (outcome, events) = rig.ask_with(request, &CancellationToken::new(), |_, _| {}).await;
    assert!(finished(&outcome), "the stream ends with a finishReason: {:?}", outcome.end);
    assert_eq!(outcome.text, "Hello from the fake provider.", "every piece of text");
    let deltas = events.iter().filter(|e| matches!(e, CompletionEvent::Delta { .. })).count();
    assert_eq!(deltas, 3, "streamed piece by piece");
    assert_eq!(
        outcome.usage,
        Some(Usage { input: INPUT_TOKENS, cached: CACHED_TOKENS, output: 3 + THOUGHT_TOKENS }),
        "promptTokenCount includes the cached tokens; the output counts the thoughts"
    );
    let seen = &rig.fake.seen()[0];
    assert_eq!(seen.path, "/v1beta/models/fake-model:streamGenerateContent", "the model's streaming method");
    assert_eq!(seen.key, "key-a", "the key went in x-goog-api-key");
    assert_eq!(seen.system.as_deref(), Some("be brief"), "the system prompt is the systemInstruction");
    assert_eq!((seen.messages, seen.last_user.as_str()), (3, "again"), "the turns are the contents");
    assert!(seen.body.contains(r#""role":"model""#), "the assistant's turn has the role model: {}", seen.body);
    let records = rig.keys.attempts.lock().unwrap().clone();
    assert_eq!(records[0].usage, outcome.usage, "the ledger records the same usage");
}

#[tokio::test]
async fn a_whole_gemini_reply_is_read_with_its_usage() {
    let rig = gemini(&[("a", 1)]).await;
    let (outcome, _) = rig.ask_with(rig.request("chat", false), &CancellationToken::new(), |_, _| {}).await;
    assert!(finished(&outcome), "{:?}", outcome.end);
    assert_eq!(outcome.text, "Hello from the fake provider.");
    assert_eq!(outcome.usage.map(|u| u.output), Some(3 + THOUGHT_TOKENS), "the whole reply's usageMetadata");
    assert_eq!(rig.fake.seen()[0].path, "/v1beta/models/fake-model:generateContent");
}

#[tokio::test]
async fn a_per_minute_quota_rests_only_that_model_and_fails_over() {
    let rig = gemini(&[("a", 1), ("b", 1)]).await;
    rig.fake.script("key-a", [quota(PER_MINUTE_QUOTA, Some("37s"))]);
    let (outcome, events) = rig.ask("chat").await;
    assert!(finished(&outcome), "b answers: {:?}", outcome.end);
    assert_eq!(failovers(&events), [("a".to_string(), 429)], "a's 429 moved the chat to b");
    assert_eq!(rig.state_of("a").0, KeyState::Active, "the key itself does not cool");
    let status = rig.service.pool().status(&ProviderId::new("p"), rig.clock.now_ts()).unwrap();
    let model = status[0].budgets.iter().find(|b| b.scope == "fake-model").expect("the model's budget row");
    assert_eq!(model.cooling_until, Some(START + Duration::from_secs(37)), "the model rests for RetryInfo's delay");
}

#[tokio::test]
async fn a_per_day_quota_is_used_up_until_los_angeles_midnight_without_a_probe() {
    let rig = gemini(&[("a", 1)]).await;
    rig.fake.script("key-a", [quota(PER_DAY_QUOTA, Some("0s"))]);
    let (outcome, _) = rig.ask("chat").await;
    let CompletionError::NoAvailableKey(NoKey {
        why: NoKeyReason::Blocked(Unavailability::Blocked { keys, .. }), ..
    }) = error_of(&outcome)
    else {
        panic!("the only key's day is used up: {:?}", outcome.end);
    };
    // START is 2027-01-15T08:00:00Z, midnight PST: the day ends 24 hours later.
    let midnight = START + Duration::from_secs(24 * 3600);
    assert_eq!(keys[0].why, Blocker::UsedUpForTheDay { until: midnight }, "used up until the Pacific day ends");
    assert_eq!(rig.fake.seen().len(), 1, "no second request: the 0s delay is not believed");
    assert_eq!(rig.state_of("a").0, KeyState::Active, "not out of credit, nothing to probe");
    rig.clock.set(midnight);
    let (outcome, _) = rig.ask("chat").await;
    assert!(finished(&outcome), "at midnight the key serves the model again by itself: {:?}", outcome.end);
}

#[tokio::test]
async fn an_invalid_keys_400_disables_it_and_fails_over() {
    let rig = gemini(&[("a", 1), ("b", 1)]).await;
    rig.fake.always("key-a", Reply::InvalidKey); // refused for its model list too
    let (outcome, events) = rig.ask("chat").await;
    assert!(finished(&outcome), "b answers: {:?}", outcome.end);
    assert_eq!(failovers(&events), [("a".to_string(), 400)], "a's 400 API_KEY_INVALID is a failover");
    assert_eq!(rig.keys.disabled.lock().unwrap().clone(), [("id-a".to_string(), 400)], "a is disabled, for HTTP 400");
}

#[tokio::test]
async fn any_other_400_is_the_requests_fault() {
    let rig = gemini(&[("a", 1), ("b", 1)]).await;
    rig.fake.script("key-a", [Reply::status(400)]);
    let (outcome, events) = rig.ask("chat").await;
    assert!(matches!(error_of(&outcome), CompletionError::Provider(f) if f.status == 400), "the 400 goes back");
    assert!(failovers(&events).is_empty(), "no other key cures a bad request");
    assert_eq!(rig.state_of("a").0, KeyState::Active, "and the key is fine");
}

#[tokio::test]
async fn an_overloaded_model_rests_the_key_briefly_and_fails_over() {
    for status in [503, 500] {
        let rig = gemini(&[("a", 1), ("b", 1)]).await;
        rig.fake.script("key-a", [Reply::status(status)]);
        let (outcome, events) = rig.ask("chat").await;
        assert!(finished(&outcome), "{status}: b answers");
        assert_eq!(failovers(&events), [("a".to_string(), status)], "{status} is a failover, as a 529");
        assert_eq!(rig.state_of("a").0, KeyState::Cooling, "{status} rests the key");
    }
}

#[tokio::test]
async fn the_billing_words_of_a_429_are_a_rate_limit_not_an_empty_account() {
    let rig = gemini(&[("a", 1), ("b", 1)]).await;
    rig.fake.script("key-a", [Reply::QuotaExceeded]);
    rig.ask("chat").await;
    assert_eq!(rig.state_of("a").0, KeyState::Cooling, "\"check your plan and billing details\" rests the key");
}

#[tokio::test]
async fn safety_blocks_end_the_attempt_as_blocked() {
    let rig = gemini(&[("a", 1), ("b", 1)]).await;
    rig.fake.script("key-a", [Reply::Blocked { chunks_before: vec![], prompt: true }]);
    let (outcome, events) = rig.ask("chat").await;
    assert!(matches!(error_of(&outcome), CompletionError::Network(Breakage::PromptBlocked)), "{:?}", outcome.end);
    assert!(failovers(&events).is_empty(), "another key would be blocked the same way");
    rig.fake.script("key-a", [Reply::Blocked { chunks_before: vec!["Once".into()], prompt: false }]);
    let (outcome, _) = rig.ask("chat").await;
    assert_eq!(outcome.text, "Once", "the text shown before the block stands");
    assert!(
        matches!(error_of(&outcome), CompletionError::Interrupted(Interruption::Broken(Breakage::ReplyBlocked))),
        "the reply was stopped by the filter: {:?}",
        outcome.end
    );
    assert_eq!(rig.state_of("a").0, KeyState::Active, "a block is nothing to the pool");
}

#[tokio::test]
async fn a_stream_that_ends_without_a_finish_reason_is_cut_off() {
    let rig = gemini(&[("a", 1)]).await;
    rig.fake.script("key-a", [Reply::Unfinished { chunks: vec!["Half".into()] }]);
    let (outcome, _) = rig.ask("chat").await;
    assert!(
        matches!(error_of(&outcome), CompletionError::Interrupted(Interruption::Broken(Breakage::EndedEarly))),
        "no finishReason: the reply is not complete: {:?}",
        outcome.end
    );
}

#[tokio::test]
async fn an_error_inside_the_stream_is_the_refusal_it_names() {
    let rig = gemini(&[("a", 1), ("b", 1)]).await;
    let error =
        Reply::StreamError { chunks_before: vec![], error_type: "rate_limit_error".into(), message: "slow".into() };
    rig.fake.script("key-a", [error]);
    let (outcome, events) = rig.ask("chat").await;
    assert!(finished(&outcome), "b answers: {:?}", outcome.end);
    assert_eq!(failovers(&events), [("a".to_string(), 429)], "the event's code 429 is a rate limit");
}

#[tokio::test]
async fn models_are_listed_across_pages_without_their_prefix_and_only_if_they_generate() {
    let rig = gemini(&[("a", 1)]).await;
    let many: Vec<String> = (0..1001).map(|i| format!("gemini-{i:04}")).collect();
    rig.fake.models(&many.iter().map(String::as_str).collect::<Vec<_>>());
    let endpoint = rig.request("chat", false).endpoint;
    let listed = rig.service.list_models(&endpoint, Some(&Secret::new("key-a"))).await.expect("a list");
    assert_eq!(listed, many, "1001 models over two pages of 1000, the embedding model left out");
    let pages: Vec<String> = rig.fake.seen().iter().map(|s| s.key.clone()).collect();
    assert_eq!(pages, ["key-a", "key-a"], "two pages, each with the key in its header");
}

/// Two keys of one project that allows one request per 10 s per model (within the 20 s a
/// request may wait), the second request refused.
async fn one_project(grouped: bool) -> (Rig, CompletionOutcome) {
    let rig = gemini(&[("a", 1), ("b", 1)]).await;
    rig.fake.project("key-a", "proj");
    rig.fake.project("key-b", "proj");
    rig.fake.project_limit("proj", ProjectLimit { requests: 1, window_ms: 10_000, per_day: None });
    if grouped {
        rig.set_group("a", "proj");
        rig.set_group("b", "proj");
    }
    let (first, _) = rig.ask("first").await;
    assert!(finished(&first), "the project's one request of the minute");
    let (second, _) = rig.ask("second").await;
    (rig, second)
}

#[tokio::test]
async fn keys_of_one_quota_group_share_one_refusal() {
    let (rig, outcome) = one_project(true).await;
    assert_eq!(rig.fake.refused(), 1, "one refusal rests the project: b is not asked in vain");
    assert!(finished(&outcome), "the request waited for the project's minute and was answered: {:?}", outcome.end);
    let (ungrouped, _) = one_project(false).await;
    assert_eq!(ungrouped.fake.refused(), 2, "without the group, each key of the project is refused in turn");
}
