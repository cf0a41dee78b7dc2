//! The hasher of the pool's id maps: rustc's Fx hash, from `rustc-hash`.
//!
//! The maps are keyed by ids the app itself generates (UUIDs from the store, chat ids from the
//! UI), not by input an adversary chooses, so the HashDoS resistance of std's keyed SipHash buys
//! nothing here, while its cost does: a SipHash lookup of a 36-byte UUID measured ~37 ns on the
//! target machine, a third of the bound-session budget.

use std::collections::HashMap;

/// `HashMap` with the Fx hasher.
pub(crate) type IdMap<K, V> = HashMap<K, V, rustc_hash::FxBuildHasher>;
