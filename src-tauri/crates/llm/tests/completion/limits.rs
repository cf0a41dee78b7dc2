//! Rate limits avoided rather than suffered: the windows providers announce keep requests off a
//! spent key, requests wait (in simulated time) for a window to refill instead of failing, a
//! per-model 429 spends only that model, and out of credit is not a rate limit.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use crate::support::*;

fn two_limited_keys(rig: &Rig) {
    for key in ["key-a", "key-b"] {
        rig.fake.limit(key, RateLimit { requests: 5, window_ms: 2_000 });
    }
}

/// 40 chats at concurrency 4 over two keys of 5 requests per 2 s each: how many were answered,
/// and how many requests the provider refused. (Worker threads: a request selecting on another
/// thread while an answer is being reported is what some of these cases are about.)
async fn burst(kind: ProviderKind, clock: ProviderClock) -> (u32, u64, Duration) {
    let rig = Arc::new(Rig::new(kind, &[("a", 1), ("b", 1)]).await);
    two_limited_keys(&rig);
    rig.fake.provider_clock(clock);
    let semaphore = Arc::new(tokio::sync::Semaphore::new(4));
    let answered = Arc::new(AtomicU32::new(0));
    let mut tasks = Vec::new();
    for i in 0..40 {
        let (rig, semaphore, answered) = (rig.clone(), semaphore.clone(), answered.clone());
        tasks.push(tokio::spawn(async move {
            let _permit = semaphore.acquire().await.unwrap();
            let (outcome, _) = rig.ask(&format!("chat-{i}")).await;
            if finished(&outcome) {
                answered.fetch_add(1, Ordering::SeqCst);
            } else {
                eprintln!("DEBUG failed: {:?}", outcome.end);
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    (answered.load(Ordering::SeqCst), rig.fake.refused(), rig.clock.now_ts().saturating_duration_since(START))
}

/// Two keys of 5 requests per 2 s, 40 chats at concurrency 4: every chat answered and no request
/// refused, for both header styles. (An answer's windows reach the pool before the attempt's
/// reservation ends; the other way round, a request slipped in on a window thought full.)
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn forty_chats_over_two_limited_keys_all_answered() {
    for kind in [ProviderKind::Openai, ProviderKind::Anthropic] {
        let (answered, refused, waited) = burst(kind, ProviderClock::default()).await;
        assert_eq!(answered, 40, "{kind:?}: every chat is answered");
        assert_eq!(refused, 0, "{kind:?}: no request refused");
        assert!(
            waited >= Duration::from_secs(6),
            "{kind:?}: 40 requests at 10 per 2 s took simulated time: {waited:?}"
        );
    }
}

/// The same burst against resets announced in whole seconds (truncated, so up to a second early)
/// by a provider whose clock is ahead of ours or behind it: every chat answered, at most one
/// request refused, in both header styles (OpenAI's relative resets do not depend on the clock).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn whole_second_resets_of_a_provider_clock_ahead_or_behind_lose_no_chat() {
    for kind in [ProviderKind::Openai, ProviderKind::Anthropic] {
        for offset_ms in [-2_000, 0, 2_000] {
            let clock = ProviderClock { offset_ms, whole_second_resets: true, early_resets_ms: 0 };
            let (answered, refused, waited) = burst(kind, clock).await;
            assert_eq!(answered, 40, "{kind:?} offset {offset_ms} ms: every chat is answered");
            assert!(refused <= 1, "{kind:?} offset {offset_ms} ms: {refused} requests refused");
            assert!(waited <= Duration::from_secs(20), "{kind:?} offset {offset_ms} ms: waited {waited:?}");
        }
    }
}

/// A provider that announces its resets 1.5 s before its windows end: requests sent at a reset
/// Keypool believed are refused with a short `retry-after`. Those refusals of one burst rest the
/// keys for the second announced, not up the ladder, and the requests waiting for a key wait
/// instead of giving up, in both header styles.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn refusals_right_after_a_believed_reset_keep_the_waiting_requests_waiting() {
    for kind in [ProviderKind::Openai, ProviderKind::Anthropic] {
        let clock = ProviderClock { offset_ms: 0, whole_second_resets: false, early_resets_ms: 1_500 };
        let (answered, refused, waited) = burst(kind, clock).await;
        assert_eq!(answered, 40, "{kind:?}: every chat is answered ({refused} requests refused on the way)");
        assert!(refused > 0, "{kind:?}: the resets were early, so some requests were refused");
        assert!(waited <= Duration::from_secs(20), "{kind:?}: within the longest wait: {waited:?}");
    }
}

#[tokio::test]
async fn a_spent_key_is_skipped_without_a_refused_request() {
    let rig = Rig::new(ProviderKind::Openai, &[("a", 1), ("b", 1)]).await;
    rig.fake.limit("key-a", RateLimit { requests: 1, window_ms: 60_000 });
    let (first, _) = rig.ask("chat").await;
    assert!(finished(&first), "the first request goes to a and spends its window");
    let (second, events) = rig.ask("chat").await;
    assert!(finished(&second), "the chat goes on");
    assert_eq!(second.key_label.as_deref(), Some("b"), "on b: a said it has nothing left for this model");
    assert!(failovers(&events).is_empty(), "without a refusal");
    assert_eq!(rig.fake.refused(), 0, "the provider refused nothing");
}

#[tokio::test]
async fn a_request_waits_for_a_window_to_refill_and_says_so() {
    let rig = Rig::new(ProviderKind::Anthropic, &[("a", 1)]).await;
    rig.fake.limit("key-a", RateLimit { requests: 1, window_ms: 3_000 });
    assert!(finished(&rig.ask("chat").await.0), "the first spends the window");
    let (outcome, events) = rig.ask("chat").await;
    assert!(finished(&outcome), "the second waits and goes: {:?}", outcome.end);
    let waiting: Vec<&CompletionEvent> =
        events.iter().filter(|e| matches!(e, CompletionEvent::Waiting { .. })).collect();
    assert_eq!(waiting.len(), 1, "the chat is told it waits: {events:?}");
    let CompletionEvent::Waiting { until, deadline, now } = waiting[0] else { unreachable!() };
    assert_eq!(*until, Some(START + Duration::from_secs(3)), "until the window refills");
    assert_eq!(*deadline, START + Duration::from_secs(20), "never beyond max_wait");
    assert_eq!(*now, START, "with the clock for the countdown");
    assert_eq!(rig.fake.refused(), 0, "nothing was refused");
}

#[tokio::test]
async fn a_request_waiting_for_a_busy_key_can_be_stopped() {
    let rig = Rig::new(ProviderKind::Openai, &[("a", 1)]).await;
    rig.set_limits("a", UserLimits { rpm: None, max_concurrent: Some(1) });
    let holder = rig
        .service
        .pool()
        .select(SelectionRequest::new(&ProviderId::new("p")), rig.clock.now_ts())
        .expect("the only slot is taken by another request");
    let cancel = CancellationToken::new();
    let (outcome, events) = rig
        .ask_with(rig.request("chat", true), &cancel, |event, cancel| {
            if matches!(event, CompletionEvent::Waiting { until: None, .. }) {
                cancel.cancel(); // the user presses Stop while the chat waits
            }
        })
        .await;
    assert!(matches!(outcome.end, StopReason::Cancelled), "Stop ends the wait: {:?}", outcome.end);
    assert_eq!(outcome.attempts, 0, "nothing was sent");
    assert!(
        events.iter().any(|e| matches!(e, CompletionEvent::Waiting { until: None, .. })),
        "it said it waits for a request to end"
    );
    drop(holder);
    assert!(finished(&rig.ask("chat").await.0), "once the other request ends the key serves again");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

    /// However long keys rest and whatever max_wait is, a request never waits past max_wait:
    /// refused by both keys, it either waits for the first to free up within the bound and
    /// tries it again, or fails at once.
    #[test]
    fn waiting_never_exceeds_max_wait(rest_a in 1u64..40, rest_b in 1u64..40, max_wait in 0u64..30) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let config = PoolConfig { max_wait: Duration::from_secs(max_wait), ..PoolConfig::default() };
            let rig = Rig::build(ProviderKind::Openai, &[("a", 1), ("b", 1)], MapResolver::new(), config).await;
            for (key, rest) in [("key-a", rest_a), ("key-b", rest_b)] {
                rig.fake.script(key, [Reply::status_with(429, &[("retry-after", &rest.to_string())])]);
            }
            let before = rig.clock.now_ts();
            let (outcome, _) = rig.ask("chat").await;
            let waited = rig.clock.now_ts().saturating_duration_since(before);
            proptest::prop_assert!(waited <= Duration::from_secs(max_wait), "waited {waited:?} with max_wait {max_wait} s");
            let first_free = rest_a.min(rest_b);
            if first_free <= max_wait {
                proptest::prop_assert!(finished(&outcome), "a key frees up in {first_free} s ≤ {max_wait} s: wait and go");
                proptest::prop_assert_eq!(waited, Duration::from_secs(first_free), "exactly until it frees up");
                proptest::prop_assert_eq!(outcome.attempts, 3, "both refused, then the first free one again");
            } else {
                proptest::prop_assert_eq!(waited, Duration::ZERO, "beyond the bound: fail at once");
                proptest::prop_assert_eq!(error_of(&outcome).code(), "no_available_key");
            }
            Ok(())
        })?;
    }
}

