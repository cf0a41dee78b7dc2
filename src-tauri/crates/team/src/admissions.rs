//! How the team's side of hand-outs went: counted per path, for diagnostics and `/metrics`.

use std::sync::atomic::{AtomicU64, Ordering};

/// How the team's side of hand-outs went, per path, since the member joined: which requests the
/// team's `ADMIT` decided, and which the member decided alone (and why). For diagnostics and the
/// burst figure: a refusal upstream with the team on and Redis healthy is a bug, and these say
/// which path let it through.
#[derive(Debug, Default)]
pub(crate) struct Admissions([AtomicU64; 5]);

/// One path of a hand-out, for [`Admissions`].
#[derive(Clone, Copy, Debug)]
pub(crate) enum Path {
    /// `ADMIT` found room.
    Admitted,
    /// `ADMIT` found the team's requests in flight fill the window.
    Full,
    /// No window known for the scope: nothing to ask (the member decides alone).
    NoWindow,
    /// Redis was not there (the member decides alone).
    Disconnected,
    /// `ADMIT` answered nothing within the request timeout (the member decides alone).
    TimedOut,
    /// `ADMIT` failed or its answer could not be read (the member decides alone).
    Failed,
}

impl Admissions {
    pub(crate) fn count(&self, path: Path) {
        let slot = match path {
            Path::Admitted => 0,
            Path::Full => 1,
            Path::NoWindow | Path::Disconnected => 2,
            Path::TimedOut => 3,
            Path::Failed => 4,
        };
        self.0[slot].fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn counts(&self) -> crate::AdmissionCounts {
        let get = |slot: usize| self.0[slot].load(Ordering::Relaxed);
        crate::AdmissionCounts { admitted: get(0), full: get(1), unasked: get(2), timed_out: get(3), failed: get(4) }
    }
}
