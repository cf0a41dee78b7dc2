//! What another member of a team learned, merged: a later deadline wins and none keeps a key out
//! longer than this pool would on its own; other members' reservations spend the same windows;
//! a remote disable refuses the key once and an enable lifts it; a binding follows the session.

use std::time::Duration;

use keypool::*;
use proptest::prelude::*;

use crate::support::*;

const GPT: &str = "gpt-4o";
const YEARS: Duration = Duration::from_secs(10 * 365 * 24 * 3600);

impl Fixture {
    /// Merges `fact` about `key`, with the keys loaded first (as a member that serves them has).
    fn merge(&self, key: &str, fact: RemoteFact<'_>) -> Merged {
        self.pool.status(&self.openai, self.now()).expect("keys load");
        self.pool.merge(&KeyId::from(key), fact, self.now())
    }

    fn for_model(&self, scope: &str) -> Result<Selection, PoolError> {
        let demand = Demand { scope: Some(scope), tokens: 10 };
        self.pool.select(SelectionRequest::new(&self.openai).needing(demand), self.now())
    }
}

fn resting(until: Timestamp, streak: u32) -> RemoteFact<'static> {
    RemoteFact::Resting(Resting { until, streak, began_at: None })
}

fn window(remaining: u64, reset_at: Timestamp) -> Window {
    Window { limit: Some(5), remaining, reset_at }
}

#[test]
fn a_remote_rest_keeps_the_key_out_and_a_later_deadline_wins() {
    let f = Fixture::new(&[1, 1]);
    assert_eq!(f.merge("A", resting(T0 + secs(30), 1)), Merged::Changed, "a rest A did not know of");
    assert_eq!(f.picks(2), "B B", "A rests on this member too");
    assert_eq!(f.merge("A", resting(T0 + secs(10), 1)), Merged::Unchanged, "an earlier deadline changes nothing");
    assert_eq!(f.status_of("A").cooling_until, Some(T0 + secs(30)), "the later deadline stands");
    assert_eq!(f.merge("A", resting(T0 + secs(90), 2)), Merged::Changed, "a later one is taken");
    assert_eq!(f.status_of("A").cooling_until, Some(T0 + secs(90)), "until the later deadline");
    assert_eq!(f.status_of("A").consecutive_errors, 2, "with its streak");
    f.advance(secs(90));
    assert_eq!(f.picks(2), "A B", "A serves again when the remote rest ends");
}

#[test]
fn a_remote_rest_is_never_longer_than_the_local_cap_nor_already_over() {
    let f = Fixture::new(&[1]);
    assert_eq!(f.merge("A", resting(T0 - secs(1), 1)), Merged::Unchanged, "a rest already over is nothing");
    assert_eq!(f.merge("A", resting(T0 + YEARS, u32::MAX)), Merged::Changed, "a rest years ahead is taken…");
    let status = f.status_of("A");
    assert_eq!(status.cooling_until, Some(T0 + secs(900)), "…for the pool's longest cooldown, not years");
    assert!(status.consecutive_errors <= 32, "and a bounded streak: {}", status.consecutive_errors);
    let max = RemoteFact::Resting(Resting { until: Timestamp::from_millis(i64::MAX), streak: 1, began_at: None });
    assert_eq!(f.merge("A", max), Merged::Unchanged, "the end of time is no later than the cap already held");
    f.advance(secs(900));
    assert_eq!(f.pick(), "A", "after the cap the key serves");
}

#[test]
fn refusals_of_requests_in_flight_when_the_remote_rest_began_do_not_climb_the_ladder() {
    let f = Fixture::new(&[1]);
    let sent = f.now();
    f.advance(secs(1));
    let began = f.now();
    let fact = RemoteFact::Resting(Resting { until: began + secs(60), streak: 1, began_at: Some(began) });
    assert_eq!(f.merge("A", fact), Merged::Changed, "the other member's rest");
    f.advance(secs(1));
    let outcome = f.report_sent(&KeyId::from("A"), 429, None, Some(sent));
    assert_eq!(
        outcome,
        Some(FailureOutcome::Cooled { until: f.now() + secs(60) }),
        "a request sent before the team's rest began is of the same burst: the ladder's first step, not its second"
    );
    assert_eq!(f.status_of("A").consecutive_errors, 1, "the streak did not climb");
}

