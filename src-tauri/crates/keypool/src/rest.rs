//! A rest after refusals, with its backoff ladder: the one state machine behind a quota group's
//! cooldown (all models) and a scope's (one model's per-minute quota).

use std::time::Duration;

use crate::config::PoolConfig;
use crate::team::{bounded, Resting, MAX_REMOTE_STREAK};
use crate::time::Timestamp;

/// Resting after rate limits: until when, how many refusals in a row, and when the current step
/// of the ladder began.
#[derive(Clone, Debug, Default)]
pub(crate) struct Rest {
    until: Option<Timestamp>,
    /// Refusals in a row since the last answer (drives the ladder).
    streak: u32,
    /// When the current step of the backoff began: the refusal that started the current rest.
    /// Requests sent before it were in flight together with the one refused then.
    began_at: Option<Timestamp>,
}

impl Rest {
    /// The end of a rest still running at `now`.
    pub fn until(&self, now: Timestamp) -> Option<Timestamp> {
        self.until.filter(|&until| until > now)
    }

    /// Refusals in a row since the last answer.
    pub fn streak(&self) -> u32 {
        self.streak
    }

    /// A refusal of a request sent at `sent_at` that announced `retry_after`: rests until the
    /// returned time.
    ///
    /// Five requests of one burst refused together are one refusal, not five in a row: a refusal
    /// of a request sent before the current rest began does not climb the ladder (it would rest
    /// far past what the provider asked, and every request waiting would give up). A later
    /// deadline it announces still wins. Sent at the very instant the rest began is sent before
    /// it: a resting key is not handed out, and a rest lasts at least [`crate::MIN_REST`]. A
    /// running rest is never shortened (an announced short wait after a long backoff).
    pub fn refused(
        &mut self,
        retry_after: Option<Duration>,
        sent_at: Option<Timestamp>,
        config: &PoolConfig,
        now: Timestamp,
    ) -> Timestamp {
        let same_burst = sent_at.zip(self.began_at).is_some_and(|(sent, began)| sent <= began);
        if !same_burst {
            self.streak = self.streak.saturating_add(1);
            self.began_at = Some(now);
        }
        let rest = config.cooldown_for(self.streak, retry_after);
        let until = self.until.max(Some(now + rest)).unwrap_or(now + rest);
        self.until = Some(until);
        until
    }

    /// An answer ends the rest and the streak; returns whether a rest was running (or over but
    /// not yet expired).
    pub fn answered(&mut self) -> bool {
        self.streak = 0;
        self.began_at = None;
        self.until.take().is_some()
    }

    /// Ends a rest that is over by `now`, keeping the streak (only an answer clears it, which is
    /// what makes the backoff exponential); returns whether there was one.
    pub fn expire(&mut self, now: Timestamp) -> bool {
        let expired = self.until.is_some_and(|until| until <= now);
        if expired {
            self.until = None;
        }
        expired
    }

    /// A user action: the rest ends and the streak with it.
    pub fn reset(&mut self) {
        *self = Rest::default();
    }

    /// The rest running at `now`, as a team shares it.
    pub fn shared(&self, now: Timestamp) -> Option<Resting> {
        self.until(now).map(|until| Resting { until, streak: self.streak, began_at: self.began_at })
    }

    /// Another member's rest: taken when it ends later than this one (bounded by `cap` from
    /// `now`), with the longer streak and the later start of its step, so the refusals of requests
    /// already in flight when it began do not climb the ladder here either. Returns whether it was
    /// taken.
    pub fn merge(&mut self, remote: Resting, cap: Duration, now: Timestamp) -> bool {
        let Some(until) = bounded(remote.until, cap, now) else { return false };
        if self.until.is_some_and(|own| own >= until) {
            return false;
        }
        self.until = Some(until);
        self.streak = self.streak.max(remote.streak.min(MAX_REMOTE_STREAK));
        self.began_at = self.began_at.max(remote.began_at.map(|began| began.min(now)));
        true
    }
}
