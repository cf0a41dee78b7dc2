//! The completion service against the fake provider on loopback: streaming, stickiness,
//! failover on 429/529/401/403, errors inside streams, cut-off replies, cancel, and the
//! `no_available_key` messages. Time is a manual clock; nothing sleeps.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use keypool::{
    DisableError, DisableReason, KeyDisabler, KeyEntry, KeyId, KeyLoader, KeyPool, KeyState, LoadError, ManualClock,
    MapResolver, PoolConfig, ProviderId, Secret, SessionId, Timestamp,
};
use keypool_fake_provider::{FakeProvider, Reply};
use keypool_llm::{
    CancellationToken, ChatMessage, CompletionError, CompletionEvent, CompletionOutcome, CompletionRequest,
    CompletionService, ProviderEndpoint, ProviderKind, Role, StopReason,
};

const START: Timestamp = Timestamp::from_millis(1_800_000_000_000);

/// Keys held in memory, as the store would hold them; disabling flips `enabled`.
#[derive(Default)]
struct Keys {
    entries: Mutex<Vec<KeyEntry>>,
    disabled: Mutex<Vec<(String, u16)>>,
}

impl KeyLoader for Keys {
    fn load(&self, provider: &ProviderId) -> Result<Vec<KeyEntry>, LoadError> {
        Ok(self.entries.lock().unwrap().iter().filter(|e| &e.provider_id == provider).cloned().collect())
    }
}

impl KeyDisabler for Keys {
    fn disable(&self, key: &KeyId, _: &ProviderId, reason: DisableReason, _: Timestamp) -> Result<(), DisableError> {
        self.disabled.lock().unwrap().push((key.to_string(), reason.status()));
        for entry in self.entries.lock().unwrap().iter_mut().filter(|e| &e.id == key) {
            entry.enabled = false;
        }
        Ok(())
    }
}

struct Rig {
    fake: FakeProvider,
    keys: Arc<Keys>,
    clock: Arc<ManualClock>,
    service: CompletionService,
    kind: ProviderKind,
    provider_key: Option<Secret>,
}

impl Rig {
    /// A provider "p" of `kind` with one pooled key per `(label, weight)`; each key's value is
    /// `key-<label>`, so the fake's log shows which key was used.
    async fn new(kind: ProviderKind, keys: &[(&str, u32)]) -> Rig {
        Rig::with_env(kind, keys, MapResolver::new()).await
    }

    async fn with_env(kind: ProviderKind, keys: &[(&str, u32)], env: MapResolver) -> Rig {
        let fake = FakeProvider::start().await;
        let store = Arc::new(Keys::default());
        for (i, (label, weight)) in keys.iter().enumerate() {
            let value = if label.starts_with('$') { label.to_string() } else { format!("key-{label}") };
            store.entries.lock().unwrap().push(KeyEntry {
                id: KeyId::new(format!("id-{label}")),
                provider_id: ProviderId::new("p"),
                label: Some(label.to_string()),
                api_key: Secret::new(value),
                enabled: true,
                weight: *weight,
                sort_order: i as i64,
                created_at: START,
            });
        }
        let clock = Arc::new(ManualClock::new(START));
        let resolver = Arc::new(env);
        let pool = Arc::new(KeyPool::new(PoolConfig::default(), store.clone(), store.clone(), resolver.clone()));
        let service = CompletionService::new(pool, clock.clone(), resolver);
        Rig { fake, keys: store, clock, service, kind, provider_key: None }
    }

    fn request(&self, session: &str, stream: bool) -> CompletionRequest {
        let base_url = match self.kind {
            ProviderKind::Openai => format!("{}/v1", self.fake.url()),
            ProviderKind::Anthropic => self.fake.url(),
        };
        CompletionRequest {
            session: SessionId::new(session),
            endpoint: ProviderEndpoint {
                id: ProviderId::new("p"),
                name: "Fake".into(),
                kind: self.kind,
                base_url,
                provider_key: self.provider_key.clone(),
            },
            model: "fake-model".into(),
            messages: vec![ChatMessage { role: Role::User, content: "hello".into() }],
            max_tokens: 256,
            stream,
        }
    }