#[test]
fn other_members_reservations_spend_the_same_window_and_are_replaced_not_added() {
    let f = Fixture::new(&[1, 1]);
    let windows = Announced { requests: Some(window(2, T0 + secs(30))), tokens: None };
    assert_eq!(f.merge("A", RemoteFact::Windows { scope: GPT, announced: windows }), Merged::Changed, "A's window");
    let held = RemoteFact::Reserved { scope: GPT, requests: 2, tokens: 20 };
    assert_eq!(f.merge("A", held), Merged::Changed, "the others hold both requests A has left");
    let picks: Vec<String> = (0..3).map(|_| f.for_model(GPT).unwrap().key_id.to_string()).collect();
    assert_eq!(picks, ["B", "B", "B"], "A's window is taken by the team's requests in flight");
    assert_eq!(f.merge("A", held), Merged::Unchanged, "told again, the same count is no news");
    let one = RemoteFact::Reserved { scope: GPT, requests: 1, tokens: 10 };
    assert_eq!(f.merge("A", one), Merged::Changed, "one of them ended");
    let first = f.for_model(GPT).expect("a key serves");
    let second = f.for_model(GPT).expect("a key serves");
    assert!(
        [first.key_id.as_str(), second.key_id.as_str()].contains(&"A"),
        "one request of A's window is free again: the count replaced the one before"
    );
}

#[test]
fn other_members_reservations_lapse_unless_told_again() {
    let f = Fixture::new(&[1]);
    let windows = Announced { requests: Some(window(3, T0 + secs(600))), tokens: None };
    let _ = f.merge("A", RemoteFact::Windows { scope: GPT, announced: windows });
    let _ = f.merge("A", RemoteFact::Reserved { scope: GPT, requests: u64::MAX, tokens: u64::MAX });
    assert!(f.for_model(GPT).is_err(), "the team holds every request of the window");
    f.advance(REMOTE_HOLD_FOR_TEST);
    assert_eq!(f.for_model(GPT).expect("A serves").key_id.as_str(), "A", "a count not told again lapses");
}

const REMOTE_HOLD_FOR_TEST: Duration = keypool::team::REMOTE_HOLD;

#[test]
fn a_refilled_window_the_team_holds_in_flight_waits_for_a_request_to_end_not_for_time() {
    let f = Fixture::new(&[1]);
    let windows = Announced { requests: Some(window(3, T0 + secs(1))), tokens: None };
    let _ = f.merge("A", RemoteFact::Windows { scope: GPT, announced: windows });
    let _ = f.merge("A", RemoteFact::Reserved { scope: GPT, requests: 5, tokens: 0 });
    f.advance(secs(2));
    match f.for_model(GPT) {
        Err(PoolError::NoAvailableKey { reason: Unavailability::Blocked { keys, .. }, .. }) => assert_eq!(
            keys[0].why,
            Blocker::Busy,
            "the window refilled to its 5, all held by requests in flight: free when one ends, not at a time already past"
        ),
        other => panic!("the team's requests in flight fill the refilled window: {other:?}"),
    }
}

#[test]
fn remote_windows_and_spent_scopes_are_bounded_like_announced_ones() {
    let f = Fixture::new(&[1]);
    let stale = Announced { requests: Some(window(0, T0 - secs(1))), tokens: None };
    assert_eq!(f.merge("A", RemoteFact::Windows { scope: GPT, announced: stale }), Merged::Unchanged, "refilled");
    let far = Announced { requests: Some(window(0, T0 + YEARS)), tokens: None };
    assert_eq!(f.merge("A", RemoteFact::Windows { scope: GPT, announced: far }), Merged::Changed, "a spent window");
    assert!(f.for_model(GPT).is_err(), "A's window for the model is spent");
    f.advance(secs(900));
    assert!(f.for_model(GPT).is_ok(), "believed to refill within the longest cooldown, not in years");
    let spent = RemoteFact::Spent { scope: GPT, until: Timestamp::from_millis(i64::MAX) };
    assert_eq!(f.merge("A", spent), Merged::Changed, "a refusal said the model is spent");
    assert!(f.for_model(GPT).is_err(), "spent");
    f.advance(secs(900));
    assert!(f.for_model(GPT).is_ok(), "for at most the longest cooldown");
}

