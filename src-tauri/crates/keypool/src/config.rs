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
}

impl Default for PoolConfig {
    fn default() -> Self {
        PoolConfig {
            cooldown_base: Duration::from_secs(60),
            cooldown_cap: Duration::from_secs(900),
            sweep_interval: Duration::from_secs(30),
            strategy: StrategyKind::default(),
        }
    }
}

impl PoolConfig {
    /// The cooldown after the `consecutive_failures`-th rate limit in a row:
    /// `min(base · 2^(n−1), cap)`, or the provider's announced wait bounded by the cap.
    ///
    /// `n = 0` is treated as 1; the doubling saturates instead of overflowing.
    pub fn cooldown_for(&self, consecutive_failures: u32, announced: Option<Duration>) -> Duration {
        let backoff = || {
            let doublings = consecutive_failures.max(1) - 1;
            self.cooldown_base.saturating_mul(2u32.saturating_pow(doublings))
        };
        announced.unwrap_or_else(backoff).min(self.cooldown_cap)
    }
}

/// The selection strategies the pool ships. Each provider gets its own instance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StrategyKind {
    /// The product's order: each key takes `weight` consecutive slots of a cycle, a counter walks
    /// the slots (3,1,2 gives A A A B C C). O(log n) per pick.
    #[default]
    WeightedRoundRobin,
    /// nginx's smooth weighted round-robin: the same shares, interleaved (5,1,1 gives
    /// a a b a c a a), so a heavy key is not hit in bursts. O(n) per pick.
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
    fn doubling_saturates_instead_of_overflowing() {
        let c = PoolConfig::default();
        assert_eq!(
            c.cooldown_for(u32::MAX, None),
            c.cooldown_cap,
            "a key failing forever stays at the cap, it does not panic or wrap"
        );
    }
}