    async fn ask(&self, session: &str) -> (CompletionOutcome, Vec<CompletionEvent>) {
        self.ask_with(self.request(session, true), &CancellationToken::new(), |_, _| {}).await
    }

    async fn ask_with(
        &self,
        request: CompletionRequest,
        cancel: &CancellationToken,
        mut on: impl FnMut(&CompletionEvent, &CancellationToken) + Send,
    ) -> (CompletionOutcome, Vec<CompletionEvent>) {
        let mut events = Vec::new();
        let outcome = self
            .service
            .complete(
                &request,
                &mut |event| {
                    on(&event, cancel);
                    events.push(event);
                },
                cancel,
            )
            .await;
        (outcome, events)
    }

    fn state_of(&self, label: &str) -> (KeyState, Option<Timestamp>) {
        let status = self.service.pool().status(&ProviderId::new("p"), self.clock.now_ts()).unwrap();
        let key = status.iter().find(|k| k.label.as_deref() == Some(label)).expect("key exists");
        (key.state, key.cooling_until)
    }
}

trait NowTs {
    fn now_ts(&self) -> Timestamp;
}
impl NowTs for ManualClock {
    fn now_ts(&self) -> Timestamp {
        keypool::Clock::now(self)
    }
}

fn finished(outcome: &CompletionOutcome) -> bool {
    matches!(outcome.end, StopReason::Finished)
}

fn error_of(outcome: &CompletionOutcome) -> &CompletionError {
    match &outcome.end {
        StopReason::Failed(error) => error,
        other => panic!("expected a failure, got {other:?}"),
    }
}

fn failovers(events: &[CompletionEvent]) -> Vec<(String, u16)> {
    events
        .iter()
        .filter_map(|e| match e {
            CompletionEvent::Failover { key_label, status, .. } => Some((key_label.clone(), *status)),
            _ => None,
        })
        .collect()
}

mod streaming {
    use super::*;

    #[tokio::test]
    async fn openai_reply_streams_in_pieces() {
        let rig = Rig::new(ProviderKind::Openai, &[("a", 1)]).await;
        rig.fake.script("key-a", [Reply::text(&["Hel", "lo", "!"])]);
        let (outcome, events) = rig.ask("chat").await;
        assert!(finished(&outcome), "the reply completes: {:?}", outcome.end);
        assert_eq!(outcome.text, "Hello!", "the pieces join into the reply");
        let deltas: Vec<_> = events.iter().filter(|e| matches!(e, CompletionEvent::Delta { .. })).collect();
        assert_eq!(deltas.len(), 3, "each piece arrives as its own event");
        assert_eq!(outcome.key_label.as_deref(), Some("a"), "the answering key is named by its label");
        assert_eq!(rig.fake.seen()[0].path, "/v1/chat/completions", "OpenAI's path is used");
        assert!(rig.fake.seen()[0].stream, "the request asked for a stream");
    }

    #[tokio::test]
    async fn anthropic_reply_streams_in_pieces() {
        let rig = Rig::new(ProviderKind::Anthropic, &[("a", 1)]).await;
        rig.fake.script("key-a", [Reply::text(&["Bonjour", " !"])]);
        let (outcome, _) = rig.ask("chat").await;
        assert!(finished(&outcome), "the reply completes: {:?}", outcome.end);
        assert_eq!(outcome.text, "Bonjour !", "Anthropic's deltas join into the reply");
        assert_eq!(rig.fake.seen()[0].path, "/v1/messages", "Anthropic's path is used");
    }

