//! The admission runtime: formation authority, epoch lifecycle, leases,
//! revocation and the final-hop fence. This module is the [`Runtime`]
//! facade; each concern lives in a submodule named for it, and where the
//! records live is a [`store`]: one SQLite file (the embedded default) or an
//! etcd cluster (replicated), behind one interface.
//!
//! Every decision reads through the store and commits atomically only if
//! nothing it read changed (one `BEGIN IMMEDIATE` transaction on SQLite, one
//! compare-guarded transaction on etcd), so admission and the start of a
//! drain are serialized (invariant 3) and a crash leaves either the whole
//! decision or none of it. A formation fixes its authority when it is created
//! — the exact source epoch and at most one captured successor — and nothing
//! written later can widen it (invariant 1). The fence accepts a lease's MAC
//! token once, only for the registered artifact and configuration
//! (invariant 5). Every decision appends to a hash-chained audit log.

mod audit;
mod compose;
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
mod state;
pub mod store;
mod token;

use std::path::Path;

use ed25519_dalek::VerifyingKey;
use fcd_verify::certificate;

use crate::registry::Registry;
use fcd_model::summary::Summary;

pub use audit::AuditEntry;
pub use events::{AuditEvent, AuditRecord};
use fcd_model::refusal::RefusalCode;
pub use formation::Call;
pub use lease::{Lease, LeaseRow};
pub use refusal::{Refusal, StorageError};
pub use resolution::resolution_message;
pub use state::{EPOCH_TRANSITIONS, LEASE_TRANSITIONS, LeaseState, State};
#[cfg(feature = "test-hooks")]
pub use store::TxnKeys;
pub use store::{CallDurability, EtcdAccess, EvidenceKind, StoreSpec};

use refusal::refuse;
use store::{Commit, Recorded, View};

/// What the final hop measured: the artifact and configuration digests, and
/// the digest of the server's own configuration files when it reads any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Measured<'a> {
    pub artifact: &'a str,
    pub config: &'a str,
    pub server_config: Option<&'a str>,
}

pub struct Runtime {
    store: Box<dyn store::Store>,
    /// The store's token key: created once, never changed, so it is read once.
    mac: Vec<u8>,
}

impl Runtime {
    /// Opens (creating if needed) the SQLite runtime store at `path`.
    pub fn open(path: &Path) -> Result<Runtime, Refusal> {
        Runtime::open_store(&StoreSpec::Sqlite(path.to_owned()))
    }

    /// Opens the store `spec` names: a SQLite file, or an etcd cluster (which
    /// must answer now: a store that cannot be reached is refused, never guessed).
    pub fn open_store(spec: &StoreSpec) -> Result<Runtime, Refusal> {
        Runtime::open_store_with(spec, CallDurability::Full)
    }

    /// Opens the store `spec` names with per-call records as durable as
    /// `durability` says (authority and lifecycle decisions are always
    /// durable). [`CallDurability::ProcessCrash`] is a SQLite setting: an
    /// etcd store commits every decision to a quorum, and is refused with it
    /// rather than seeming to honour it.
    pub fn open_store_with(spec: &StoreSpec, durability: CallDurability) -> Result<Runtime, Refusal> {
        let mut store: Box<dyn store::Store> = match spec {
            StoreSpec::Sqlite(path) => Box::new(store::sqlite::SqliteStore::open(path, durability)?),
            StoreSpec::Etcd { .. } if durability != CallDurability::Full => {
                return Err(StorageError::new("call durability `process-crash` is a SQLite setting: etcd commits every decision to a quorum").into());
            }
            StoreSpec::Etcd { endpoints, prefix, access } => Box::new(store::etcd::EtcdStore::connect(endpoints, prefix, access)?),
        };
        let mac = store.mac_key()?;
        Ok(Runtime { store, mac })
    }

    /// What tells this store from every other, across restarts: a digest of
    /// its token key, which is created with the store and never changed. A
    /// store deleted and created again, or replaced by another, has another
    /// identity; the key itself cannot be recovered from it.
    pub fn identity(&self) -> String {
        fcd_model::canon::sha256(&[b"fcd runtime store identity\n".as_slice(), &self.mac].concat())
    }

    /// Registers the public key whose signatures resolve uncertain leases.
    pub fn set_resolver(&self, key: &VerifyingKey) -> Result<(), Refusal> {
        Ok(self.store.set_resolver(key.as_bytes())?)
    }

