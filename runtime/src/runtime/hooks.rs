//! Test hooks, compiled only with the `test-hooks` feature (which release
//! builds never enable): an admission that stalls inside its decision (inside
//! the SQLite transaction; between the reads and the commit on etcd), so a
//! test can kill the process mid-decision and check that the store holds all
//! of the decision or none of it.

use std::time::Duration;

use super::refusal::Refusal;
use super::{Lease, Runtime, lease};

impl Runtime {
    /// Admission that sleeps inside its decision before committing: for the crash test.
    pub fn admit_and_stall(&mut self, formation: i64, now: u64, stall: Duration) -> Result<Lease, Refusal> {
        let key = self.mac.clone();
        self.decide(|view| {
            let decided = lease::admit(view, &key, formation, now)?;
            std::thread::sleep(stall);
            Ok(decided)
        })
    }
}