    #[tokio::test]
    async fn whole_reply_without_streaming() {
        for kind in [ProviderKind::Openai, ProviderKind::Anthropic] {
            let rig = Rig::new(kind, &[("a", 1)]).await;
            rig.fake.script("key-a", [Reply::text(&["all ", "at once"])]);
            let (outcome, _) =
                rig.ask_with(rig.request("chat", false), &CancellationToken::new(), |_, _| {}).await;
            assert!(finished(&outcome), "{kind:?}: the reply completes: {:?}", outcome.end);
            assert_eq!(outcome.text, "all at once", "{kind:?}: the whole reply is read");
            assert!(!rig.fake.seen()[0].stream, "{kind:?}: no stream was asked for");
        }
    }

    #[tokio::test]
    async fn success_clears_the_keys_failure_streak() {
        let rig = Rig::new(ProviderKind::Openai, &[("a", 1)]).await;
        rig.fake.script("key-a", [Reply::status(429)]);
        rig.ask("one").await;
        rig.clock.advance(Duration::from_secs(61));
        let (outcome, _) = rig.ask("two").await;
        assert!(finished(&outcome), "the cooled-down key answers again");
        let status = rig.service.pool().status(&ProviderId::new("p"), rig.clock.now_ts()).unwrap();
        assert_eq!(status[0].consecutive_errors, 0, "a success clears the failure streak");
    }
}

mod affinity {
    use super::*;

    #[tokio::test]
    async fn a_chat_stays_on_its_key_and_chats_spread_by_weight() {
        let rig = Rig::new(ProviderKind::Openai, &[("a", 1), ("b", 1)]).await;
        for _ in 0..3 {
            rig.ask("chat-1").await;
        }
        rig.ask("chat-2").await;
        assert_eq!(rig.fake.keys_used(), ["key-a", "key-a", "key-a", "key-b"], "chat-1 stays on a; chat-2 gets b");
    }

    #[tokio::test]
    async fn a_chat_moves_when_its_key_is_rate_limited_and_stays_on_the_new_key() {
        let rig = Rig::new(ProviderKind::Openai, &[("a", 1), ("b", 1)]).await;
        rig.ask("chat").await;
        rig.fake.script("key-a", [Reply::status(429)]);
        let (outcome, events) = rig.ask("chat").await;
        assert!(finished(&outcome), "the second key answers");
        assert_eq!(outcome.key_label.as_deref(), Some("b"), "the chat failed over to b");
        let rebound = events.iter().any(|e| matches!(e, CompletionEvent::KeySelected { rebound: true, .. }));
        assert!(rebound, "the move is flagged so the page can say the prompt cache was reset: {events:?}");
        rig.clock.advance(Duration::from_secs(120));
        rig.ask("chat").await;
        assert_eq!(rig.fake.keys_used().last().unwrap(), "key-b", "once moved, the chat stays on b");
    }

    #[tokio::test]
    async fn released_chat_gets_a_fresh_selection() {
        let rig = Rig::new(ProviderKind::Openai, &[("a", 1), ("b", 1)]).await;
        rig.ask("chat").await;
        rig.service.pool().release_session(&SessionId::new("chat"));
        rig.ask("chat").await;
        assert_eq!(rig.fake.keys_used(), ["key-a", "key-b"], "after release the round-robin picks the next key");
    }
}

mod failover {
    use super::*;

    #[tokio::test]
    async fn rate_limit_cools_the_key_and_retries_at_once_on_the_next() {
        let rig = Rig::new(ProviderKind::Openai, &[("a", 1), ("b", 1)]).await;
        rig.fake.script("key-a", [Reply::status(429)]);
        let (outcome, events) = rig.ask("chat").await;
        assert!(finished(&outcome), "b answers after a's 429: {:?}", outcome.end);
        assert_eq!(outcome.attempts, 2, "two requests went upstream");
        assert_eq!(failovers(&events), [("a".to_string(), 429)], "the page is told about the failover");
        assert_eq!(rig.state_of("a"), (KeyState::Cooling, Some(START + Duration::from_secs(60))), "60 s backoff");
    }

