//! Test hooks, compiled only with the `test-hooks` feature (which release
//! builds never enable): an admission that stalls inside its transaction, so
//! a test can kill the process mid-decision and check that the store holds
//! all of the decision or none of it.

use std::time::Duration;

use super::refusal::Refusal;
use super::{Lease, Runtime, lease, secrets};

impl Runtime {
    /// Admission that sleeps inside its transaction before committing: for the crash test.
    pub fn admit_and_stall(&mut self, formation: i64, now: u64, stall: Duration) -> Result<Lease, Refusal> {
        let key = secrets::mac_key(&self.conn)?;
        let tx = self.txn()?;
        let lease = lease::admit(&tx, &key, formation, now)?;
        std::thread::sleep(stall);
        tx.commit()?;
        Ok(lease)
    }
}
