//! The selection seam: which of the available keys serves the next new session.

/// Chooses among a provider's available keys.
///
/// The pool owns one instance per provider and calls it under its lock, so an implementation
/// needs no synchronisation of its own; it only has to be `Send`. It holds no clock and no
/// randomness: a pick is a function of the calls before it. Positions are indexes into the
/// `available` slice of the last [`SelectionStrategy::reset`], which lists the available keys in
/// display order (`sort_order`, then creation).
pub trait SelectionStrategy: Send {
    /// The set of available keys changed, or may have (a cooldown started or ended, a key was
    /// disabled, an answer announced budgets): `available[i]` is the i-th available key's place
    /// in the provider's whole key list, which names it until the list is reloaded (see
    /// [`SelectionStrategy::renumber`]), and `weights[i]` its weight (≥ 1).
    fn reset(&mut self, available: &[usize], weights: &[u32]);

    /// The position of the key to hand out, among those for which `allowed` is true (the caller
    /// excludes keys a request already tried); `None` when no position is allowed or there are no
    /// keys. Only a successful pick counts as a selection.
    fn pick(&mut self, allowed: &dyn Fn(usize) -> bool) -> Option<usize>;

    /// [`SelectionStrategy::pick`] with every position allowed: the common case (nothing
    /// excluded, no budget), which a strategy may serve faster.
    fn pick_any(&mut self) -> Option<usize> {
        self.pick(&|_| true)
    }

    /// The key list was reloaded: the key now at place `i` was at `previous[i]` before (`None`:
    /// a key new to the list). A [`SelectionStrategy::reset`] follows. For a strategy that keeps
    /// something per key; others need not implement it.
    fn renumber(&mut self, previous: &[Option<usize>]) {
        let _ = previous;
    }
}

