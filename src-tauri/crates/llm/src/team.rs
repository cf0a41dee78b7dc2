//! The seam to a team: other members (desktops, server replicas) that share their pools' state.
//!
//! The completion service tells a [`TeamLink`] what its pool learns and hands out, beside telling
//! its [`crate::Recorder`] what must outlive the process; the link tells the other members, and
//! merges what they learned into the pool on its own (see `keypool-team`). Without a link (the
//! default) nothing of this runs.
//!
//! Invariant: the link never fails or stalls a request. The calls on a request's path
//! ([`TeamLink::binding`], [`TeamLink::hand_out`]) answer within a small bound whatever the team's
//! server does, and then the member decides alone; the others only hand something off.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use keypool::{Announced, FailureOutcome, KeyId, ProviderId, SessionId};

/// A future a link hands out.
pub type TeamFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Wakes the requests waiting for a key (the team freed room, or a key came back).
pub type Wake = Arc<dyn Fn() + Send + Sync>;

/// A key handed out for an attempt, as the team sees it.
#[derive(Clone, Copy, Debug)]
pub struct HandOut<'a> {
    pub provider: &'a ProviderId,
    pub key: &'a KeyId,
    /// The conversation it serves.
    pub session: &'a SessionId,
    /// The key the session was bound to (live) before this hand-out; another key means the
    /// binding is new, and the team must know it before the next request, wherever that goes.
    pub bound_before: Option<&'a KeyId>,
    /// The request's rate-limit scope (its model or model class).
    pub scope: &'a str,
    /// Its estimated input tokens.
    pub tokens: u32,
}

/// What the team says to a hand-out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Go (also whenever the team could not be asked in time).
    Admitted,
    /// The team's requests in flight already take what the key's window has left: the link has
    /// told the pool so, and the request selects again (another key, or a wait).
    Full,
}

/// A hand-out's share in the team's requests in flight: dropped when the attempt is over, which
/// tells the team the request ended, however it ended.
#[must_use = "dropping the hold ends the team's count of the request"]
pub struct TeamHold(#[allow(dead_code)] Option<Box<dyn Send + Sync>>);

impl TeamHold {
    /// A hold whose drop (of `inner`) ends the request's count.
    pub fn new(inner: impl Send + Sync + 'static) -> Self {
        TeamHold(Some(Box::new(inner)))
    }

    /// A hold of nothing.
    pub fn none() -> Self {
        TeamHold(None)
    }
}

impl std::fmt::Debug for TeamHold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TeamHold")
    }
}

/// What the pool learned from an attempt, for the team.
#[derive(Clone, Copy, Debug)]
pub enum Taught<'a> {
    /// The key answered; the answer announced these windows.
    Answer(&'a Announced),
    /// The provider refused the key, and the pool did this about it.
    Refusal(FailureOutcome),
}

/// The completion service's link to the other members of a team.
pub trait TeamLink: Send + Sync {
    /// Before a request's first selection, with `provider`'s keys loaded: the link takes in what
    /// the team said of keys it did not know yet, and, when this member has no live binding for
    /// `session` (`bound` is `None`: a conversation another member served), answers the key the
    /// team has it bound to. `None` when the team has none, or could not say in time.
    fn binding<'a>(
        &'a self,
        provider: &'a ProviderId,
        session: &'a SessionId,
        bound: Option<&'a KeyId>,
    ) -> TeamFuture<'a, Option<KeyId>>;

    /// An attempt starts with the key `hand_out` names: the team counts it among its requests in
    /// flight (until the returned hold is dropped), learns the session's binding, and, when a
    /// window the key's group announced could refuse it, says whether the team's traffic leaves
    /// room for it.
    fn hand_out<'a>(&'a self, hand_out: HandOut<'a>) -> TeamFuture<'a, (Admission, TeamHold)>;

    /// The pool learned `taught` from an attempt of `key` for `scope`: tell the team. Hands off;
    /// never waits.
    fn taught(&self, provider: &ProviderId, key: &KeyId, scope: &str, taught: Taught<'_>);

    /// The user enabled `key` again: the team lifts a provider's rejection of it everywhere.
    fn key_enabled(&self, key: &KeyId);

    /// A background probe of the out-of-credit `key` answered (`usable`: it has credit again).
    fn probed(&self, key: &KeyId, usable: bool);

    /// The service using the link: `wake` wakes its requests waiting for a key.
    fn attach(&self, wake: Wake);
}