/// A one-key pool loses no reply to a 429 it may wait out: the key is tried again once its
/// announced wait is over (the time counts from when the answer arrived).
#[tokio::test]
async fn a_refused_key_is_tried_again_after_its_wait() {
    let rig = Rig::new(ProviderKind::Openai, &[("only", 1)]).await;
    rig.fake.script("key-only", [Reply::status_with(429, &[("retry-after", "5")])]);
    let (outcome, events) = rig.ask("chat").await;
    assert!(finished(&outcome), "waited 5 s and went: {:?}", outcome.end);
    assert_eq!(outcome.attempts, 2, "the same key, twice");
    let waits: Vec<_> = events.iter().filter(|e| matches!(e, CompletionEvent::Waiting { .. })).collect();
    assert_eq!(waits.len(), 1, "it said it waits: {events:?}");
    assert_eq!(rig.fake.keys_used(), ["key-only", "key-only"], "and asked with the one key again");
}

#[tokio::test]
async fn a_per_model_429_spends_only_that_model() {
    let rig = Rig::new(ProviderKind::Openai, &[("a", 1), ("b", 1)]).await;
    rig.fake.script(
        "key-a",
        [Reply::status_with(
            429,
            &[
                ("x-ratelimit-limit-requests", "3"),
                ("x-ratelimit-remaining-requests", "0"),
                ("x-ratelimit-reset-requests", "30s"),
            ],
        )],
    );
    let (outcome, events) = rig.ask("chat").await;
    assert!(finished(&outcome), "b answers");
    assert_eq!(failovers(&events), [("a".to_owned(), 429)], "a was refused once");
    let (state, cooling_until) = rig.state_of("a");
    assert_eq!((state, cooling_until), (KeyState::Active, None), "a is spent for fake-model only, not cooling");
    // Two new chats on another model: one of them is a's turn (b served a's refused request, so
    // the pool's smooth order gives b the first).
    let mut served = Vec::new();
    for session in ["other", "another"] {
        let mut other_model = rig.request(session, true);
        other_model.model = "another-model".into();
        let (outcome, _) = rig.ask_with(other_model, &CancellationToken::new(), |_, _| {}).await;
        served.extend(outcome.key_label);
    }
    assert!(served.iter().any(|label| label == "a"), "another model still uses a: {served:?}");
}

