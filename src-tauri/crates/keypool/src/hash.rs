//! A fast, unkeyed hasher for the pool's id maps.
//!
//! The maps are keyed by ids the app itself generates (UUIDs from the store, chat ids from the
//! UI), not by input an adversary chooses, so the HashDoS resistance of std's keyed SipHash buys
//! nothing here, while its cost does: a SipHash lookup of a 36-byte UUID measured ~37 ns on the
//! target machine, a third of the bound-session budget. This is the multiply-rotate scheme of
//! rustc's `FxHasher`, written out to avoid a dependency for thirty lines.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// `HashMap` with [`IdHasher`].
pub(crate) type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;

const SEED: u64 = 0xf135_7aea_2e62_a9c5;

#[derive(Default, Clone, Copy)]
pub(crate) struct IdHasher {
    hash: u64,
}

impl IdHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash ^ word).wrapping_mul(SEED).rotate_left(20);
    }
}

impl Hasher for IdHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.add(u64::from_le_bytes(chunk.try_into().expect("chunks of 8")));
        }
        // The 1–7 leftover bytes as one word, read with (possibly overlapping) loads rather than
        // copied into a buffer: the copy cost a store-forwarding stall on every lookup.
        let rest = chunks.remainder();
        let n = rest.len();
        let word = match n {
            0 => return,
            4.. => {
                let lo = u32::from_le_bytes(rest[..4].try_into().expect("4 bytes"));
                let hi = u32::from_le_bytes(rest[n - 4..].try_into().expect("4 bytes"));
                u64::from(lo) | u64::from(hi) << 32
            }
            _ => u64::from(rest[0]) | u64::from(rest[n / 2]) << 8 | u64::from(rest[n - 1]) << 16,
        };
        self.add(word ^ ((n as u64) << 59));
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        // The multiply leaves its best bits high; the table indexes with the low ones.
        self.hash.wrapping_mul(SEED).rotate_left(26)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::hash::BuildHasher;

    #[test]
    fn similar_uuids_spread_over_buckets() {
        let build = BuildHasherDefault::<IdHasher>::default();
        let buckets: HashSet<u64> = (0..4096)
            .map(|i| build.hash_one(format!("0193b7c2-5a1e-7f00-8000-{i:012x}")) & 4095)
            .collect();
        assert!(
            buckets.len() > 2400,
            "4096 sequential UUIDs must fill most of 4096 buckets (random: ~2590), got {}",
            buckets.len()
        );
    }
}
