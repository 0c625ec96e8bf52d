//! The admission runtime: formation authority, epoch lifecycle, leases,
//! revocation and the final-hop fence, in one SQLite file. This module is
//! the [`Runtime`] facade; each concern lives in a submodule named for it.
//!
//! Every decision runs in one `BEGIN IMMEDIATE` transaction, so admission and
//! the start of a drain are serialized (invariant 3) and a crash leaves either
//! the whole decision or none of it. A formation fixes its authority when it is
//! created — the exact source epoch and at most one captured successor — and
//! nothing written later can widen it (invariant 1). The fence accepts a
//! lease's MAC token once, only for the registered artifact and configuration
//! (invariant 5). Every operation appends to a hash-chained audit log.

mod audit;
pub mod decision;
mod epoch;
mod events;
mod evidence;
mod fence;
mod formation;
#[cfg(feature = "test-hooks")]
mod hooks;
mod lease;
mod refusal;
mod resolution;
mod schema;
mod secrets;
mod state;
mod token;

use std::path::Path;

use ed25519_dalek::VerifyingKey;
use rusqlite::{Connection, TransactionBehavior};

pub use events::{AuditEvent, AuditRecord};
pub use evidence::EvidenceKind;
pub use lease::{Lease, LeaseRow};
pub use refusal::{Refusal, RefusalCode, StorageError};
pub use resolution::resolution_message;
pub use state::{EPOCH_TRANSITIONS, LEASE_TRANSITIONS, LeaseState, State};

pub struct Runtime {
    conn: Connection,
}

impl Runtime {
    /// Opens (creating if needed) the runtime store at `path`.
    pub fn open(path: &Path) -> Result<Runtime, Refusal> {
        let conn = schema::open(path)?;
        secrets::mac_key(&conn)?;
        Ok(Runtime { conn })
    }

    /// Registers the public key whose signatures resolve uncertain leases.
    pub fn set_resolver(&self, key: &VerifyingKey) -> Result<(), Refusal> {
        Ok(secrets::set_resolver(&self.conn, key)?)
    }

