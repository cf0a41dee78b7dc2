use std::time::Duration;

use keypool::{BlockedKey, Blocker, DisableReason, KeyId};

use super::*;

const NOW: Timestamp = Timestamp::from_millis(1_800_000_000_000);

fn at(secs: u64) -> Timestamp {
    NOW + Duration::from_secs(secs)
}

fn refusal(status: u16) -> Failure {
    Failure::new(status, format!("scripted {status}"))
}

fn key(name: &str, why: Blocker, tried: bool) -> BlockedKey {
    BlockedKey { id: KeyId::from(name), name: name.to_owned(), why, tried }
}

fn blocked(keys: Vec<BlockedKey>) -> Unavailability {
    Unavailability::Blocked { keys, first_free_at: None }
}

/// After an attempt: (what ended it, whether text was shown, what the pool did) → the step.
#[test]
fn after_an_attempt() {
    let (r429, r401, r402, r400) = (refusal(429), refusal(401), refusal(402), refusal(400));
    let cooled = Some(FailureOutcome::Cooled { until: at(60) });
    let spent = Some(FailureOutcome::Spent { until: at(2) });
    let disabled = Some(FailureOutcome::Disabled { reason: DisableReason::AuthRejected { status: 401 } });
    let exhausted = Some(FailureOutcome::Exhausted { probe_at: at(900) });
    let cut = |f: &Failure| GiveUp::CutOff(Interruption::Refused { status: f.status, message: f.message.clone() });
    let retry = |exclude| Step::Retry { exclude, failover: true };
    #[rustfmt::skip]
    let table: Vec<(End<'_>, bool, Option<FailureOutcome>, Step, &str)> = vec![
        (End::Answered, false, None, Step::Done, "an answer stands"),
        (End::Answered, true, None, Step::Done, "a streamed answer stands"),
        (End::Cancelled, true, None, Step::Stopped, "the user stopped it"),
        (End::Again, false, None, Step::Retry { exclude: false, failover: false }, "ask again at once, same key, no failover said"),
        (End::Refused(&r429), false, cooled, retry(false), "a cooled key stays a candidate: wait it out if allowed"),
        (End::Refused(&r429), false, spent, retry(false), "so does one whose model budget is spent"),
        (End::Refused(&r429), false, Some(FailureOutcome::ScopeCooled { until: at(37) }), retry(false), "or whose model rests a minute"),
        (End::Refused(&r429), false, Some(FailureOutcome::UsedUpForTheDay { until: at(9 * 3600) }), retry(false), "or whose model's day is used up: its blocker says so"),
        (End::Refused(&r401), false, disabled, retry(true), "a disabled key is out for the request"),
        (End::Refused(&r402), false, exhausted, retry(true), "so is one out of credit"),
        (End::Refused(&r401), false, Some(FailureOutcome::Unchanged), retry(true), "a key already refused is out too"),
        (End::Refused(&r400), false, None, Step::GiveUp(GiveUp::Refused(r400.clone())), "the request's own fault: no key cures it"),
        (End::Refused(&r429), false, None, Step::GiveUp(GiveUp::Refused(r429.clone())), "the provider-level key has no other to fail over to"),
        (End::Refused(&r429), true, cooled, Step::GiveUp(cut(&r429)), "after text a retry would repeat it"),
        (End::Refused(&r400), true, None, Step::GiveUp(cut(&r400)), "after text any refusal cuts the reply off"),
        (End::Broken(Breakage::Connect), false, None, Step::GiveUp(GiveUp::Unreachable(Breakage::Connect)), "no answer came"),
        (End::Broken(Breakage::Stream), true, None, Step::GiveUp(GiveUp::CutOff(Interruption::Broken(Breakage::Stream))), "broke off after text"),
    ];
    for (end, shown, outcome, expected, why) in table {
        assert_eq!(decide(Situation::Attempted { end, shown, outcome, keyless: false }), expected, "{why}");
    }
}

