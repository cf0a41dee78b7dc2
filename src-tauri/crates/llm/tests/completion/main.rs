//! The completion service against the fake provider on loopback: streaming, stickiness,
//! failover on 429/529/401/403, errors inside streams, cut-off replies, cancel, and the
//! `no_available_key` messages. Time is a manual clock; nothing sleeps.

mod affinity;
mod balances;
mod cancel;
mod clouds;
mod env_keys;
mod failover;
mod gemini;
mod hostile;
mod limits;
mod no_available_key;
mod openrouter;
mod plans;
mod probe;
mod provider_level_key;
mod secrets;
mod stalls;
mod streaming;
mod support;
mod translation;
mod usage;
mod verification;
