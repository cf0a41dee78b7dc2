//! The selection seam: which of the available keys serves the next new session.

/// Chooses among a provider's available keys.
///
/// The pool owns one instance per provider and calls it under its lock, so an implementation
/// needs no synchronisation of its own; it only has to be `Send`. Positions are indexes into the
/// `weights` slice of the last [`SelectionStrategy::reset`], which lists the available keys in
/// display order (`sort_order`, then creation).
pub trait SelectionStrategy: Send {
    /// The set of available keys changed (a cooldown started or ended, a key was disabled, the
    /// keys were reloaded): `weights[i]` is the weight (≥ 1) of the i-th available key.
    fn reset(&mut self, weights: &[u32]);

    /// The position of the key to hand out, among those for which `allowed` is true (the caller
    /// excludes keys a request already tried); `None` when no position is allowed or there are no
    /// keys. Only a successful pick counts as a selection.
    fn pick(&mut self, allowed: &dyn Fn(usize) -> bool) -> Option<usize>;
}

/// The product's weighted round-robin: key i owns `weight_i` consecutive slots of a cycle of
/// `Σ weights` slots, and a per-provider counter walks the cycle; the first pick takes slot 0.
///
/// Invariant: with nothing excluded and the set unchanged, every window of `Σ weights`
/// consecutive picks returns each key exactly `weight` times.
///
/// The cycle is kept as prefix sums and a slot is found by binary search, so a pick is
/// O(log n) and the O(n) work happens only in `reset`, when the set changes. The counter is not
/// reset then: the rotation carries on where it was, as in the original design.
///
/// An excluded key passes its slot to the next allowed key in order. That skews the shares of
/// one request's retries slightly, in exchange for O(k) skipping (k = keys excluded) instead of
/// rebuilding a filtered cycle.
#[derive(Debug, Default)]
pub struct WeightedRoundRobin {
    /// `prefix[i]` = sum of the weights of keys 0..=i.
    prefix: Vec<u64>,
    counter: u64,
}

impl SelectionStrategy for WeightedRoundRobin {
    fn reset(&mut self, weights: &[u32]) {
        self.prefix.clear();
        let mut sum = 0u64;
        self.prefix.extend(weights.iter().map(|&w| {
            sum += u64::from(w.max(1));
            sum
        }));
    }

    fn pick(&mut self, allowed: &dyn Fn(usize) -> bool) -> Option<usize> {
        let n = self.prefix.len();
        let total = *self.prefix.last()?;
        let slot = self.counter % total;
        let owner = self.prefix.partition_point(|&end| end <= slot);
        let pos = (0..n).map(|step| (owner + step) % n).find(|&pos| allowed(pos))?;
        self.counter = self.counter.wrapping_add(1);
        Some(pos)
    }
}

/// nginx's smooth weighted round-robin: on each pick every allowed key gains its weight, the
/// key with the most (the first on a tie) is chosen and loses the sum of the weights.
///
/// Gives each key its share of every `Σ weights` picks while spreading a heavy key's turns out
/// ({5,1,1}: a a b a c a a). O(n) per pick, inherent to the method. The running totals restart
/// when the set changes, as nginx does when its peers change.
#[derive(Debug, Default)]
pub struct SmoothWeightedRoundRobin {
    weights: Vec<i64>,
    current: Vec<i64>,
}

impl SelectionStrategy for SmoothWeightedRoundRobin {
    fn reset(&mut self, weights: &[u32]) {
        self.weights.clear();
        self.weights.extend(weights.iter().map(|&w| i64::from(w.max(1))));
        self.current.clear();
        self.current.resize(weights.len(), 0);
    }

    fn pick(&mut self, allowed: &dyn Fn(usize) -> bool) -> Option<usize> {
        let mut total = 0;
        let mut best: Option<usize> = None;
        for pos in (0..self.weights.len()).filter(|&pos| allowed(pos)) {
            self.current[pos] += self.weights[pos];
            total += self.weights[pos];
            if best.is_none_or(|b| self.current[pos] > self.current[b]) {
                best = Some(pos);
            }
        }
        let best = best?;
        self.current[best] -= total;
        Some(best)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(strategy: &mut dyn SelectionStrategy, weights: &[u32], picks: usize) -> String {
        strategy.reset(weights);
        (0..picks)
            .map(|_| {
                let pos = strategy.pick(&|_| true).expect("keys are available");
                char::from(b'A' + pos as u8)
            })
            .collect()
    }

    #[test]
    fn weighted_round_robin_fills_slots_in_order() {
        assert_eq!(run(&mut WeightedRoundRobin::default(), &[3, 1, 2], 7), "AAABCCA", "3,1,2");
        assert_eq!(run(&mut WeightedRoundRobin::default(), &[3, 2, 1], 6), "AAABBC", "3,2,1");
        assert_eq!(run(&mut WeightedRoundRobin::default(), &[1, 1, 1], 6), "ABCABC", "equal weights rotate");
    }

    #[test]
    fn smooth_wrr_interleaves() {
        assert_eq!(
            run(&mut SmoothWeightedRoundRobin::default(), &[5, 1, 1], 7).to_lowercase(),
            "aabacaa",
            "nginx's documented sequence for {{5,1,1}}"
        );
    }

    #[test]
    fn excluded_slot_passes_to_the_next_allowed_key() {
        let mut s = WeightedRoundRobin::default();
        s.reset(&[1, 1, 1]);
        assert_eq!(s.pick(&|pos| pos != 0), Some(1), "slot 0 belongs to A, which is excluded");
        assert_eq!(s.pick(&|_| false), None, "nothing allowed, nothing picked");
        assert_eq!(s.pick(&|_| true), Some(1), "a failed pick does not advance the counter");
    }

    #[test]
    fn no_keys_no_pick() {
        assert_eq!(WeightedRoundRobin::default().pick(&|_| true), None, "empty cycle");
        assert_eq!(SmoothWeightedRoundRobin::default().pick(&|_| true), None, "empty set");
    }
}
