//! Coding plans: Z.ai's and MiniMax's window reads against the fake taught their answers, and
//! the refusal that names a window's reset (Zhipu's 1308/1310, any provider's "usage limit …
//! reset at"). A key whose window is used up rests until the reset, never disabled, and is back
//! by itself on time; a bad answer leaves it as it was.

use std::time::Duration;

use keypool_fake_provider::plans::PlanWindows;
use keypool_llm::{SpanUnit, WindowReading};

use crate::support::*;

async fn read(rig: &Rig, label: &str) -> WindowReading {
    let endpoint = rig.request("x", true).endpoint;
    let key = KeyId::new(format!("id-{label}"));
    rig.service
        .read_windows(&endpoint, &key, &Secret::new(format!("key-{label}")))
        .await
        .expect("the kind reads windows")
}

fn ms(rig: &Rig, ahead: Duration) -> i64 {
    rig.clock.now_ts().as_millis() + ahead.as_millis() as i64
}

#[tokio::test]
async fn zhipu_s_windows_are_read_with_the_key_alone_and_a_used_up_one_rests_the_key_until_its_reset() {
    let rig = Rig::new(ProviderKind::Zai, &[("a", 1), ("b", 1)]).await;
    let reset = ms(&rig, Duration::from_secs(3 * 3600));
    rig.fake.windows(
        "key-a",
        PlanWindows { five_hours_used: 1.0, five_hours_reset: Some(reset), week_used: 0.6, ..Default::default() },
    );
    rig.fake.windows("key-b", PlanWindows { five_hours_used: 0.32, week_used: 0.1, ..Default::default() });
    let reading = read(&rig, "b").await;
    let windows = reading.found.expect("b's windows");
    assert_eq!(
        windows.iter().map(|w| (w.span.count, w.span.unit)).collect::<Vec<_>>(),
        [(5, SpanUnit::Hour), (1, SpanUnit::Week)]
    );
    assert!((windows[0].used - 0.32).abs() < 1e-9);
    assert_eq!(rig.state_of("b").0, KeyState::Active, "b has window left");
    let seen = rig.fake.seen();
    assert_eq!(
        (seen[0].path.as_str(), seen[0].key.as_str()),
        ("/api/monitor/usage/quota/limit", "key-b"),
        "the key alone"
    );

    read(&rig, "a").await;
    assert_eq!(
        rig.state_of("a"),
        (KeyState::Cooling, Some(keypool::Timestamp::from_millis(reset))),
        "rests until the reset"
    );
    for session in ["one", "two", "three"] {
        let (outcome, _) = rig.ask(session).await;
        assert!(finished(&outcome), "b answers: {:?}", outcome.end);
    }
    let chats: Vec<String> =
        rig.fake.seen().iter().filter(|s| s.path.ends_with("messages")).map(|s| s.key.clone()).collect();
    assert_eq!(chats, ["key-b"; 3], "nothing goes to a while its window is used up");
    rig.clock.advance(Duration::from_secs(3 * 3600));
    rig.service.pool().sweep(rig.clock.now_ts());
    assert_eq!(rig.state_of("a").0, KeyState::Active, "back by itself at the reset");
    assert!(rig.keys.disabled.lock().unwrap().is_empty(), "never disabled");
}

#[tokio::test]
async fn minimax_s_remains_and_reads_at_most_once_a_minute() {
    let rig = Rig::new(ProviderKind::Minimax, &[("a", 1)]).await;
    rig.fake.windows("key-a", PlanWindows { five_hours_used: 0.2, ..Default::default() });
    let first = read(&rig, "a").await;
    let windows = first.found.clone().unwrap();
    assert_eq!((windows[0].span.count, windows[0].span.unit), (5, SpanUnit::Hour));
    assert!((windows[0].used - 0.2).abs() < 1e-9, "{windows:?}");
    rig.fake.windows("key-a", PlanWindows { five_hours_used: 0.9, ..Default::default() });
    assert_eq!(read(&rig, "a").await, first, "within a minute: the last reading, not a new read");
    assert_eq!(rig.fake.seen().len(), 1);
    rig.clock.advance(Duration::from_secs(61));
    let again = read(&rig, "a").await.found.unwrap();
    assert!((again[0].used - 0.9).abs() < 1e-9, "read again after a minute");
}

#[tokio::test]
async fn bad_window_answers_leave_the_key_usable_and_say_why() {
    let rig = Rig::new(ProviderKind::Zai, &[("a", 1)]).await;
    rig.fake.windows("key-a", PlanWindows { raw: Some("<html>502</html>".into()), ..Default::default() });
    let problem = read(&rig, "a").await.found.expect_err("no windows in HTML");
    assert_eq!(problem.message, "unreadable windows: not JSON");
    assert_eq!(rig.state_of("a").0, KeyState::Active);
    rig.clock.advance(Duration::from_secs(61));
    let years = ms(&rig, Duration::from_secs(3 * 365 * 24 * 3600));
    rig.fake
        .windows("key-a", PlanWindows { five_hours_used: 1.0, five_hours_reset: Some(years), ..Default::default() });
    let problem = read(&rig, "a").await.found.expect_err("a reset years ahead");
    assert!(problem.message.contains("years ahead"), "{}", problem.message);
    assert_eq!(rig.state_of("a").0, KeyState::Active, "a broken reset rests nothing");
    rig.clock.advance(Duration::from_secs(61));
    rig.fake.always("key-a", Reply::InvalidKey);
    let problem = read(&rig, "a").await.found.expect_err("refused");
    assert!(problem.message.contains("the provider says"), "{}", problem.message);
}

#[tokio::test]
async fn a_refusal_naming_the_window_s_reset_rests_the_key_until_then_and_the_chat_fails_over() {
    let rig = Rig::new(ProviderKind::Kimi, &[("a", 1), ("b", 1)]).await;
    let reset = keypool::Timestamp::from_millis(ms(&rig, Duration::from_secs(2 * 3600)));
    let text = format!(
        "Usage limit reached for 5 hour. Your limit will reset at {}",
        jiff::Timestamp::from_millisecond(reset.as_millis()).unwrap()
    );
    rig.fake.always(
        "key-a",
        Reply::Status { status: 429, headers: vec![("retry-after".into(), "30".into())], message: text },
    );
    let mut failed_over = false;
    for session in ["s1", "s2", "s3"] {
        let (outcome, events) = rig.ask(session).await;
        assert!(finished(&outcome), "b answers: {:?}", outcome.end);
        failed_over |= !failovers(&events).is_empty();
    }
    assert!(failed_over, "a chat met a first");
    assert_eq!(rig.state_of("a"), (KeyState::Cooling, Some(reset)), "until the reset it named, not the 30 s announced");
    rig.clock.advance(Duration::from_secs(2 * 3600));
    rig.service.pool().sweep(rig.clock.now_ts());
    assert_eq!(rig.state_of("a").0, KeyState::Active, "back on time");
}
