//! Two members of one team against a real Redis (a `redis-server` of each test's own) and the
//! fake provider.

mod admission;
mod affinity;
mod hostile;
mod outage;
mod propagation;
mod replay;
mod secrets;
mod support;