    /// Runs one decision in the store, committed (as durably as `commit`
    /// asks) only if it succeeds and nothing it read changed; returns what
    /// the last run of `decide` gave.
    fn decide<T>(&mut self, commit: Commit, mut decide: impl FnMut(&mut dyn View) -> Result<(T, Recorded), Refusal>) -> Result<T, Refusal> {
        let mut value = None;
        self.store.decide(commit, &mut |view| {
            let (v, decision) = decide(view)?;
            value = Some(v);
            Ok(decision)
        })?;
        value.ok_or_else(|| StorageError::new("the store committed a decision it never ran").into())
    }

    /// Registers admitted registry epoch `epoch_id` (ADVERTISED), from its
    /// stored manifest and summary, only if the registry's checks hold for it
    /// ([`Registry::admitted`]): its tool, artifact, configuration and summary
    /// digests are the summary's own, never given beside it. `server_config`
    /// is the digest of the server's own configuration files as measured
    /// now, bound to the epoch the first time it is registered (a later
    /// registration never changes what is bound). Returns the summary.
    pub fn register_admitted(&mut self, registry: &Registry, epoch_id: &str, server_config: Option<&str>) -> Result<Summary, Refusal> {
        let summary = match registry.admitted(epoch_id) {
            Err(e) => return Err(StorageError::new(format!("the registry: {e}")).into()),
            Ok(Err(problems)) => return refuse(RefusalCode::NotAdmitted, format!("epoch {epoch_id} does not verify: {}", problems.join("; "))),
            Ok(Ok(None)) => return refuse(RefusalCode::NotAdmitted, format!("no admitted epoch {epoch_id} in the registry")),
            Ok(Ok(Some(summary))) => summary,
        };
        let artifact = certificate::subject_digest(summary.artifact_digest.as_deref(), &summary.source.digest);
        let r = epoch::Registered { tool: &summary.tool, artifact, config: &summary.config_digest, summary: &summary.summary_digest, server_config };
        self.decide(Commit::Durable, |view| Ok(((), epoch::register(view, epoch_id, &r)?)))?;
        Ok(summary)
    }

    /// The digest of the server configuration files bound to an epoch, if any.
    pub fn server_config(&self, epoch: &str) -> Result<Option<String>, Refusal> {
        Ok(self.store.reader().epoch(epoch)?.and_then(|e| e.server_config))
    }

    /// Registers the epoch of a tool the operator pinned without a profile
    /// (the gateway's `pin` policy): the release's artifact and
    /// configuration, as an admitted epoch of the same release has them,
    /// and no summary (`none:TOOL`), so no call on it is ever decided or
    /// certified, only fenced to that release. Registering it again is a no-op.
    pub fn register_pinned(&mut self, epoch: &str, tool: &str, artifact: &str, config: &str) -> Result<(), Refusal> {
        let summary = format!("none:{tool}");
        let r = epoch::Registered { tool, artifact, config, summary: &summary, server_config: None };
        self.decide(Commit::Durable, |view| Ok(((), epoch::register(view, epoch, &r)?)))
    }

    /// Registers an epoch (ADVERTISED) from digests given as they are,
    /// without the registry's checks. Test builds only (`test-hooks`):
    /// everything else registers epochs through [`Runtime::register_admitted`]
    /// (or a pinned tool's through [`Runtime::register_pinned`]).
    #[cfg(feature = "test-hooks")]
    pub fn register_epoch(&mut self, epoch: &str, tool: &str, artifact: &str, config: &str, summary: &str) -> Result<(), Refusal> {
        let r = epoch::Registered { tool, artifact, config, summary, server_config: None };
        self.decide(Commit::Durable, |view| Ok(((), epoch::register(view, epoch, &r)?)))
    }

    /// Moves an epoch along its lifecycle ([`EPOCH_TRANSITIONS`]). DRAINING
    /// reaches STALE only when no admitted or uncertain lease remains on it.
    pub fn transition(&mut self, epoch: &str, to: State) -> Result<(), Refusal> {
        self.decide(Commit::Durable, |view| Ok(((), epoch::transition(view, epoch, to)?)))
    }