    fn txn(&mut self) -> Result<rusqlite::Transaction<'_>, StorageError> {
        Ok(self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?)
    }

    /// Runs `decide` in one `BEGIN IMMEDIATE` transaction, committed only if it succeeds.
    fn decide<T>(&mut self, decide: impl FnOnce(&Connection) -> Result<T, Refusal>) -> Result<T, Refusal> {
        let tx = self.txn()?;
        let value = decide(&tx)?;
        tx.commit()?;
        Ok(value)
    }

    /// Registers an epoch (ADVERTISED). Registering it again is a no-op.
    pub fn register_epoch(&mut self, epoch: &str, tool: &str, artifact: &str, config: &str, summary: &str) -> Result<(), Refusal> {
        self.decide(|tx| Ok(epoch::register(tx, epoch, tool, artifact, config, summary)?))
    }

    /// Moves an epoch along its lifecycle ([`EPOCH_TRANSITIONS`]). DRAINING
    /// reaches STALE only when no admitted or uncertain lease remains on it.
    pub fn transition(&mut self, epoch: &str, to: State) -> Result<(), Refusal> {
        self.decide(|tx| epoch::transition(tx, epoch, to))
    }

    /// Records compatibility evidence from `source` to `target`; returns its id.
    #[allow(clippy::too_many_arguments)] // reason: the evidence record is this flat list of fields
    pub fn add_evidence(
        &mut self,
        kind: EvidenceKind,
        tool: &str,
        args_digest: Option<&str>,
        source: &str,
        target: &str,
        valid_from: u64,
        valid_until: u64,
    ) -> Result<i64, Refusal> {
        let e = evidence::NewEvidence { kind, tool, args_digest, source, target, valid_from, valid_until };
        self.decide(|tx| evidence::add(tx, &e))
    }

    /// Forms a call: binds the snapshot, tool, arguments and principal to the
    /// exact source epoch and, if `successor` names evidence that exists and
    /// verifies now, that one successor. Authority is fixed here.
    #[allow(clippy::too_many_arguments)] // reason: the formation record is this flat list of fields
    pub fn form(
        &mut self,
        snapshot: &str,
        tool: &str,
        args_digest: &str,
        principal: &str,
        source: &str,
        successor: Option<i64>,
        now: u64,
        ttl: u64,
    ) -> Result<i64, Refusal> {
        let call = formation::Call { snapshot, tool, args_digest, principal, source };
        self.decide(|tx| formation::form(tx, &call, successor, now, ttl))
    }

    /// Admits a formed call, in one transaction with every lifecycle change:
    /// the exact source while it is ADVERTISED or HIDDEN_BUT_VALID; the
    /// captured successor only once the source is STALE and the successor is
    /// eligible. Returns a lease with a single-use token.
    pub fn admit(&mut self, formation: i64, now: u64) -> Result<Lease, Refusal> {
        let key = secrets::mac_key(&self.conn)?;
        self.decide(|tx| lease::admit(tx, &key, formation, now))
    }

    /// Marks an admitted lease completed.
    pub fn complete(&mut self, lease: i64) -> Result<(), Refusal> {
        self.decide(|tx| lease::advance(tx, lease, LeaseState::Completed))
    }

    /// Marks an admitted lease uncertain: its epoch stays DRAINING until a signed resolution.
    pub fn mark_uncertain(&mut self, lease: i64) -> Result<(), Refusal> {
        self.decide(|tx| lease::advance(tx, lease, LeaseState::Uncertain))
    }

    /// Resolves an uncertain lease with a signature of the registered resolver over
    /// [`resolution_message`]`(lease, result)`.
    pub fn resolve(&mut self, lease: i64, result: &str, signature: &[u8]) -> Result<(), Refusal> {
        resolution::check_signature(&self.conn, lease, result, signature)?;
        self.decide(|tx| resolution::settle(tx, lease, result, signature))
    }

    /// Revokes evidence (`evidence:ID`) or a formation (`formation:ID`).
    pub fn revoke(&mut self, handle: &str) -> Result<(), Refusal> {
        self.decide(|tx| formation::revoke(tx, handle))
    }

    /// The final-hop check, before the handler runs: the token is the lease's
    /// own, unused, for this generation, and the artifact and configuration
    /// about to run are the epoch's registered ones. Accepted once.
    pub fn fence(&mut self, token: &str, artifact: &str, config: &str, generation: i64) -> Result<i64, Refusal> {
        let key = secrets::mac_key(&self.conn)?;
        let hop = fence::Hop { token, artifact, config, generation };
        self.decide(|tx| fence::check(tx, &key, &hop))
    }

    /// The state of an epoch.
    pub fn state(&self, epoch: &str) -> Result<Option<State>, Refusal> {
        Ok(epoch::state_of(&self.conn, epoch)?)
    }

    /// The artifact and configuration digests registered for an epoch.
    pub fn epoch_digests(&self, epoch: &str) -> Result<Option<(String, String)>, Refusal> {
        Ok(epoch::digests(&self.conn, epoch)?)
    }

    /// Every lease, for invariant checks and reports.
    pub fn leases(&self) -> Result<Vec<LeaseRow>, Refusal> {
        Ok(lease::all(&self.conn)?)
    }

    /// A formation's fixed authority: (source, captured successor).
    pub fn authority(&self, formation: i64) -> Result<Option<(String, Option<String>)>, Refusal> {
        Ok(formation::authority(&self.conn, formation)?)
    }

    /// Audit sequence numbers at which an epoch began draining and became stale.
    pub fn lifecycle_seqs(&self, epoch: &str) -> Result<(Option<i64>, Option<i64>), Refusal> {
        Ok(epoch::lifecycle_seqs(&self.conn, epoch)?)
    }

    /// The audit log as typed events, in order (for `fcd audit check`). The
    /// chain is not checked here: see [`Runtime::verify_audit`].
    pub fn audit_events(&self) -> Result<Vec<AuditRecord>, Refusal> {
        Ok(audit::entries(&self.conn)?.into_iter().map(|(seq, entry)| AuditRecord { seq, event: AuditEvent::parse(&entry) }).collect())
    }

    /// Checks the audit log's hash chain; returns the number of entries.
    pub fn verify_audit(&self) -> Result<usize, Refusal> {
        audit::verify(&self.conn)
    }
}