#[test]
fn a_remote_daily_quota_lasts_until_the_quota_day_ends_at_most() {
    let f = Fixture::new(&[1]);
    let used_up = RemoteFact::UsedUpForTheDay { scope: GPT, until: T0 + YEARS };
    assert_eq!(f.merge("A", used_up), Merged::Changed, "the model's day is used up");
    let day_end = pacific_day_end(T0);
    let budget = f.status_of("A").budgets.into_iter().find(|b| b.scope == GPT).expect("the model's budget");
    assert_eq!(budget.used_up_until, Some(day_end), "until the day ends where the quota is counted");
    f.clock.set(day_end);
    assert!(f.for_model(GPT).is_ok(), "the next day the model serves");
}

#[test]
fn a_remote_out_of_credit_key_is_probed_no_later_than_the_longest_step() {
    let f = Fixture::new(&[1, 1]);
    let out = RemoteFact::OutOfCredit { probe_at: T0 + YEARS, probes: u32::MAX };
    assert_eq!(f.merge("A", out), Merged::Changed, "out of credit on another member");
    let status = f.status_of("A");
    assert_eq!(status.state, KeyState::Exhausted, "out of rotation here too");
    assert_eq!(status.next_probe_at, Some(T0 + secs(6 * 3600)), "probed within the ladder's longest step");
    assert_eq!(f.picks(2), "B B", "only B serves");
    assert_eq!(f.merge("A", RemoteFact::Replenished), Merged::Changed, "a probe elsewhere found credit");
    assert_eq!(f.status_of("A").state, KeyState::Active, "A is back");
    assert_eq!(f.merge("A", RemoteFact::Replenished), Merged::Unchanged, "told twice, no news");
}

#[test]
fn a_remote_disable_refuses_the_key_once_and_an_enable_lifts_it() {
    let f = Fixture::new(&[1, 1]);
    let bogus = RemoteFact::Disabled { reason: DisableReason::AuthRejected { status: 500 } };
    assert_eq!(f.merge("A", bogus), Merged::Unchanged, "only a 401 or 403 disables a key");
    let disabled = RemoteFact::Disabled { reason: DisableReason::AuthRejected { status: 401 } };
    let reason = DisableReason::AuthRejected { status: 401 };
    assert_eq!(f.merge("A", disabled), Merged::Disabled { reason }, "the caller persists the disable once");
    assert_eq!(f.merge("A", disabled), Merged::Unchanged, "not twice");
    assert_eq!(f.status_of("A").state, KeyState::Disabled, "A is refused here too");
    assert_eq!(f.picks(2), "B B", "only B serves");
    assert_eq!(f.merge("A", RemoteFact::Enabled), Merged::Enabled, "enabled again elsewhere: lifted");
    assert_eq!(f.picks(2), "A B", "A serves again");
    assert_eq!(f.merge("A", RemoteFact::Enabled), Merged::Unchanged, "an enabled key needs nothing");
    f.toggle("A", false);
    assert_eq!(
        f.merge("A", RemoteFact::Enabled),
        Merged::Enabled,
        "a key off in the store is passed to the store, which knows why it is off"
    );
}

#[test]
fn facts_of_keys_not_loaded_are_not_merged() {
    let f = Fixture::new(&[1]);
    let fact = resting(T0 + secs(30), 1);
    assert_eq!(f.pool.merge(&KeyId::from("A"), fact, f.now()), Merged::Unchanged, "nothing is loaded yet");
    assert_eq!(f.merge("nope", fact), Merged::Unchanged, "a key the pool does not have");
    assert!(f.pool.facts(&KeyId::from("nope"), None, f.now()).is_none(), "has no facts");
}

#[test]
fn facts_say_the_deadlines_still_ahead_and_the_windows_kept() {
    let f = Fixture::new(&[1]);
    f.pool.status(&f.openai, f.now()).expect("keys load");
    let a = KeyId::from("A");
    let kind = FailureKind::RateLimited { retry_after: Some(secs(20)), announced: Announced::default(), quota: None };
    let failure = Failure { provider: &f.openai, key: &a, status: 429, kind, scope: Some(GPT), sent_at: None };
    f.pool.report_answer(&a, Some("other"), &Announced { requests: Some(window(3, T0 + secs(5))), tokens: None });
    let _ = f.pool.report_failure(failure, f.now()).unwrap();
    let facts = f.pool.facts(&a, Some("other"), f.now()).expect("A is loaded");
    assert_eq!(facts.provider, f.openai, "the key's provider");
    assert_eq!(facts.resting, Some(Resting { until: T0 + secs(20), streak: 1, began_at: Some(T0) }), "the rest");
    let scope = facts.scope.expect("the scope's budget");
    assert_eq!(scope.requests, Some(window(3, T0 + secs(5))), "the window announced");
    f.advance(secs(20));
    let later = f.pool.facts(&a, Some("other"), f.now()).unwrap();
    assert_eq!(later.resting, None, "a rest that is over is not said");
    assert_eq!(later.scope.unwrap().requests, Some(window(3, T0 + secs(5))), "a refilled window still says its size");
}