    /// Records a signed manual edge (every call of `tool`) from `source` to
    /// `target`; returns its id. A certificate is not recorded here: its
    /// evidence is its envelope ([`Runtime::add_certificate`]).
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
        if kind == EvidenceKind::Certificate {
            return refuse(RefusalCode::BadEvidence, "a certificate is evidence only as its signed DSSE envelope (add_certificate)");
        }
        let e = evidence::NewEvidence { kind, tool, args_digest, principal: None, source, target, valid_from, valid_until };
        self.decide(Commit::Durable, |view| evidence::add(view, &e))
    }

    /// Records a certificate from its DSSE envelope as evidence from `source`
    /// to `target`; returns its id. The envelope must verify at `now` under
    /// one of `issuers` (signature, issuer, validity interval), and its
    /// statement must name `target`'s tool, artifact, summary and
    /// configuration, `source`'s artifact and summary, and `contract` (the
    /// digest of the contract calls are formed under). The call it is for
    /// (tool, arguments digest, principal) and its window are the statement's.
    pub fn add_certificate(&mut self, envelope: &[u8], issuers: &[VerifyingKey], source: &str, target: &str, contract: &str, now: u64) -> Result<i64, Refusal> {
        let statement = certificate::verify_by(envelope, issuers, now).map_err(|r| Refusal { code: r.code, detail: r.detail })?;
        let want = evidence::CertificateFor { source, target, contract };
        self.decide(Commit::Durable, |view| evidence::certificate(view, &statement, &want))
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
        self.decide(Commit::Call, |view| formation::form(view, &call, successor, now, ttl))
    }

    /// Forms `call` and admits it in one decision (one transaction, one audit
    /// entry `{"op": "atomic", "steps": [form, admit(, fence)]}`), for a
    /// gateway that forms and runs a call at once: every check of
    /// [`Runtime::form`] and [`Runtime::admit`] is made, on the state the
    /// formation leaves, with nothing between them. The lease is on the
    /// source (a formable source is an admissible one). With `hop`, the
    /// final-hop check of [`Runtime::fence_measured`] is made in the same
    /// decision and the token is spent: the caller measured what will run
    /// and forwards the call next.
    pub fn form_admit(&mut self, call: &Call<'_>, successor: Option<i64>, now: u64, ttl: u64, hop: Option<Measured<'_>>) -> Result<Lease, Refusal> {
        let key = self.mac.clone();
        self.decide(Commit::Call, |view| {
            let (formation, formed) = formation::form(view, call, successor, now, ttl)?;
            let mut pending = compose::Pending::new(view);
            pending.apply(&formed.writes)?;
            let (lease, admitted) = lease::admit(&mut pending, &key, formation, now)?;
            let mut steps = vec![formed, admitted];
            if let Some(m) = hop {
                pending.apply(&steps[1].writes)?;
                let hop =
                    fence::Hop { token: &lease.token, artifact: m.artifact, config: m.config, server_config: m.server_config, generation: lease.generation };
                steps.push(fence::check(&mut pending, &key, &hop, now)?.1);
            }
            Ok((lease, compose::together(steps)))
        })
    }

    /// Admits a formed call, in one transaction with every lifecycle change:
    /// the exact source while it is ADVERTISED or HIDDEN_BUT_VALID; the
    /// captured successor only once the source is STALE and the successor is
    /// eligible. Returns a lease with a single-use token.
    pub fn admit(&mut self, formation: i64, now: u64) -> Result<Lease, Refusal> {
        let key = self.mac.clone();
        self.decide(Commit::Call, |view| lease::admit(view, &key, formation, now))
    }

    /// Marks an admitted lease completed. The commit does not wait for an
    /// fsync ([`Commit::Closing`]: a lost completion fails closed); the next
    /// decision, [`Runtime::flush`] or the store's close makes it durable.
    pub fn complete(&mut self, lease: i64) -> Result<(), Refusal> {
        self.decide(Commit::Closing, |view| Ok(((), lease::advance(view, lease, LeaseState::Completed)?)))
    }

    /// Puts every decision made so far on stable storage (a completion is
    /// committed without waiting for it).
    pub fn flush(&mut self) -> Result<(), StorageError> {
        self.store.flush()
    }

    /// Marks an admitted lease uncertain: its epoch stays DRAINING until a signed resolution.
    pub fn mark_uncertain(&mut self, lease: i64) -> Result<(), Refusal> {
        self.decide(Commit::Call, |view| Ok(((), lease::advance(view, lease, LeaseState::Uncertain)?)))
    }

    /// Resolves an uncertain lease with a signature of the registered resolver over
    /// [`resolution_message`]`(lease, result)`.
    pub fn resolve(&mut self, lease: i64, result: &str, signature: &[u8]) -> Result<(), Refusal> {
        self.decide(Commit::Durable, |view| Ok(((), resolution::settle(view, lease, result, signature)?)))
    }

    /// Revokes evidence (`evidence:ID`) or a formation (`formation:ID`).
    pub fn revoke(&mut self, handle: &str) -> Result<(), Refusal> {
        self.decide(Commit::Durable, |view| Ok(((), formation::revoke(view, handle)?)))
    }

    /// The final-hop check at `now`, before the handler runs: the token is
    /// the lease's own and unused, its formation (and the evidence a
    /// successor lease fell back on) is unrevoked and unexpired at `now`, the
    /// hop is for this generation, and the artifact and configuration about
    /// to run are the epoch's registered ones. Accepted once.
    pub fn fence(&mut self, token: &str, artifact: &str, config: &str, generation: i64, now: u64) -> Result<i64, Refusal> {
        self.fence_measured(token, &Measured { artifact, config, server_config: None }, generation, now)
    }

    /// [`Runtime::fence`] with what was measured, including the digest of the
    /// server's own configuration files, which must be the one bound to the
    /// epoch at registration (none bound: none measured).
    pub fn fence_measured(&mut self, token: &str, measured: &Measured<'_>, generation: i64, now: u64) -> Result<i64, Refusal> {
        let key = self.mac.clone();
        let hop = fence::Hop { token, artifact: measured.artifact, config: measured.config, server_config: measured.server_config, generation };
        self.decide(Commit::Call, |view| fence::check(view, &key, &hop, now))
    }

    /// Why per-call records may be missing from the store after a host
    /// crash (process-crash durability), if they may; while they may, no
    /// epoch retires.
    pub fn lost_calls(&self) -> Result<Option<String>, Refusal> {
        Ok(self.store.reader().lost_calls()?)
    }

    /// An operator's word that the calls [`Runtime::lost_calls`] reports are
    /// accounted for: recorded durably with an audit entry; returns the
    /// writers it names (none: nothing to acknowledge, nothing recorded).
    pub fn acknowledge_lost_calls(&mut self) -> Result<Vec<String>, Refusal> {
        self.store.acknowledge_lost_calls()
    }

    /// The state of an epoch.
    pub fn state(&self, epoch: &str) -> Result<Option<State>, Refusal> {
        Ok(self.store.reader().epoch(epoch)?.map(|e| e.state))
    }

    /// The artifact and configuration digests registered for an epoch.
    pub fn epoch_digests(&self, epoch: &str) -> Result<Option<(String, String)>, Refusal> {
        Ok(self.store.reader().epoch(epoch)?.map(|e| (e.artifact, e.config)))
    }

    /// The state of lease `id`, if there is such a lease (a query, read where the store is now).
    pub fn lease_state(&self, id: i64) -> Result<Option<LeaseState>, Refusal> {
        Ok(self.store.reader().lease(id)?.map(|l| l.state))
    }

    /// Every lease, for invariant checks and reports.
    pub fn leases(&self) -> Result<Vec<LeaseRow>, Refusal> {
        Ok(self.store.reader().all_leases()?.into_iter().map(LeaseRow::from).collect())
    }

    /// A formation's fixed authority: (source, captured successor).
    pub fn authority(&self, formation: i64) -> Result<Option<(String, Option<String>)>, Refusal> {
        formation::authority(&mut *self.store.reader(), formation)
    }

    /// Audit sequence numbers at which an epoch began draining and became stale.
    pub fn lifecycle_seqs(&self, epoch: &str) -> Result<(Option<i64>, Option<i64>), Refusal> {
        Ok(self.store.lifecycle_seqs(epoch)?)
    }

    /// The whole audit log, in sequence order, in the same format on every store.
    pub fn audit_entries(&self) -> Result<Vec<AuditEntry>, Refusal> {
        Ok(self.store.audit()?)
    }

    /// The audit log's last entry, read without the rest of the log.
    pub fn audit_last(&self) -> Result<Option<AuditEntry>, Refusal> {
        Ok(self.store.audit_last()?)
    }

    /// The audit log as typed events, in order (for `fcd audit check`). The
    /// chain is not checked here: see [`Runtime::verify_audit`].
    pub fn audit_events(&self) -> Result<Vec<AuditRecord>, Refusal> {
        Ok(self.store.audit()?.into_iter().map(|e| AuditRecord { seq: e.seq, event: AuditEvent::parse(&e.entry) }).collect())
    }

    /// Checks the audit log's hash chain; returns the number of entries.
    pub fn verify_audit(&self) -> Result<usize, Refusal> {
        audit::verify(&self.store.audit()?)
    }
}
