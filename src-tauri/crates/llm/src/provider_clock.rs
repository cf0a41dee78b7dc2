//! What this machine knows of a provider's clock. Anthropic announces its resets as instants on
//! its own clock, often in whole seconds; the `date` header of every answer tells how far that
//! clock is from ours, to within a second per answer and more closely over several.
//!
//! The estimate is an interval, not a number: an answer dated `D` (whole seconds, truncated), sent
//! at `s` and received at `r` on our clock, was dated at some moment of `[s, r]` when the
//! provider's clock read something in `[D, D + 1 s)`, so its offset (provider − ours) lies in
//! `[D − r, D + 1 s − s]`. The recent answers' intervals intersect to a narrower one. Instants the
//! provider announces are read by the end of that interval that makes them latest on our clock:
//! a reset read a little late costs a short wait, one read early costs a refused request.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

use keypool::{ProviderId, Timestamp};
use reqwest::header::HeaderMap;

/// How many recent answers the estimate is made of: enough to narrow the interval, few enough
/// that a provider whose clock was set meanwhile is believed again soon.
const OBSERVATIONS: usize = 16;

/// The largest offset believed: an hour covers a machine whose clock drifted without a time
/// server. A provider whose clock seems further off (or says so to push its resets out) is taken
/// to be this far off at most; what it announces is bounded apart as well
/// ([`crate::rate_limit::MAX_RESET_AHEAD`]).
pub const MAX_CLOCK_OFFSET: Duration = Duration::from_secs(3600);

/// Bounds on a provider's clock offset (provider − ours), in milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClockSkew {
    /// The provider's clock is at least this far ahead of ours (negative: behind).
    pub min_ms: i64,
    /// And at most this far.
    pub max_ms: i64,
}

impl ClockSkew {
    /// The latest moment on our clock at which the provider's clock may reach `at` (milliseconds
    /// on its clock), when `at` is given to within `precision` (an instant in whole seconds may
    /// mean any moment of that second).
    pub fn latest_local(self, at_ms: i64, precision: Duration) -> Timestamp {
        let precision = i64::try_from(precision.as_millis()).unwrap_or(i64::MAX);
        Timestamp::from_millis(at_ms.saturating_add(precision).saturating_sub(self.min_ms))
    }
}

/// The recent observations of one provider's clock.
#[derive(Clone, Debug, Default)]
pub struct ClockOffset {
    /// `(min, max)` offset bounds of each recent answer, oldest first.
    observed: VecDeque<(i64, i64)>,
}

impl ClockOffset {
    /// An answer dated `date_ms` (whole seconds on the provider's clock) was sent at `sent` and
    /// received at `received` on ours.
    pub fn observe(&mut self, date_ms: i64, sent: Timestamp, received: Timestamp) {
        let bound = MAX_CLOCK_OFFSET.as_millis() as i64;
        let min = date_ms.saturating_sub(received.as_millis()).clamp(-bound, bound);
        let max = date_ms.saturating_add(1000).saturating_sub(sent.as_millis()).clamp(-bound, bound);
        if self.observed.len() == OBSERVATIONS {
            self.observed.pop_front();
        }
        self.observed.push_back((min, max));
    }

    /// The offset's bounds: the intersection of the recent answers' intervals. When they do not
    /// intersect, the provider's clock moved: the newest answers that agree are believed.
    pub fn skew(&self) -> ClockSkew {
        let mut skew: Option<ClockSkew> = None;
        for &(min, max) in self.observed.iter().rev() {
            let (lo, hi) = match skew {
                None => (min, max),
                Some(s) => (s.min_ms.max(min), s.max_ms.min(max)),
            };
            if lo > hi {
                break;
            }
            skew = Some(ClockSkew { min_ms: lo, max_ms: hi });
        }
        skew.unwrap_or_default()
    }
}

/// The clock offsets of every provider this process talked to.
#[derive(Debug, Default)]
pub(crate) struct ProviderClocks(Mutex<HashMap<ProviderId, ClockOffset>>);

