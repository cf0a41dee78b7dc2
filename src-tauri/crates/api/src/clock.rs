//! The real clock. The pool and the services take time from a [`Clock`], so tests use
//! `keypool::ManualClock` instead.

use std::time::{SystemTime, UNIX_EPOCH};

use keypool::{Clock, Timestamp};

/// Wall-clock time, in milliseconds since the Unix epoch.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        let millis = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
        Timestamp::from_millis(i64::try_from(millis).unwrap_or(i64::MAX))
    }
}