/// Weighted round-robin in runs, the pool's first order: key i owns `weight_i` consecutive slots
/// of a cycle of `Σ weights` slots, and a per-provider counter walks the cycle; the first pick
/// takes slot 0. Kept for [`crate::StrategyKind::WeightedRoundRobin`]; its runs read as if
/// weights were ignored (weights 5 and 100 in that order: the light key takes 5 chats in a row
/// first), which is why [`SmoothWeightedRoundRobin`] is the default.
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
    fn reset(&mut self, _available: &[usize], weights: &[u32]) {
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

/// nginx's smooth weighted round-robin, the pool's default: on each pick every allowed key gains
/// its weight, the key with the most (the first on a tie) is chosen and loses the sum of the
/// allowed keys' weights.
///
/// Invariant: from a fresh start, with nothing excluded and the set unchanged, every window of
/// `Σ weights` consecutive picks returns each key exactly `weight` times, and a heavy key's turns
/// are spread out instead of coming in a run ({5,1,1}: a a b a c a a; {100,5}: the weight-5 key's
/// first turn is the 11th pick, not the 101st). O(n) per pick, inherent to the method.
///
/// The running totals belong to keys, not to positions in the available set: a key that stops
/// being available (it rests, it is excluded) keeps its total and gains nothing until it is back,
/// as nginx does with a peer that is down. So the answers that rebuild the available set (each
/// one announcing budgets does) and a key resting now and then do not start the sequence over,
/// which would hand the first key the first turn again and again.
#[derive(Debug, Default)]
pub struct SmoothWeightedRoundRobin {
    /// The available keys' places in the provider's key list, their weights and running totals,
    /// by position in the available set (dense, so a pick is one pass over three arrays).
    available: Vec<usize>,
    weights: Vec<i64>,
    current: Vec<i64>,
    /// Σ weights of the available keys.
    total: i64,
    /// Every key's running total by place in the list, as of the last reset: where a key's total
    /// waits while it is not available.
    kept: Vec<i64>,
}

impl SmoothWeightedRoundRobin {
    /// Writes the available keys' totals back to their places.
    fn keep(&mut self) {
        for (&key, &current) in self.available.iter().zip(&self.current) {
            self.kept[key] = current;
        }
    }
}

impl SelectionStrategy for SmoothWeightedRoundRobin {
    fn reset(&mut self, available: &[usize], weights: &[u32]) {
        self.keep();
        if let Some(&last) = available.iter().max() {
            if self.kept.len() <= last {
                self.kept.resize(last + 1, 0);
            }
        }
        self.available.clear();
        self.available.extend_from_slice(available);
        self.weights.clear();
        self.weights.extend(weights.iter().map(|&w| i64::from(w.max(1))));
        self.total = self.weights.iter().sum();
        self.current.clear();
        self.current.extend(available.iter().map(|&key| self.kept[key]));
    }

    fn pick(&mut self, allowed: &dyn Fn(usize) -> bool) -> Option<usize> {
        let mut total = 0;
        let mut best: Option<usize> = None;
        for pos in (0..self.available.len()).filter(|&pos| allowed(pos)) {
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

    fn pick_any(&mut self) -> Option<usize> {
        let (mut best, mut most) = (None, i64::MIN);
        for (pos, (current, weight)) in self.current.iter_mut().zip(&self.weights).enumerate() {
            *current += weight;
            if *current > most {
                (best, most) = (Some(pos), *current);
            }
        }
        let best = best?;
        self.current[best] -= self.total;
        Some(best)
    }

    fn renumber(&mut self, previous: &[Option<usize>]) {
        self.keep();
        let old = std::mem::take(&mut self.kept);
        self.kept = previous.iter().map(|p| p.and_then(|p| old.get(p).copied()).unwrap_or(0)).collect();
        self.available.clear();
        self.weights.clear();
        self.current.clear();
        self.total = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(strategy: &mut dyn SelectionStrategy, weights: &[u32], picks: usize) -> String {
        let available: Vec<usize> = (0..weights.len()).collect();
        strategy.reset(&available, weights);
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
    fn smooth_wrr_gives_a_heavy_key_the_first_turns_and_a_light_one_its_turn_soon() {
        let picks = run(&mut SmoothWeightedRoundRobin::default(), &[5, 100], 21);
        assert_eq!(
            picks, "BBBBBBBBBBABBBBBBBBBB",
            "the weight-100 key serves first; the weight-5 key's turn comes after 10 of its, not after 100"
        );
    }

    #[test]
    fn smooth_wrr_keeps_each_keys_total_while_the_set_changes() {
        let mut s = SmoothWeightedRoundRobin::default();
        s.reset(&[0, 1, 2], &[1, 1, 1]);
        assert_eq!(s.pick(&|_| true), Some(0), "A first");
        // An answer rebuilds the set unchanged: the sequence goes on, it does not start over at A.
        s.reset(&[0, 1, 2], &[1, 1, 1]);
        assert_eq!(s.pick(&|_| true), Some(1), "then B");
        // B rests: the set is A and C, at positions 0 and 1; C has waited longest.
        s.reset(&[0, 2], &[1, 1]);
        assert_eq!(s.pick(&|_| true), Some(1), "C (position 1 of the set A, C), not A again");
    }

    #[test]
    fn smooth_wrr_follows_its_keys_through_a_reload() {
        let mut s = SmoothWeightedRoundRobin::default();
        s.reset(&[0, 1, 2], &[1, 1, 1]);
        assert_eq!(s.pick(&|_| true), Some(0), "A first");
        // A new key X is listed first: A, B, C move one place down.
        s.renumber(&[None, Some(0), Some(1), Some(2)]);
        s.reset(&[0, 1, 2, 3], &[1, 1, 1, 1]);
        assert_eq!(s.pick(&|_| true), Some(2), "B, whose turn it was, not A again because its place changed");
    }

    #[test]
    fn excluded_keys_gain_nothing_in_the_smooth_order() {
        let mut s = SmoothWeightedRoundRobin::default();
        s.reset(&[0, 1], &[1, 1]);
        assert_eq!(s.pick(&|pos| pos != 0), Some(1), "A is excluded: B");
        assert_eq!(s.pick(&|_| false), None, "nothing allowed, nothing picked");
        assert_eq!(s.pick(&|_| true), Some(0), "A, which did not gain while excluded, is next");
    }

    #[test]
    fn excluded_slot_passes_to_the_next_allowed_key() {
        let mut s = WeightedRoundRobin::default();
        s.reset(&[0, 1, 2], &[1, 1, 1]);
        assert_eq!(s.pick(&|pos| pos != 0), Some(1), "slot 0 belongs to A, which is excluded");
        assert_eq!(s.pick(&|_| false), None, "nothing allowed, nothing picked");
        assert_eq!(s.pick(&|_| true), Some(1), "a failed pick does not advance the counter");
    }

    proptest::proptest! {
        #[test]
        fn smooth_wrr_fast_path_picks_as_the_general_one(
            weights in proptest::collection::vec(1u32..=100, 1..=12),
            steps in proptest::collection::vec((0u8..4, 0usize..12), 1..200),
        ) {
            // Twins driven alike, one through pick_any, one through pick(all allowed); now and
            // then a key rests (the set shrinks) or comes back.
            let (mut fast, mut general) = (SmoothWeightedRoundRobin::default(), SmoothWeightedRoundRobin::default());
            let all: Vec<usize> = (0..weights.len()).collect();
            fast.reset(&all, &weights);
            general.reset(&all, &weights);
            for (op, key) in steps {
                match op {
                    0 => {
                        let resting = key % weights.len();
                        let (places, ws): (Vec<usize>, Vec<u32>) =
                            all.iter().filter(|&&k| k != resting).map(|&k| (k, weights[k])).unzip();
                        fast.reset(&places, &ws);
                        general.reset(&places, &ws);
                    }
                    1 => {
                        fast.reset(&all, &weights);
                        general.reset(&all, &weights);
                    }
                    _ => proptest::prop_assert_eq!(fast.pick_any(), general.pick(&|_| true), "the same key"),
                }
            }
        }
    }

    #[test]
    fn no_keys_no_pick() {
        assert_eq!(WeightedRoundRobin::default().pick(&|_| true), None, "empty cycle");
        assert_eq!(SmoothWeightedRoundRobin::default().pick(&|_| true), None, "empty set");
    }
}