    #[tokio::test]
    async fn announced_waits_set_the_cooldown() {
        let cases: [(&[(&str, &str)], Duration); 3] = [
            (&[("retry-after", "7")], Duration::from_secs(7)),
            (&[("retry-after-ms", "2500")], Duration::from_millis(2500)),
            (&[("x-ratelimit-reset-requests", "1m30s")], Duration::from_secs(90)),
        ];
        for (headers, wait) in cases {
            let rig = Rig::new(ProviderKind::Openai, &[("a", 1), ("b", 1)]).await;
            rig.fake.script("key-a", [Reply::status_with(429, headers)]);
            rig.ask("chat").await;
            assert_eq!(rig.state_of("a"), (KeyState::Cooling, Some(START + wait)), "{headers:?} sets the cooldown");
        }
    }

    #[tokio::test]
    async fn anthropic_reset_header_sets_the_cooldown() {
        let rig = Rig::new(ProviderKind::Anthropic, &[("a", 1), ("b", 1)]).await;
        let reset = humantime_like(START + Duration::from_secs(42));
        rig.fake.script("key-a", [Reply::status_with(429, &[("anthropic-ratelimit-requests-reset", &reset)])]);
        rig.ask("chat").await;
        assert_eq!(rig.state_of("a"), (KeyState::Cooling, Some(START + Duration::from_secs(42))), "reset instant");
    }

    fn humantime_like(at: Timestamp) -> String {
        // RFC 3339 in UTC, as Anthropic sends it; Timestamp's Display is exactly that.
        at.to_string()
    }

    #[tokio::test]
    async fn overloaded_529_cools_like_429() {
        let rig = Rig::new(ProviderKind::Anthropic, &[("a", 1), ("b", 1)]).await;
        rig.fake.script("key-a", [Reply::status(529)]);
        let (outcome, _) = rig.ask("chat").await;
        assert!(finished(&outcome), "b answers");
        assert_eq!(rig.state_of("a").0, KeyState::Cooling, "529 cools the key");
    }

    #[tokio::test]
    async fn auth_failures_disable_the_key_and_fail_over() {
        for status in [401, 403] {
            let rig = Rig::new(ProviderKind::Openai, &[("a", 1), ("b", 1)]).await;
            rig.fake.script("key-a", [Reply::status(status)]);
            let (outcome, events) = rig.ask("chat").await;
            assert!(finished(&outcome), "{status}: b answers");
            assert_eq!(failovers(&events), [("a".to_string(), status)], "{status}: one failover");
            assert_eq!(*rig.keys.disabled.lock().unwrap(), [("id-a".to_string(), status)], "{status}: persisted once");
            assert_eq!(rig.state_of("a").0, KeyState::Disabled, "{status}: shown disabled");
            rig.ask("other").await;
            assert_eq!(rig.fake.keys_used().iter().filter(|k| *k == "key-a").count(), 1, "{status}: a is never used again");
        }
    }

    #[tokio::test]
    async fn error_event_before_the_first_token_counts_as_the_matching_failure() {
        let rig = Rig::new(ProviderKind::Anthropic, &[("a", 1), ("b", 1)]).await;
        rig.fake.script(
            "key-a",
            [Reply::StreamError { chunks_before: vec![], error_type: "overloaded_error".into(), message: "Overloaded".into() }],
        );
        let (outcome, events) = rig.ask("chat").await;
        assert!(finished(&outcome), "b answers after a's in-stream overload: {:?}", outcome.end);
        assert_eq!(failovers(&events), [("a".to_string(), 529)], "overloaded_error is a 529");
        assert_eq!(rig.state_of("a").0, KeyState::Cooling, "and cools the key");

        let rig = Rig::new(ProviderKind::Openai, &[("a", 1), ("b", 1)]).await;
        rig.fake.script(
            "key-a",
            [Reply::StreamError { chunks_before: vec![], error_type: "authentication_error".into(), message: "bad key".into() }],
        );
        let (outcome, _) = rig.ask("chat").await;
        assert!(finished(&outcome), "b answers after a's in-stream auth error");
        assert_eq!(rig.state_of("a").0, KeyState::Disabled, "an in-stream auth error disables the key");
    }

