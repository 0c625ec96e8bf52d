//! The one interface between the runtime's decisions and where they are
//! kept. A decision (admission, drain, retirement, revocation, a fence pass…)
//! is a function that reads records through a [`View`] and returns a
//! [`Recorded`]: the writes it makes and its audit entry. A [`Store`] commits
//! the writes and the entry atomically, and only if nothing the decision read
//! has changed since; otherwise it runs the decision again on fresh reads.
//!
//! Two stores implement it: [`sqlite`] (the embedded default: the decision
//! runs inside one `BEGIN IMMEDIATE` transaction, so nothing can change under
//! it) and [`etcd`] (replicated: the decision's reads become the compares of
//! one etcd transaction). The decisions never see which one they run on.

pub(crate) mod etcd;
mod spec;
pub(crate) mod sqlite;

use serde::Serialize;

use super::audit::AuditEntry;
use super::refusal::{Refusal, StorageError};
use super::state::{LeaseState, State};

pub use spec::{EtcdAccess, StoreSpec};

/// An epoch as registered, with its lifecycle state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EpochRecord {
    pub id: String,
    pub tool: String,
    pub artifact: String,
    pub config: String,
    pub summary: String,
    /// The digest of the server's own configuration files (their bytes, any
    /// format), bound when the epoch was registered; `None` when none was.
    /// Registering the epoch again never changes it.
    pub server_config: Option<String>,
    pub state: State,
    /// The generation a lease on this epoch carries in its token.
    pub generation: i64,
}

/// One piece of compatibility evidence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EvidenceRecord {
    pub id: i64,
    /// A certificate is bound to one arguments digest.
    pub kind: EvidenceKind,
    pub tool: String,
    pub args_digest: Option<String>,
    /// The principal a certificate was issued for (a certificate is for one call).
    pub principal: Option<String>,
    pub source: String,
    pub target: String,
    pub valid_from: i64,
    pub valid_until: i64,
    pub revoked: bool,
}

/// A formation: the call and its fixed authority (source, at most one captured successor).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FormationRecord {
    pub id: i64,
    pub snapshot: String,
    pub tool: String,
    pub args_digest: String,
    pub principal: String,
    pub source: String,
    pub successor: Option<String>,
    pub successor_evidence: Option<i64>,
    pub expires_at: i64,
    pub revoked: bool,
    /// The lease admission last started for it (admission reads it to run a formed call at most once).
    pub latest_lease: Option<i64>,
}

/// A lease. Its admission sequence number is the store's to give (see [`View::all_leases`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LeaseRecord {
    pub id: i64,
    pub formation: i64,
    pub epoch: String,
    pub generation: i64,
    pub nonce: String,
    pub state: LeaseState,
    pub used: bool,
}

/// Which numbered record a fresh id is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum IdKind {
    Evidence,
    Formation,
    Lease,
}

impl IdKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            IdKind::Evidence => "evidence",
            IdKind::Formation => "formation",
            IdKind::Lease => "lease",
        }
    }
}

/// One write of a decision. Records named by id were read by the same
/// decision (a store may rely on that); the sequence numbers the invariants
/// order by (admission, drain, retirement) are the decision's own audit
/// sequence number, which the store stamps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Write {
    /// A new epoch (the decision read it absent).
    NewEpoch(EpochRecord),
    /// A lifecycle move; DRAINING and STALE record the decision's sequence number.
    EpochState {
        epoch: String,
        to: State,
    },
    NewEvidence(EvidenceRecord),
    NewFormation(FormationRecord),
    RevokeEvidence(i64),
    RevokeFormation(i64),
    /// Formation `formation`'s latest lease is now `lease` (written by the admission that starts it).
    LatestLease {
        formation: i64,
        lease: i64,
    },
    /// A new lease (state admitted, unused); its admission sequence number is the decision's.
    NewLease(LeaseRecord),
    LeaseState {
        id: i64,
        to: LeaseState,
    },
    /// The lease's token passed the fence.
    LeaseUsed(i64),
    /// A signed resolution of an uncertain lease (signature in hex).
    Resolution {
        lease: i64,
        outcome: String,
        signature: String,
    },
}

/// What a decision commits: its writes and one audit entry.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Recorded {
    pub writes: Vec<Write>,
    pub audit: serde_json::Value,
}

/// One lease as the invariant checks see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StoredLease {
    pub record: LeaseRecord,
    /// Audit sequence number of its admission.
    pub admitted_seq: i64,
}

/// Compatibility evidence for a successor: a generated certificate (one call)
/// or a signed manual edge (every call of a tool).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum EvidenceKind {
    Certificate,
    Edge,
}

impl EvidenceKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            EvidenceKind::Certificate => "certificate",
            EvidenceKind::Edge => "edge",
        }
    }

    /// Reads a stored kind; an unknown one is a storage error naming it.
    pub(crate) fn parse(s: &str) -> Result<EvidenceKind, StorageError> {
        [EvidenceKind::Certificate, EvidenceKind::Edge]
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| StorageError::new(format!("unknown evidence kind `{s}` in the store")))
    }
}

