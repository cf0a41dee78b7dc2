//! Time as a value: the pool never reads a clock, callers pass `now`.

use std::fmt;
use std::ops::{Add, Sub};
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, UNIX_EPOCH};

/// Milliseconds since the Unix epoch (UTC).
///
/// A plain number rather than `std::time::SystemTime` so that the pool's arithmetic is exact,
/// `Copy`, totally ordered, and trivially stored in a database column. Arithmetic saturates:
/// a cooldown can never wrap around into the past.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(i64);

impl Timestamp {
    /// The Unix epoch.
    pub const EPOCH: Timestamp = Timestamp(0);

    /// A timestamp `millis` milliseconds after the Unix epoch.
    pub const fn from_millis(millis: i64) -> Self {
        Timestamp(millis)
    }

    /// Milliseconds since the Unix epoch.
    pub const fn as_millis(self) -> i64 {
        self.0
    }

    /// The time elapsed from `earlier` to `self`, zero when `earlier` is not earlier.
    pub fn saturating_duration_since(self, earlier: Timestamp) -> Duration {
        Duration::from_millis(self.0.saturating_sub(earlier.0).max(0) as u64)
    }
}

/// Whole milliseconds of `d`, saturating at `i64::MAX`.
pub(crate) fn millis_i64(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

impl Add<Duration> for Timestamp {
    type Output = Timestamp;
    fn add(self, rhs: Duration) -> Timestamp {
        Timestamp(self.0.saturating_add(millis_i64(rhs)))
    }
}

impl Sub<Duration> for Timestamp {
    type Output = Timestamp;
    fn sub(self, rhs: Duration) -> Timestamp {
        Timestamp(self.0.saturating_sub(millis_i64(rhs)))
    }
}

/// RFC 3339 in UTC with milliseconds, e.g. `2025-01-31T12:00:00.000Z`, so logs read as a time,
/// not as a number. Instants before the epoch (only sentinels) print as milliseconds.
impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match u64::try_from(self.0) {
            Ok(ms) => write!(f, "{}", humantime::format_rfc3339_millis(UNIX_EPOCH + Duration::from_millis(ms))),
            Err(_) => write!(f, "{} ms", self.0),
        }
    }
}

/// A source of the current time. The pool itself never calls one: it is here so that the
/// layer driving the pool (the app, tests, benches) has one seam for time. The real clock lives
/// in the app crate.
pub trait Clock: Send + Sync {
    /// The current time.
    fn now(&self) -> Timestamp;
}

/// A clock that only moves when told to, for tests and simulations: no sleeping, no flakiness.
#[derive(Debug, Default)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    /// A clock standing at `start`.
    pub fn new(start: Timestamp) -> Self {
        ManualClock(AtomicI64::new(start.as_millis()))
    }

    /// Moves the clock forward by `by` and returns the new time.
    pub fn advance(&self, by: Duration) -> Timestamp {
        let by = millis_i64(by);
        let prev = self.0.fetch_add(by, Ordering::SeqCst);
        Timestamp(prev.saturating_add(by))
    }

    /// Moves the clock forward to `to`, if it is not there yet; returns the time after.
    pub fn advance_to(&self, to: Timestamp) -> Timestamp {
        let prev = self.0.fetch_max(to.as_millis(), Ordering::SeqCst);
        Timestamp(prev.max(to.as_millis()))
    }

    /// Puts the clock at `to` (which may be earlier: tests may want to see a clock step back).
    pub fn set(&self, to: Timestamp) {
        self.0.store(to.as_millis(), Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        Timestamp(self.0.load(Ordering::SeqCst))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_rfc3339_utc() {
        assert_eq!(Timestamp::EPOCH.to_string(), "1970-01-01T00:00:00.000Z", "the epoch is the origin of the scale");
        assert_eq!(
            Timestamp::from_millis(1_738_324_800_123).to_string(),
            "2025-01-31T12:00:00.123Z",
            "a known instant must print as the same calendar time"
        );
        assert_eq!(
            Timestamp::from_millis(951_782_400_000).to_string(),
            "2000-02-29T00:00:00.000Z",
            "leap days must be counted"
        );
    }

    #[test]
    fn arithmetic_saturates() {
        let late = Timestamp::from_millis(i64::MAX - 1);
        assert_eq!(
            late + Duration::from_secs(10),
            Timestamp::from_millis(i64::MAX),
            "a cooldown must never wrap into the past"
        );
        assert_eq!(
            Timestamp::from_millis(5).saturating_duration_since(Timestamp::from_millis(9)),
            Duration::ZERO,
            "a time before `earlier` is no time at all"
        );
    }

    #[test]
    fn manual_clock_moves_only_when_told() {
        let clock = ManualClock::new(Timestamp::from_millis(1_000));
        assert_eq!(clock.now(), Timestamp::from_millis(1_000), "a new clock stands at its start");
        clock.advance(Duration::from_secs(2));
        assert_eq!(clock.now(), Timestamp::from_millis(3_000), "advance adds exactly the duration");
    }
}