/// After an attempt sent without a key: a refusal for want of a key says the provider needs
/// one; anything else ends the request as it would with the provider-level key.
#[test]
fn after_an_attempt_without_a_key() {
    let (r401, r403, r429, r400) = (refusal(401), refusal(403), refusal(429), refusal(400));
    #[rustfmt::skip]
    let table: Vec<(End<'_>, bool, Step, &str)> = vec![
        (End::Answered, false, Step::Done, "a local server answers without a key"),
        (End::Refused(&r401), false, Step::GiveUp(GiveUp::NeedsKey(r401.clone())), "401: the provider wants a key"),
        (End::Refused(&r403), false, Step::GiveUp(GiveUp::NeedsKey(r403.clone())), "403 too"),
        (End::Refused(&r401), true, Step::GiveUp(GiveUp::CutOff(Interruption::Refused { status: 401, message: r401.message.clone() })), "after text it cuts the reply off"),
        (End::Refused(&r429), false, Step::GiveUp(GiveUp::Refused(r429.clone())), "a rate limit is the provider's answer: no key to fail over to"),
        (End::Refused(&r400), false, Step::GiveUp(GiveUp::Refused(r400.clone())), "the request's own fault"),
    ];
    for (end, shown, expected, why) in table {
        assert_eq!(decide(Situation::Attempted { end, shown, outcome: None, keyless: true }), expected, "{why}");
    }
    let error = GiveUp::NeedsKey(r401.clone()).into_error("Example", None);
    let CompletionError::NoAvailableKey(no_key) = error else { panic!("a keyless 401 ends with no key: {error:?}") };
    let expected = NoKey { provider: "Example".into(), why: NoKeyReason::Empty, last: Some((401, r401.message)) };
    assert_eq!(no_key, expected, "the request ends as one with no keys, naming what the provider said");
}

/// With no key free: (what stops each key, now, the deadline) → wait or give up.
#[test]
fn when_no_key_is_free() {
    let cooling = |secs| Blocker::Cooling { until: at(secs) };
    let spent = |secs| Blocker::Spent { until: at(secs) };
    let off = Blocker::Disabled { status: Some(401) };
    #[rustfmt::skip]
    let table: Vec<(Vec<BlockedKey>, Timestamp, Step, &str)> = vec![
        (vec![key("a", cooling(5), false), key("b", cooling(9), false)], at(20), Step::Wait { until: Some(at(5)) }, "the first to free up"),
        (vec![key("a", spent(3), false), key("b", off, false)], at(20), Step::Wait { until: Some(at(3)) }, "a spent window refills"),
        (vec![key("a", cooling(25), false)], at(20), Step::GiveUp(GiveUp::NoKey(blocked(vec![key("a", cooling(25), false)]))), "past the deadline"),
        (vec![key("a", cooling(20), false)], at(20), Step::Wait { until: Some(at(20)) }, "at the deadline still counts"),
        (vec![key("a", cooling(5), true)], at(20), Step::GiveUp(GiveUp::NoKey(blocked(vec![key("a", cooling(5), true)]))), "a key this request tried does not count"),
        (vec![key("a", Blocker::Busy, false)], at(20), Step::Wait { until: None }, "busy: wait for a request in flight to end"),
        (vec![key("a", Blocker::Busy, false)], NOW, Step::GiveUp(GiveUp::NoKey(blocked(vec![key("a", Blocker::Busy, false)]))), "busy with no time left"),
        (vec![key("a", off, false)], at(20), Step::GiveUp(GiveUp::NoKey(blocked(vec![key("a", off, false)]))), "nothing frees up by itself"),
    ];
    for (keys, deadline, expected, why) in table {
        let unavailable = blocked(keys);
        let step = decide(Situation::NoneLeft { why: &unavailable, now: NOW, deadline });
        assert_eq!(step, expected, "{why}");
    }
}