    #[tokio::test]
    async fn failure_after_text_ends_the_reply_without_repeating_it() {
        let rig = Rig::new(ProviderKind::Openai, &[("a", 1), ("b", 1)]).await;
        rig.fake.script("key-a", [Reply::Drop { chunks_before: vec!["Partial".into(), " answer".into()] }]);
        let (outcome, events) = rig.ask("chat").await;
        assert!(matches!(error_of(&outcome), CompletionError::Interrupted(_)), "a cut-off reply is an interruption");
        assert_eq!(outcome.text, "Partial answer", "the text so far stands");
        assert_eq!(rig.fake.keys_used(), ["key-a"], "no retry, so no text is sent twice");
        assert!(failovers(&events).is_empty(), "no failover after text");

        let rig = Rig::new(ProviderKind::Anthropic, &[("a", 1), ("b", 1)]).await;
        rig.fake.script(
            "key-a",
            [Reply::StreamError { chunks_before: vec!["Half".into()], error_type: "overloaded_error".into(), message: "Overloaded".into() }],
        );
        let (outcome, _) = rig.ask("chat").await;
        assert!(matches!(error_of(&outcome), CompletionError::Interrupted(_)), "an error after text ends the reply");
        assert_eq!(outcome.text, "Half", "the text so far stands");
        assert_eq!(rig.fake.keys_used().len(), 1, "no retry after text");
        assert_eq!(rig.state_of("a").0, KeyState::Cooling, "the pool still learns of the overload");
    }

    #[tokio::test]
    async fn other_statuses_fail_without_touching_the_pool() {
        let rig = Rig::new(ProviderKind::Openai, &[("a", 1), ("b", 1)]).await;
        rig.fake.script("key-a", [Reply::status(500)]);
        let (outcome, _) = rig.ask("chat").await;
        match error_of(&outcome) {
            CompletionError::Provider(failure) => assert_eq!(failure.status, 500, "the status is reported"),
            other => panic!("expected a provider error, got {other:?}"),
        }
        assert_eq!(rig.fake.keys_used(), ["key-a"], "a 500 is not retried on another key");
        assert_eq!(rig.state_of("a").0, KeyState::Active, "and changes nothing in the pool");
    }

    #[tokio::test]
    async fn dropped_connection_before_text_is_a_network_error() {
        let rig = Rig::new(ProviderKind::Openai, &[("a", 1)]).await;
        rig.fake.script("key-a", [Reply::Drop { chunks_before: vec![] }]);
        let (outcome, _) = rig.ask("chat").await;
        assert!(matches!(error_of(&outcome), CompletionError::Network(_)), "got {:?}", outcome.end);
    }

    #[tokio::test]
    async fn each_key_is_tried_at_most_once_per_request() {
        let rig = Rig::new(ProviderKind::Openai, &[("a", 1), ("b", 2), ("c", 1)]).await;
        for key in ["key-a", "key-b", "key-c"] {
            rig.fake.always(key, Reply::status(429));
        }
        let (outcome, events) = rig.ask("chat").await;
        assert_eq!(outcome.attempts, 3, "three keys, three attempts");
        let mut used = rig.fake.keys_used();
        used.sort();
        assert_eq!(used, ["key-a", "key-b", "key-c"], "each key exactly once");
        assert_eq!(failovers(&events).len(), 3, "each refusal is reported");
        assert_eq!(error_of(&outcome).code(), "no_available_key", "then no key is left");
    }
}

mod no_available_key {
    use super::*;

