//! `keypool-server` as a process: the fake provider upstream, a data dir per server, and (for
//! the team) a redis-server of the test's own.

mod alerts;
mod deploy;
mod drain;
mod keys;
mod ledger;
mod members;
mod metrics;
mod proxies;
mod serve;
mod support;
mod team;
mod team_members;
mod traces;