impl ProviderClocks {
    /// Learns from an answer's `date` header (sent and received at those times on our clock), and
    /// answers what is known of the provider's clock now. An answer without a readable `date`
    /// teaches nothing.
    pub(crate) fn observe(
        &self,
        provider: &ProviderId,
        headers: &HeaderMap,
        sent: Timestamp,
        received: Timestamp,
    ) -> ClockSkew {
        let date = headers
            .get(reqwest::header::DATE)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| httpdate::parse_http_date(value.trim()).ok())
            .and_then(|at| at.duration_since(std::time::UNIX_EPOCH).ok())
            .and_then(|since| i64::try_from(since.as_millis()).ok());
        let mut clocks = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match date {
            Some(date_ms) => {
                let offset = clocks.entry(provider.clone()).or_default();
                offset.observe(date_ms, sent, received);
                offset.skew()
            }
            None => clocks.get(provider).map(ClockOffset::skew).unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: i64 = 1_800_000_000_000;

    fn at(ms: i64) -> Timestamp {
        Timestamp::from_millis(T + ms)
    }

    /// What a provider `offset_ms` ahead of us dates an answer it gives at our `now`.
    fn dated(offset_ms: i64, now: i64) -> i64 {
        (T + now + offset_ms).div_euclid(1000) * 1000
    }

    #[test]
    fn one_answer_bounds_the_offset_to_a_second() {
        let mut clock = ClockOffset::default();
        clock.observe(dated(-2000, 400), at(400), at(400));
        let skew = clock.skew();
        assert!(skew.min_ms <= -2000 && -2000 <= skew.max_ms, "the true offset is inside: {skew:?}");
        assert_eq!(skew.max_ms - skew.min_ms, 1000, "a whole-second date says no more than the second");
    }

    #[test]
    fn answers_at_other_moments_of_the_second_narrow_it() {
        for offset in [-2000, -1337, 0, 250, 2000] {
            let mut clock = ClockOffset::default();
            // Twelve answers 1.097 s apart fall at moments ~0.1 s apart within the second.
            for now in (0..12).map(|k| k * 1097) {
                clock.observe(dated(offset, now), at(now), at(now));
            }
            let skew = clock.skew();
            assert!(skew.min_ms <= offset && offset <= skew.max_ms, "offset {offset}: inside {skew:?}");
            assert!(skew.max_ms - skew.min_ms <= 100, "offset {offset}: twelve answers narrow it to {skew:?}");
        }
    }

    #[test]
    fn a_slow_answer_widens_nothing() {
        let mut clock = ClockOffset::default();
        for now in [100, 1350, 2700] {
            clock.observe(dated(500, now), at(now), at(now + 5));
        }
        let before = clock.skew();
        clock.observe(dated(500, 4000), at(3000), at(5000));
        assert_eq!(
            clock.skew(),
            before,
            "an answer that took 2 s says less, and the intersection keeps what was known"
        );
    }

    #[test]
    fn a_provider_whose_clock_was_set_is_believed_again() {
        let mut clock = ClockOffset::default();
        for now in [100, 1350, 2700] {
            clock.observe(dated(0, now), at(now), at(now));
        }
        clock.observe(dated(30_000, 4000), at(4000), at(4000));
        let skew = clock.skew();
        assert!(skew.min_ms >= 29_000, "the newest answer disagrees with the older ones and wins: {skew:?}");
    }

    #[test]
    fn the_offset_believed_is_bounded() {
        let mut clock = ClockOffset::default();
        clock.observe(T + 86_400_000, at(0), at(0));
        let skew = clock.skew();
        assert_eq!(skew.max_ms, MAX_CLOCK_OFFSET.as_millis() as i64, "a day ahead is taken as the bound: {skew:?}");
    }

    #[test]
    fn an_instant_is_read_by_its_latest_meaning() {
        let skew = ClockSkew { min_ms: -2100, max_ms: -1900 };
        assert_eq!(
            skew.latest_local(T + 10_000, Duration::from_secs(1)),
            at(13_100),
            "10:00:10 in whole seconds on a clock 1.9–2.1 s behind: until 13.1 s on ours"
        );
        assert_eq!(ClockSkew::default().latest_local(T + 10_000, Duration::from_millis(1)), at(10_001));
    }
}