/// Reads a decision makes. Each returns what the store holds now; a record
/// the runtime cannot read (an unknown state or kind) is a [`StorageError`].
pub(crate) trait View {
    fn epoch(&mut self, id: &str) -> Result<Option<EpochRecord>, StorageError>;
    fn evidence(&mut self, id: i64) -> Result<Option<EvidenceRecord>, StorageError>;
    fn formation(&mut self, id: i64) -> Result<Option<FormationRecord>, StorageError>;
    fn lease(&mut self, id: i64) -> Result<Option<LeaseRecord>, StorageError>;
    /// How many admitted or uncertain leases hold `epoch` open.
    fn open_leases(&mut self, epoch: &str) -> Result<usize, StorageError>;
    /// The resolver's public key, if one is registered and reads as a key.
    fn resolver(&mut self) -> Result<Option<[u8; 32]>, StorageError>;
    /// An id no record of this kind has (ids increase; they need not be dense).
    fn next_id(&mut self, kind: IdKind) -> Result<i64, StorageError>;
    /// Every lease, by id (queries only).
    fn all_leases(&mut self) -> Result<Vec<StoredLease>, StorageError>;
    /// Why per-call records may have been lost, if they may: a writer that
    /// committed them without fsync ([`CallDurability::ProcessCrash`]) was
    /// still open when its host went down, and no operator has acknowledged
    /// it since. `None` on a store that never loses a commit.
    fn lost_calls(&mut self) -> Result<Option<String>, StorageError>;
}

/// How durable a decision's commit must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Commit {
    /// Authority and lifecycle (epochs, evidence, revocation, resolution):
    /// always on stable storage before the decision returns.
    Durable,
    /// A per-call record (formation, admission, fence, uncertainty): as the
    /// store's [`CallDurability`] says.
    Call,
    /// A completion: the one per-call record whose loss fails closed. A
    /// completion lost in a host crash leaves its lease admitted, which
    /// holds the epoch open (it cannot retire) and the formation spent (it
    /// is not admitted again) until an operator resolves it; nothing runs
    /// twice and nothing retires early. So it does not wait for stable
    /// storage: it reaches it with the next commit that does (any other
    /// decision in `full`), with [`Store::flush`], or when the store closes.
    Closing,
}

/// How durable the per-call records are, an operator's choice for a
/// gateway (`call_durability` in its TOML); authority and lifecycle
/// decisions are durable whatever it says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CallDurability {
    /// Every commit is on stable storage before it returns (SQLite: fsync).
    #[default]
    Full,
    /// Per-call commits survive a crash of the process, not of the host:
    /// SQLite WAL without fsync (`synchronous = NORMAL`). A host crash can
    /// lose only the last per-call commits, never one before a durable
    /// commit; the runtime then refuses to retire any epoch until an
    /// operator acknowledges it. SQLite only: etcd commits every decision to
    /// a quorum.
    ProcessCrash,
}

impl CallDurability {
    /// Reads `full` or `process-crash`.
    pub fn parse(text: &str) -> Result<CallDurability, String> {
        match text {
            "full" => Ok(CallDurability::Full),
            "process-crash" => Ok(CallDurability::ProcessCrash),
            other => Err(format!("call durability `{other}`: give \"full\" or \"process-crash\"")),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            CallDurability::Full => "full",
            CallDurability::ProcessCrash => "process-crash",
        }
    }
}

/// A decision as a store runs it: it may run more than once, on fresh reads each time.
pub(crate) type DecideFn<'a> = dyn FnMut(&mut dyn View) -> Result<Recorded, Refusal> + 'a;

/// Where the runtime's records live. Implementations must commit a
/// decision's writes and audit entry all together or not at all, and only
/// while everything the decision read is unchanged; a store that cannot be
/// reached refuses (a [`StorageError`]) and never decides from a copy.
pub(crate) trait Store: Send {
    /// Runs `decide` and commits its decision as durably as `commit` asks;
    /// returns the decision's audit sequence number.
    fn decide(&mut self, commit: Commit, decide: &mut DecideFn<'_>) -> Result<i64, Refusal>;
    /// A view for queries, outside any decision.
    fn reader(&self) -> Box<dyn View + '_>;
    /// Puts every commit made so far on stable storage (SQLite: fsyncs the
    /// WAL when a commit since the last fsync was written without one).
    fn flush(&mut self) -> Result<(), StorageError> {
        Ok(())
    }
    /// Audit sequence numbers at which an epoch began draining and became stale.
    fn lifecycle_seqs(&self, epoch: &str) -> Result<(Option<i64>, Option<i64>), StorageError>;
    /// The store's MAC key for lease tokens, created once from the OS's randomness.
    fn mac_key(&mut self) -> Result<Vec<u8>, StorageError>;
    /// Registers the resolver's public key, replacing any before it.
    fn set_resolver(&self, key: &[u8; 32]) -> Result<(), StorageError>;
    /// The whole audit log, in sequence order.
    fn audit(&self) -> Result<Vec<AuditEntry>, StorageError>;
    /// The audit log's last entry (the highest sequence number), if any.
    fn audit_last(&self) -> Result<Option<AuditEntry>, StorageError> {
        Ok(self.audit()?.pop())
    }
    /// Records (durably, with an audit entry) that an operator accounted for
    /// the calls [`View::lost_calls`] reports; returns what was acknowledged.
    fn acknowledge_lost_calls(&mut self) -> Result<Vec<String>, Refusal>;
    /// The keys each decision committed since the last call compared and
    /// wrote, oldest first (etcd only: SQLite has no keys).
    #[cfg(feature = "test-hooks")]
    fn take_key_log(&mut self) -> Vec<TxnKeys> {
        Vec::new()
    }
}

#[cfg(feature = "test-hooks")]
/// The keys one committed decision's etcd transaction compared (everything
/// the decision read; a counted range ends in `*`) and wrote (put or
/// deleted), without the store's prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnKeys {
    pub read: Vec<String>,
    pub written: Vec<String>,
}

/// A fresh random nonce, hex.
pub(crate) fn nonce() -> Result<String, StorageError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| StorageError::new(format!("no randomness: {e}")))?;
    Ok(fcd_model::canon::hex(&bytes))
}