    #[tokio::test]
    async fn all_cooling_says_when_the_first_frees_up() {
        let rig = Rig::new(ProviderKind::Openai, &[("a", 1), ("b", 1)]).await;
        rig.fake.always("key-a", Reply::status_with(429, &[("retry-after", "30")]));
        rig.fake.always("key-b", Reply::status_with(429, &[("retry-after", "90")]));
        let (outcome, _) = rig.ask("chat").await;
        let message = error_of(&outcome).to_string();
        assert!(message.contains("cooling down"), "says the keys are cooling: {message}");
        assert!(message.contains("in 30 s"), "says when the first frees up: {message}");

        let (outcome, _) = rig.ask("chat").await;
        assert_eq!(outcome.attempts, 0, "while all cool, nothing is sent upstream");
        assert!(error_of(&outcome).to_string().contains("cooling"), "the pool says why");
    }

    #[tokio::test]
    async fn all_disabled_names_the_keys_to_fix() {
        let rig = Rig::new(ProviderKind::Openai, &[("prod", 1), ("backup", 1)]).await;
        rig.fake.always("key-prod", Reply::status(401));
        rig.fake.always("key-backup", Reply::status(403));
        let (outcome, _) = rig.ask("chat").await;
        let message = error_of(&outcome).to_string();
        assert_eq!(error_of(&outcome).code(), "no_available_key", "the code is no_available_key");
        assert!(message.contains("disabled"), "says the keys are disabled: {message}");
        assert!(message.contains("prod") && message.contains("backup"), "names them: {message}");
    }

    #[tokio::test]
    async fn cooling_and_disabled_mixed_says_both() {
        let rig = Rig::new(ProviderKind::Openai, &[("fast", 1), ("revoked", 1)]).await;
        rig.fake.always("key-fast", Reply::status_with(429, &[("retry-after", "20")]));
        rig.fake.always("key-revoked", Reply::status(401));
        let (outcome, _) = rig.ask("chat").await;
        let message = error_of(&outcome).to_string();
        assert!(message.contains("in 20 s"), "says when the cooling key frees up: {message}");
        assert!(message.contains("\"revoked\""), "and names the disabled key to fix: {message}");
    }

    #[tokio::test]
    async fn empty_pool_without_provider_key_says_to_add_one() {
        let rig = Rig::new(ProviderKind::Openai, &[]).await;
        let (outcome, _) = rig.ask("chat").await;
        let message = error_of(&outcome).to_string();
        assert!(message.contains("no API keys"), "explains the empty pool: {message}");
        assert_eq!(outcome.attempts, 0, "nothing was sent");
    }
}

mod provider_level_key {
    use super::*;

    #[tokio::test]
    async fn is_used_while_the_pool_is_empty() {
        let mut rig = Rig::new(ProviderKind::Openai, &[]).await;
        rig.provider_key = Some(Secret::new("key-provider"));
        let (outcome, events) = rig.ask("chat").await;
        assert!(finished(&outcome), "the provider key answers");
        assert_eq!(rig.fake.keys_used(), ["key-provider"], "the provider-level key was sent");
        assert!(
            events.iter().any(|e| matches!(e, CompletionEvent::KeySelected { provider_level: true, .. })),
            "the page is told it is the provider key"
        );
    }

    #[tokio::test]
    async fn is_not_used_when_the_pool_has_entries() {
        let mut rig = Rig::new(ProviderKind::Openai, &[("a", 1)]).await;
        rig.provider_key = Some(Secret::new("key-provider"));
        rig.fake.always("key-a", Reply::status(429));
        let (outcome, _) = rig.ask("chat").await;
        assert_eq!(rig.fake.keys_used(), ["key-a"], "the pool takes priority, even when all its keys cool");
        assert_eq!(error_of(&outcome).code(), "no_available_key", "and its reason is reported");
    }
}

mod cancel {
    use super::*;