#[tokio::test]
async fn out_of_credit_is_not_a_rate_limit() {
    for (kind, reply) in [
        (ProviderKind::Openai, Reply::QuotaExceeded),
        (ProviderKind::Openai, Reply::status(402)),
        (ProviderKind::Anthropic, Reply::QuotaExceeded),
    ] {
        let rig = Rig::new(kind, &[("broke", 1), ("funded", 1)]).await;
        rig.fake.always("key-broke", reply.clone());
        let (outcome, events) = rig.ask("chat").await;
        assert!(finished(&outcome), "{kind:?} {reply:?}: the other key answers");
        let reason = events.iter().find_map(|e| match e {
            CompletionEvent::Failover { reason, .. } => Some(*reason),
            _ => None,
        });
        assert_eq!(
            reason,
            Some(keypool::FailureKind::QuotaExhausted),
            "{kind:?} {reply:?}: failed over as out of credit"
        );
        let status = rig.service.pool().status(&ProviderId::new("p"), rig.clock.now_ts()).unwrap();
        let broke = status.iter().find(|k| k.label.as_deref() == Some("broke")).unwrap();
        assert_eq!(broke.state, KeyState::Exhausted, "{kind:?} {reply:?}: out of rotation, not cooling");
        assert_eq!(broke.cooling_until, None, "{kind:?} {reply:?}: no 60→900 s ladder");
        assert_eq!(broke.next_probe_at, Some(START + Duration::from_secs(15 * 60)), "{kind:?}: probed in 15 min");
    }
}
