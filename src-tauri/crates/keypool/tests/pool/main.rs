//! One test binary for the pool, a module per feature.

mod affinity;
mod auth;
mod bounds;
mod cache;
mod concurrency;
mod cooldown;
mod env;
mod groups;
mod limits;
mod properties;
mod quotas;
mod selection;
mod status;
mod support;
mod team;
