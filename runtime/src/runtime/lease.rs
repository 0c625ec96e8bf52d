//! Leases: admission of a formed call onto the one epoch its fixed authority
//! allows right now (the source while eligible; the captured successor only
//! once the source is STALE), the single-use token it carries, and the moves
//! of [`LeaseState`]'s table afterwards.

use serde::Serialize;
use serde_json::json;

use super::decision::{self, AdmissionRefusal, FormationFacts, PriorLease, SuccessorFacts, Target};
use super::refusal::{Refusal, StorageError, refuse};
use super::state::LeaseState;
use super::store::{self, EpochRecord, IdKind, LeaseRecord, Recorded, StoredLease, View, Write};
use super::token::{self, TokenBinding};
use fcd_model::refusal::RefusalCode;

/// A lease: the right to run one admitted invocation on one epoch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Lease {
    pub id: i64,
    pub formation: i64,
    pub epoch: String,
    pub generation: i64,
    /// The single-use final-hop token.
    pub token: String,
}

/// A snapshot of the store, for invariant checks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LeaseRow {
    pub id: i64,
    pub formation: i64,
    pub epoch: String,
    pub state: LeaseState,
    pub used: bool,
    /// Audit sequence number of the admission.
    pub admitted_seq: i64,
}

impl From<StoredLease> for LeaseRow {
    fn from(l: StoredLease) -> LeaseRow {
        let r = l.record;
        LeaseRow { id: r.id, formation: r.formation, epoch: r.epoch, state: r.state, used: r.used, admitted_seq: l.admitted_seq }
    }
}

/// Admits formation `id` at `now`: the lease (with its token) and the decision that records it.
pub(crate) fn admit(view: &mut dyn View, key: &[u8], id: i64, now: u64) -> Result<(Lease, Recorded), Refusal> {
    let target = target_epoch(view, id, now)?;
    let lease = view.next_id(IdKind::Lease)?;
    let nonce = store::nonce()?;
    let generation = target.generation;
    let binding = TokenBinding { id: lease, nonce: &nonce, epoch: &target.id, artifact: &target.artifact, config: &target.config, generation };
    let token = token::mint(key, &binding)?;
    let audit = json!({"op": "admit", "formation": id, "epoch": target.id, "lease": lease, "generation": generation, "now": now});
    let record = LeaseRecord { id: lease, formation: id, epoch: target.id.clone(), generation, nonce, state: LeaseState::Admitted, used: false };
    // The formation records its latest lease: on etcd, two admissions of one formation both read and write its key, so one of them retries.
    let writes = vec![Write::NewLease(record), Write::LatestLease { formation: id, lease }];
    Ok((Lease { id: lease, formation: id, epoch: target.id, generation, token }, Recorded { writes, audit }))
}

/// The epoch formation `id` may start a lease on now: its source while
/// eligible, its captured successor once the source is STALE.
fn target_epoch(view: &mut dyn View, id: i64, now: u64) -> Result<EpochRecord, Refusal> {
    let Some(f) = view.formation(id)? else {
        return refuse(RefusalCode::UnknownFormation, format!("no formation {id}"));
    };
    let latest = match f.latest_lease {
        None => None,
        Some(l) => {
            let Some(prior) = view.lease(l)? else {
                return Err(StorageError::new(format!("formation {id} names lease {l} as its latest, which is not stored")).into());
            };
            Some(PriorLease { state: prior.state, used: prior.used })
        }
    };
    let captured = f.successor.is_some() && f.successor_evidence.is_some();
    let facts = FormationFacts { revoked: f.revoked, expires_at: f.expires_at, captured, latest };
    let source = f.source;
    let Some(source_epoch) = view.epoch(&source)? else {
        return refuse(RefusalCode::UnknownEpoch, format!("no epoch {source}"));
    };
    let successor = f.successor.unwrap_or_default();
    // Read only once the source is STALE and a successor was captured.
    let mut successor_epoch = None;
    let mut valid_until = 0;
    let read_successor = || -> Result<SuccessorFacts, Refusal> {
        let evidence_id = f.successor_evidence.unwrap_or_default();
        let Some(ev) = view.evidence(evidence_id)? else {
            return Err(StorageError::new(format!("formation {id} captured evidence {evidence_id}, which is not stored")).into());
        };
        valid_until = ev.valid_until;
        successor_epoch = view.epoch(&successor)?;
        Ok(SuccessorFacts { evidence_revoked: ev.revoked, evidence_valid_until: ev.valid_until, state: successor_epoch.as_ref().map(|e| e.state) })
    };
    let decided = decision::admission(&facts, now as i64, source_epoch.state, read_successor)?;
    match decided {
        Ok(Target::Source) => Ok(source_epoch),
        Ok(Target::Successor) => successor_epoch.ok_or_else(|| StorageError::new(format!("{successor} was eligible and is gone")).into()),
        Err(r) => {
            let detail = match r {
                AdmissionRefusal::Revoked => format!("formation {id} is revoked"),
                AdmissionRefusal::Expired => format!("formation {id} expired at {}", f.expires_at),
                AdmissionRefusal::InFlight(state) => format!(
                    "formation {id} already has lease {} ({state}{}): a formed call runs at most once",
                    f.latest_lease.unwrap_or_default(),
                    if latest.is_some_and(|l| l.used) { ", passed the fence" } else { "" }
                ),
                AdmissionRefusal::SourceDraining => format!("{source} is draining: no new leases"),
                AdmissionRefusal::NotCaptured => format!("{source} is stale and formation {id} captured no successor"),
                AdmissionRefusal::EvidenceRevoked => format!("the evidence for {successor} is revoked"),
                AdmissionRefusal::EvidenceExpired => format!("the evidence for {successor} expired at {valid_until}"),
                AdmissionRefusal::SuccessorIneligible(Some(state)) => format!("{successor} is {}", state.as_str()),
                AdmissionRefusal::SuccessorIneligible(None) => format!("{successor} is not a registered epoch"),
            };
            refuse(r.code(), detail)
        }
    }
}

/// Moves lease `id` to `to` if the table allows it from its state.
pub(crate) fn advance(view: &mut dyn View, id: i64, to: LeaseState) -> Result<Recorded, Refusal> {
    let Some(from) = view.lease(id)?.map(|l| l.state) else { return refuse(RefusalCode::UnknownLease, format!("no lease {id}")) };
    if !decision::lease_move(from, to) {
        return refuse(RefusalCode::BadTransition, format!("lease {id} is {from}, cannot become {to}"));
    }
    Ok(Recorded { writes: vec![Write::LeaseState { id, to }], audit: json!({"op": to.as_str(), "lease": id}) })
}