    #[tokio::test]
    async fn stop_ends_the_reply_with_the_text_so_far() {
        let rig = Rig::new(ProviderKind::Openai, &[("a", 1)]).await;
        rig.fake.script(
            "key-a",
            [Reply::Hold { chunks_before: vec!["First words".into()], gate: "never".into(), chunks_after: vec![] }],
        );
        let cancel = CancellationToken::new();
        let (outcome, _) = rig
            .ask_with(rig.request("chat", true), &cancel, |event, cancel| {
                if matches!(event, CompletionEvent::Delta { .. }) {
                    cancel.cancel();
                }
            })
            .await;
        assert!(matches!(outcome.end, StopReason::Cancelled), "the reply is stopped: {:?}", outcome.end);
        assert_eq!(outcome.text, "First words", "what was shown stands");
        assert_eq!(rig.state_of("a").0, KeyState::Active, "stopping is not the key's fault");
    }

    #[tokio::test]
    async fn held_stream_finishes_when_released() {
        let rig = Rig::new(ProviderKind::Anthropic, &[("a", 1)]).await;
        rig.fake.script(
            "key-a",
            [Reply::Hold { chunks_before: vec!["wait".into()], gate: "g".into(), chunks_after: vec![" done".into()] }],
        );
        let fake = rig.fake.clone();
        let (outcome, _) = rig
            .ask_with(rig.request("chat", true), &CancellationToken::new(), move |event, _| {
                if matches!(event, CompletionEvent::Delta { .. }) {
                    fake.release("g");
                }
            })
            .await;
        assert!(finished(&outcome), "the reply completes once released");
        assert_eq!(outcome.text, "wait done", "both halves arrive");
    }
}

mod env_keys {
    use super::*;

    #[tokio::test]
    async fn unset_variable_is_skipped_for_the_next_key() {
        let rig = Rig::with_env(ProviderKind::Openai, &[("$MISSING", 1), ("b", 1)], MapResolver::new()).await;
        let (outcome, _) = rig.ask("chat").await;
        assert!(finished(&outcome), "b answers: {:?}", outcome.end);
        assert_eq!(rig.fake.keys_used(), ["key-b"], "nothing is sent with an unresolved key");
    }

    #[tokio::test]
    async fn set_variable_is_sent_resolved() {
        let env = MapResolver::new().with("TEAM", "key-from-env");
        let rig = Rig::with_env(ProviderKind::Openai, &[("$TEAM", 1)], env).await;
        let (outcome, _) = rig.ask("chat").await;
        assert!(finished(&outcome), "the env key answers");
        assert_eq!(rig.fake.keys_used(), ["key-from-env"], "the variable's value is sent");
    }
}

mod probe {
    use super::*;

    #[tokio::test]
    async fn probe_reports_ok_or_the_providers_refusal_without_touching_bindings() {
        let rig = Rig::new(ProviderKind::Openai, &[("a", 1), ("b", 1)]).await;
        rig.ask("chat").await;
        let endpoint = rig.request("x", true).endpoint;
        let ok = rig.service.probe(&endpoint, &Secret::new("key-b")).await;
        assert!(ok.ok, "a working key probes fine: {ok:?}");
        rig.fake.script("key-b", [Reply::status(401)]);
        let refused = rig.service.probe(&endpoint, &Secret::new("key-b")).await;
        assert_eq!((refused.ok, refused.status), (false, Some(401)), "the refusal is reported: {refused:?}");
        assert!(refused.message.contains("401"), "with the provider's message: {refused:?}");
        assert_eq!(rig.state_of("b").0, KeyState::Active, "a probe changes nothing in the pool");
        rig.ask("chat").await;
        let used: HashMap<_, usize> = rig.fake.keys_used().into_iter().fold(HashMap::new(), |mut m, k| {
            *m.entry(k).or_default() += 1;
            m
        });
        assert_eq!(used.get("key-a"), Some(&2), "the chat stays on its key after probes");
    }
}
