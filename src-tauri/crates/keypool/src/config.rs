//! Tunables of the pool, in one place rather than as literals in the code.

use std::time::Duration;

use crate::strategy::{SelectionStrategy, SmoothWeightedRoundRobin, WeightedRoundRobin};

/// How the pool behaves. `Default` gives the documented product behaviour.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolConfig {
    /// The first cooldown after a rate limit (default 60 s); each further consecutive failure
    /// doubles it.
    pub cooldown_base: Duration,
    /// The longest cooldown (default 900 s), also the bound on a wait the provider announces.
    pub cooldown_cap: Duration,
    /// How often the app should call [`crate::KeyPool::sweep`] (default 30 s). The pool stays
    /// correct without sweeping (expiry is detected on selection); sweeping keeps the status view
    /// tidy and moves the rebuild of the available set off the selection path.
    pub sweep_interval: Duration,
    /// Which selection strategy each provider uses.
    pub strategy: StrategyKind,
    /// How long a request may wait for a key to free up (a cooldown ends, a window refills)
    /// when every key is spent or resting, before it fails with `no_available_key` (default 20 s).
    pub max_wait: Duration,
    /// When an out-of-credit key is first probed again (default 15 min); each failed probe doubles
    /// the interval.
    pub probe_first: Duration,
    /// The longest interval between probes of an out-of-credit key (default 6 h).
    pub probe_cap: Duration,
    /// How long a session keeps its key without a request (default 60 min, about as long as the
    /// providers keep a prompt cache): after that its cache is cold and the next request picks
    /// afresh, so idle chats do not pin the load on one key.
    pub binding_idle: Duration,
    /// The most session bindings kept (default 20 000): past it the least recently used go first,
    /// so clients that invent a session id per request cannot grow the pool without end.
    pub max_sessions: usize,
}

/// The shortest rest after a refusal, whatever was announced: a `retry-after: 0` is no promise.
pub const MIN_REST: Duration = Duration::from_secs(1);

/// The furthest ahead a plan window's reset is believed (a month and a few days): a reset later
/// than that is a broken answer, and the key is tried again then.
pub const MAX_PLAN_WINDOW: Duration = Duration::from_secs(35 * 24 * 3600);

impl Default for PoolConfig {
    fn default() -> Self {
        PoolConfig {
            cooldown_base: Duration::from_secs(60),
            cooldown_cap: Duration::from_secs(900),
            sweep_interval: Duration::from_secs(30),
            strategy: StrategyKind::default(),
            max_wait: Duration::from_secs(20),
            probe_first: Duration::from_secs(15 * 60),
            probe_cap: Duration::from_secs(6 * 3600),
            binding_idle: Duration::from_secs(60 * 60),
            max_sessions: 20_000,
        }
    }
}

impl PoolConfig {
    /// The cooldown after the `n`-th rate limit in a row, all bounded by the cap:
    ///
    /// * nothing announced: the ladder `min(base · 2^(n−1), cap)` (60, 120, 240, 480, 900 s);
    /// * an announced wait, the first time: that wait, at least [`MIN_REST`];
    /// * an announced wait, refused again right after: the larger of the wait and the ladder's
    ///   step for the refusals before this one, so a key that keeps announcing short waits it
    ///   does not honour escalates instead of being hammered.
    ///
    /// `n = 0` is treated as 1; the doubling saturates instead of overflowing.
    pub fn cooldown_for(&self, consecutive_failures: u32, announced: Option<Duration>) -> Duration {
        let n = consecutive_failures.max(1);
        let ladder = |n: u32| self.cooldown_base.saturating_mul(2u32.saturating_pow(n - 1));
        let rest = match announced {
            None => ladder(n),
            Some(wait) if n == 1 => wait.max(MIN_REST),
            Some(wait) => wait.max(MIN_REST).max(ladder(n - 1)),
        };
        rest.min(self.cooldown_cap)
    }

    /// The interval before the `n`-th probe of an out-of-credit key: `min(first · 2^(n−1), cap)`.
    pub fn probe_interval(&self, probes: u32) -> Duration {
        self.probe_first.saturating_mul(2u32.saturating_pow(probes.max(1) - 1)).min(self.probe_cap)
    }
}

/// The selection strategies the pool ships. Each provider gets its own instance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StrategyKind {
    /// Runs: each key takes `weight` consecutive slots of a cycle, a counter walks the slots
    /// (3,1,2 gives A A A B C C). O(log n) per pick.
    WeightedRoundRobin,
    /// nginx's smooth weighted round-robin, the product's order: the same shares, interleaved
    /// (5,1,1 gives a a b a c a a), so a heavy key is not hit in bursts and a light one listed
    /// first does not serve a run before it. O(n) per pick.
    #[default]
    SmoothWeightedRoundRobin,
}

impl StrategyKind {
    /// A fresh strategy of this kind, with no keys yet.
    pub fn build(self) -> Box<dyn SelectionStrategy> {
        match self {
            StrategyKind::WeightedRoundRobin => Box::<WeightedRoundRobin>::default(),
            StrategyKind::SmoothWeightedRoundRobin => Box::<SmoothWeightedRoundRobin>::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_cooldowns_double_up_to_the_cap() {
        let c = PoolConfig::default();
        let secs: Vec<u64> = (1..=7).map(|n| c.cooldown_for(n, None).as_secs()).collect();
        assert_eq!(secs, [60, 120, 240, 480, 900, 900, 900], "the documented backoff table");
    }

    #[test]
    fn announced_waits_are_honoured_once_then_escalate() {
        let c = PoolConfig::default();
        let secs = |n, wait: u64| c.cooldown_for(n, Some(Duration::from_secs(wait))).as_millis();
        assert_eq!(secs(1, 7), 7_000, "the first refusal rests as announced");
        assert_eq!(c.cooldown_for(1, Some(Duration::ZERO)).as_millis(), 1_000, "retry-after: 0 rests at least 1 s");
        assert_eq!(c.cooldown_for(1, Some(Duration::from_millis(200))).as_millis(), 1_000, "and so does 200 ms");
        assert_eq!(secs(2, 7), 60_000, "refused again right after: at least the ladder's first step");
        assert_eq!(secs(3, 7), 120_000, "and on up the ladder");
        assert_eq!(secs(2, 300), 300_000, "a longer announced wait still wins");
        assert_eq!(secs(1, 5_000), 900_000, "bounded by the cap");
    }

    #[test]
    fn probes_of_an_out_of_credit_key_double_up_to_six_hours() {
        let c = PoolConfig::default();
        let minutes: Vec<u64> = (1..=7).map(|n| c.probe_interval(n).as_secs() / 60).collect();
        assert_eq!(minutes, [15, 30, 60, 120, 240, 360, 360], "15 min doubling to 6 h");
    }

    #[test]
    fn doubling_saturates_instead_of_overflowing() {
        let c = PoolConfig::default();
        assert_eq!(
            c.cooldown_for(u32::MAX, None),
            c.cooldown_cap,
            "a key failing forever stays at the cap, it does not panic or wrap"
        );
    }
}
