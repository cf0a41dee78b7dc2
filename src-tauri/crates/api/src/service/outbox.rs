//! The team ledger's outbox: what a server could not ship to its team's Postgres yet, kept in
//! the store until it has (see `keypool_store::outbox`), and the block of attempt numbers the
//! server may use.

use std::sync::Arc;

pub use keypool_store::outbox::LedgerRow;
use keypool_store::{outbox, Database};

use crate::service::error::Result;

pub struct LedgerOutbox {
    db: Arc<Database>,
}

impl LedgerOutbox {
    pub(crate) fn new(db: Arc<Database>) -> LedgerOutbox {
        LedgerOutbox { db }
    }

    /// Keeps `rows` (all or, on an error, none); one kept already, by its number, stays as it was.
    pub fn keep(&self, rows: &[LedgerRow]) -> Result<()> {
        Ok(outbox::push(&mut *self.db.lock()?, rows)?)
    }

    /// The oldest `limit` rows kept.
    pub fn oldest(&self, limit: usize) -> Result<Vec<LedgerRow>> {
        Ok(outbox::oldest(&*self.db.lock()?, limit)?)
    }

    /// Deletes the rows numbered `seqs`: Postgres has committed them.
    pub fn remove(&self, seqs: &[i64]) -> Result<()> {
        Ok(outbox::remove(&mut *self.db.lock()?, seqs)?)
    }

    /// How many rows wait.
    pub fn waiting(&self) -> Result<u64> {
        Ok(outbox::count(&*self.db.lock()?)?)
    }

    /// Reserves the next `block` attempt numbers and returns the first; none of them is handed
    /// out again, whatever happens after.
    pub fn reserve(&self, block: i64) -> Result<i64> {
        Ok(outbox::reserve(&mut *self.db.lock()?, block)?)
    }
}
