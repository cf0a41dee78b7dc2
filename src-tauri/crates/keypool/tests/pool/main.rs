//! One test binary for the pool, a module per feature.

mod affinity;
mod auth;
mod bounds;
mod cache;
mod concurrency;
mod cooldown;
mod env;
mod limits;
mod properties;
mod selection;
mod status;
mod support;
