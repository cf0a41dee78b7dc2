//! Prepaid keys: DeepSeek's, Moonshot's, SiliconFlow's and OpenRouter's balance reads, against
//! the fake taught each vendor's answer. A key with nothing left rests as out of credit and comes
//! back by itself when a read finds a top-up; a bad answer leaves the key as it was.

use std::time::Duration;

use keypool_fake_provider::openrouter::Credit;
use keypool_fake_provider::vendors::VendorBalance;
use keypool_llm::{BalanceFound, BalanceReading};

use crate::support::*;

async fn read(rig: &Rig, label: &str) -> BalanceReading {
    let endpoint = rig.request("x", true).endpoint;
    let key = KeyId::new(format!("id-{label}"));
    rig.service
        .read_balance(&endpoint, &key, &Secret::new(format!("key-{label}")))
        .await
        .expect("the kind reads balances")
}

fn next_probe_of(rig: &Rig, label: &str) -> Option<Timestamp> {
    let status = rig.service.pool().status(&ProviderId::new("p"), rig.clock.now_ts()).unwrap();
    status.iter().find(|k| k.label.as_deref() == Some(label)).and_then(|k| k.next_probe_at)
}

fn left(reading: &BalanceReading) -> (f64, String, bool) {
    match &reading.found {
        Ok(BalanceFound::Left(b)) => (b.amount, b.currency.clone(), b.usable),
        other => panic!("no balance: {other:?}"),
    }
}

#[tokio::test]
async fn each_vendor_s_balance_is_read_in_its_own_shape_and_currency() {
    for (kind, path, currency) in [
        (ProviderKind::Deepseek, "/user/balance", "USD"),
        (ProviderKind::Moonshot, "/v1/users/me/balance", "USD"),
        (ProviderKind::Siliconflow, "/v1/user/info", "USD"),
    ] {
        let rig = Rig::new(kind, &[("a", 1)]).await;
        rig.fake.balance("key-a", VendorBalance::of(12.5, "USD"));
        let reading = read(&rig, "a").await;
        assert_eq!(left(&reading), (12.5, currency.to_string(), true), "{kind:?}");
        let seen = rig.fake.seen();
        assert_eq!(
            (seen[0].path.as_str(), seen[0].key.as_str()),
            (path, "key-a"),
            "{kind:?}: its read, the key as bearer"
        );
    }
    let rig = Rig::new(ProviderKind::Deepseek, &[("a", 1)]).await;
    rig.fake.balance("key-a", VendorBalance::of(110.0, "CNY"));
    assert_eq!(left(&read(&rig, "a").await).1, "CNY", "DeepSeek names its currency");

    let rig = Rig::new(ProviderKind::Openrouter, &[("a", 1), ("b", 1)]).await;
    rig.fake.credit("key-a", Credit { limit: Some(20.0), usage: 5.0 });
    assert_eq!(left(&read(&rig, "a").await), (15.0, "USD".into(), true), "OpenRouter's limit left");
    assert_eq!(read(&rig, "b").await.found, Ok(BalanceFound::Unlimited), "a key without limit");

    let plain = Rig::new(ProviderKind::Openai, &[("a", 1)]).await;
    let endpoint = plain.request("x", true).endpoint;
    let none = plain.service.read_balance(&endpoint, &KeyId::new("id-a"), &Secret::new("key-a")).await;
    assert!(none.is_none(), "OpenAI-compatible services read no balance");
    assert!(plain.fake.seen().is_empty(), "and nothing was asked");
}

