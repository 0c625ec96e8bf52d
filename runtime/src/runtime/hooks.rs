//! Test hooks, compiled only with the `test-hooks` feature (which release
//! builds never enable): an admission that stalls inside its decision (inside
//! the SQLite transaction; between the reads and the commit on etcd), so a
//! test can kill the process mid-decision and check that the store holds all
//! of the decision or none of it; and the log of the keys each etcd
//! transaction compared and wrote, so a test and the bench can show that
//! independent calls touch disjoint keys.

use std::time::Duration;

use super::refusal::Refusal;
use super::store::{Commit, TxnKeys};
use super::{EvidenceKind, Lease, Runtime, evidence, lease};

impl Runtime {
    /// The keys of each decision committed since the last call, oldest first
    /// (empty on SQLite).
    pub fn take_key_log(&mut self) -> Vec<TxnKeys> {
        self.store.take_key_log()
    }

    /// Admission that sleeps inside its decision before committing: for the crash test.
    pub fn admit_and_stall(&mut self, formation: i64, now: u64, stall: Duration) -> Result<Lease, Refusal> {
        let key = self.mac.clone();
        self.decide(Commit::Call, |view| {
            let decided = lease::admit(view, &key, formation, now)?;
            std::thread::sleep(stall);
            Ok(decided)
        })
    }

    /// Records certificate evidence for one call (tool, arguments digest,
    /// principal) from its fields, unsigned: for tests only.
    #[allow(clippy::too_many_arguments)] // reason: the evidence record is this flat list of fields
    pub fn add_unverified_certificate(
        &mut self,
        tool: &str,
        args_digest: &str,
        principal: &str,
        source: &str,
        target: &str,
        valid_from: u64,
        valid_until: u64,
    ) -> Result<i64, Refusal> {
        let e = evidence::NewEvidence {
            kind: EvidenceKind::Certificate,
            tool,
            args_digest: Some(args_digest),
            principal: Some(principal),
            source,
            target,
            valid_from,
            valid_until,
        };
        self.decide(Commit::Durable, |view| evidence::add(view, &e))
    }
}