#[test]
fn a_remote_binding_moves_the_session_and_a_new_one_is_made() {
    let f = Fixture::new(&[1, 1, 1]);
    let chat = SessionId::from("chat");
    assert_eq!(f.pick_for(&chat).key_id.as_str(), "A", "bound to A here");
    assert!(f.pool.merge_binding(&chat, &KeyId::from("C"), f.now()), "another member moved it to C");
    assert_eq!(f.pool.bound_key(&chat, f.now()), Some(KeyId::from("C")), "the binding follows");
    let next = f.pick_for(&chat);
    assert_eq!((next.key_id.as_str(), next.rebound), ("C", false), "served on C, as bound");
    assert!(!f.pool.merge_binding(&chat, &KeyId::from("C"), f.now()), "the same binding is no news");
    let other = SessionId::from("other");
    assert!(f.pool.merge_binding(&other, &KeyId::from("B"), f.now()), "a session this member never served");
    assert_eq!(f.pick_for(&other).key_id.as_str(), "B", "starts on the team's key");
    assert!(!f.pool.merge_binding(&other, &KeyId::from("nope"), f.now()), "a key the pool lacks binds nothing");
    f.advance(f.pool.binding_idle() + secs(1));
    assert_eq!(f.pool.bound_key(&chat, f.now()), None, "idle past the binding's life, none is live");
}

fn any_fact() -> impl Strategy<Value = (u8, i64, u64, u32)> {
    (0u8..9, any::<i64>(), any::<u64>(), any::<u32>())
}

proptest! {
    /// Whatever another member says, at any time, a key is out for no longer than this pool's own
    /// caps: after them it serves (unless it was disabled), and the pool never panics.
    #[test]
    fn no_remote_fact_keeps_a_key_out_past_the_local_caps(facts in proptest::collection::vec(any_fact(), 1..12)) {
        let f = Fixture::new(&[1]);
        for (kind, at, count, small) in facts {
            let until = Timestamp::from_millis(at);
            let window = Window { limit: Some(count), remaining: count / 2, reset_at: until };
            let fact = match kind {
                0 => RemoteFact::Resting(Resting { until, streak: small, began_at: Some(until) }),
                1 => RemoteFact::ScopeResting { scope: GPT, resting: Resting { until, streak: small, began_at: None } },
                2 => RemoteFact::Windows { scope: GPT, announced: Announced { requests: Some(window), tokens: Some(window) } },
                3 => RemoteFact::Spent { scope: GPT, until },
                4 => RemoteFact::UsedUpForTheDay { scope: GPT, until },
                5 => RemoteFact::Reserved { scope: GPT, requests: count, tokens: count },
                6 => RemoteFact::OutOfCredit { probe_at: until, probes: small },
                7 => RemoteFact::Replenished,
                _ => RemoteFact::Enabled,
            };
            let _ = f.merge("A", fact);
        }
        let status = f.status_of("A");
        prop_assert!(status.cooling_until.is_none_or(|until| until <= T0 + secs(900)), "cooling {:?}", status.cooling_until);
        prop_assert!(status.next_probe_at.is_none_or(|at| at <= T0 + secs(6 * 3600)), "probe {:?}", status.next_probe_at);
        for budget in &status.budgets {
            prop_assert!(budget.used_up_until.is_none_or(|until| until <= pacific_day_end(T0)), "day {:?}", budget.used_up_until);
        }
        // After the longest of the caps (the day's end, past the probe's step), the key serves.
        f.clock.set(pacific_day_end(T0).max(T0 + secs(6 * 3600)));
        f.pool.report_probe(&KeyId::from("A"), true, f.now());
        f.pool.sweep(f.now());
        prop_assert!(f.for_model(GPT).is_ok(), "the key serves after the caps: {:?}", f.status_of("A"));
    }
}