#[tokio::test]
async fn a_key_with_nothing_left_rests_and_a_top_up_brings_it_back_without_a_click() {
    let rig = Rig::new(ProviderKind::Deepseek, &[("a", 1), ("b", 1)]).await;
    rig.fake.balance("key-a", VendorBalance::of(0.0, "CNY"));
    assert!(!left(&read(&rig, "a").await).2, "nothing left: not usable");
    assert_eq!(rig.state_of("a").0, KeyState::Exhausted, "rests as out of credit, not disabled");
    for session in ["one", "two", "three"] {
        let (outcome, _) = rig.ask(session).await;
        assert!(finished(&outcome), "b answers every chat: {:?}", outcome.end);
    }
    let chats: Vec<String> =
        rig.fake.seen().iter().filter(|s| s.path.ends_with("chat/completions")).map(|s| s.key.clone()).collect();
    assert_eq!(chats, ["key-b"; 3], "none on a");

    rig.fake.balance("key-a", VendorBalance::of(50.0, "CNY"));
    let cached = read(&rig, "a").await;
    assert!(!left(&cached).2, "within a minute the last reading stands: no second read");
    assert_eq!(rig.fake.seen().iter().filter(|s| s.path == "/user/balance").count(), 1, "read once");

    rig.clock.advance(Duration::from_secs(61));
    assert_eq!(left(&read(&rig, "a").await), (50.0, "CNY".into(), true), "the top-up is read");
    assert_eq!(rig.state_of("a").0, KeyState::Active, "back in rotation by itself");
}

#[tokio::test]
async fn an_out_of_credit_key_read_again_still_empty_waits_longer() {
    let rig = Rig::new(ProviderKind::Moonshot, &[("a", 1), ("b", 1)]).await;
    rig.fake.balance("key-a", VendorBalance::of(-0.5, "USD"));
    read(&rig, "a").await;
    assert_eq!(rig.state_of("a").0, KeyState::Exhausted, "a debt is no credit");
    let first = next_probe_of(&rig, "a").expect("probed again later");
    rig.clock.advance(Duration::from_secs(61));
    read(&rig, "a").await;
    assert_eq!(rig.state_of("a").0, KeyState::Exhausted, "still resting");
    let second = next_probe_of(&rig, "a").expect("probed again later");
    assert!(second > first, "a failed read counts as a failed probe: the next waits longer ({first:?} → {second:?})");
}

#[tokio::test]
async fn bad_answers_leave_the_key_usable_and_say_why() {
    let rig = Rig::new(ProviderKind::Siliconflow, &[("a", 1)]).await;
    let bad = [
        "<html><body>Bad gateway</body></html>".to_string(),
        r#"{"code":20000,"data":{}}"#.to_string(),
        r#"{"code":20000,"data":{"totalBalance":"99999999999999999"}}"#.to_string(),
        r#"{"code":20000,"data":{"totalBalance":"lots"}}"#.to_string(),
    ];
    for body in bad {
        rig.fake.balance("key-a", VendorBalance { raw: Some(body.clone()), ..VendorBalance::of(0.0, "CNY") });
        let reading = read(&rig, "a").await;
        let problem = reading.found.expect_err("no balance in it");
        assert!(problem.message.starts_with("unreadable balance"), "{body}: {}", problem.message);
        assert_eq!(problem.status, Some(200));
        assert_eq!(rig.state_of("a").0, KeyState::Active, "{body}: the key stays usable");
        rig.clock.advance(Duration::from_secs(61));
    }
    rig.fake.always("key-a", Reply::Status { status: 500, headers: vec![], message: "upstream down key-a".into() });
    let problem = read(&rig, "a").await.found.expect_err("no answer");
    assert_eq!(problem.status, Some(500));
    assert!(!problem.message.contains("key-a"), "the key is masked in the provider's words: {}", problem.message);
    assert_eq!(rig.state_of("a").0, KeyState::Active);
}

#[tokio::test]
async fn a_402_from_deepseek_rests_the_key_as_out_of_credit_and_the_chat_goes_on() {
    let rig = Rig::new(ProviderKind::Deepseek, &[("a", 1), ("b", 1)]).await;
    rig.fake.always("key-a", Reply::Status { status: 402, headers: vec![], message: "Insufficient Balance".into() });
    let mut on_a = false;
    for session in ["s1", "s2", "s3", "s4"] {
        let (outcome, events) = rig.ask(session).await;
        assert!(finished(&outcome), "b answers: {:?}", outcome.end);
        on_a |= !failovers(&events).is_empty();
    }
    assert!(on_a, "some chat landed on a first");
    assert_eq!(rig.state_of("a").0, KeyState::Exhausted, "402: out of credit");
    assert!(rig.keys.disabled.lock().unwrap().is_empty(), "not disabled");
}
