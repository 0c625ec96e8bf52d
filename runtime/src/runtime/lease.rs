//! Leases: admission of a formed call onto the one epoch its fixed authority
//! allows right now (the source while eligible; the captured successor only
//! once the source is STALE), the single-use token it carries, and the moves
//! of [`LeaseState`]'s table afterwards.

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use super::decision::{self, AdmissionRefusal, FormationFacts, SuccessorFacts, Target};
use super::refusal::{Refusal, RefusalCode, StorageError, refuse};
use super::state::LeaseState;
use super::token::{self, Binding};
use super::{audit, epoch, evidence, formation};
use crate::canon;

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

/// Admits formation `id` at `now` inside `tx`; the caller commits.
pub(crate) fn admit(tx: &Connection, key: &[u8], id: i64, now: u64) -> Result<Lease, Refusal> {
    let target = target_epoch(tx, id, now)?;
    let (artifact, config, generation): (String, String, i64) =
        tx.query_row("SELECT artifact_digest, config_digest, revision FROM epochs WHERE epoch_id = ?1", params![target], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })?;
    let mut nonce = [0u8; 16];
    getrandom::fill(&mut nonce).map_err(|e| StorageError::new(format!("no randomness: {e}")))?;
    let nonce = canon::hex(&nonce);
    let lease = audit::next_id(tx, "leases")?;
    let seq = audit::append(tx, &serde_json::json!({"op": "admit", "formation": id, "epoch": target, "lease": lease, "generation": generation, "now": now}))?;
    tx.execute(
        "INSERT INTO leases (formation, epoch, generation, nonce, state, admitted_seq) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![id, target, generation, nonce, LeaseState::Admitted.as_str(), seq],
    )?;
    let lease = audit::same_id(tx, lease)?;
    let binding = Binding { id: lease, nonce: &nonce, epoch: &target, artifact: &artifact, config: &config, generation };
    let token = token::mint(key, &binding);
    Ok(Lease { id: lease, formation: id, epoch: target, generation, token })
}

/// The epoch formation `id` may start a lease on now: its source while
/// eligible, its captured successor once the source is STALE.
fn target_epoch(tx: &Connection, id: i64, now: u64) -> Result<String, Refusal> {
    let Some(f) = formation::get(tx, id)? else {
        return refuse(RefusalCode::UnknownFormation, format!("no formation {id}"));
    };
    let facts = FormationFacts { revoked: f.revoked, expires_at: f.expires_at, captured: f.successor.is_some() && f.successor_evidence.is_some() };
    let source = f.source;
    let Some(source_state) = epoch::state_of(tx, &source)? else {
        return refuse(RefusalCode::UnknownEpoch, format!("no epoch {source}"));
    };
    let successor = f.successor.unwrap_or_default();
    let read_successor = || -> Result<SuccessorFacts, Refusal> {
        let evidence_id = f.successor_evidence.unwrap_or_default();
        let Some(ev) = evidence::get(tx, evidence_id)? else {
            return Err(StorageError::new(format!("formation {id} captured evidence {evidence_id}, which is not stored")).into());
        };
        Ok(SuccessorFacts { evidence_revoked: ev.revoked, evidence_valid_until: ev.valid_until, state: epoch::state_of(tx, &successor)? })
    };
    match decision::admission(&facts, now as i64, source_state, read_successor)? {
        Ok(Target::Source) => Ok(source),
        Ok(Target::Successor) => Ok(successor),
        Err(r) => {
            let detail = match r {
                AdmissionRefusal::Revoked => format!("formation {id} is revoked"),
                AdmissionRefusal::Expired => format!("formation {id} expired at {}", f.expires_at),
                AdmissionRefusal::SourceDraining => format!("{source} is draining: no new leases"),
                AdmissionRefusal::NotCaptured => format!("{source} is stale and formation {id} captured no successor"),
                AdmissionRefusal::EvidenceRevoked => format!("the evidence for {successor} is revoked"),
                AdmissionRefusal::EvidenceExpired => format!("the evidence for {successor} has expired"),
                AdmissionRefusal::SuccessorIneligible(Some(state)) => format!("{successor} is {}", state.as_str()),
                AdmissionRefusal::SuccessorIneligible(None) => format!("{successor} is not a registered epoch"),
            };
            refuse(r.code(), detail)
        }
    }
}

/// The state of lease `id`, `None` if there is no such lease.
pub(crate) fn state_of(conn: &Connection, id: i64) -> Result<Option<LeaseState>, StorageError> {
    let s: Option<String> = conn.query_row("SELECT state FROM leases WHERE id = ?1", params![id], |r| r.get(0)).optional()?;
    s.map(|s| LeaseState::parse(&s).map_err(|e| StorageError::new(format!("lease {id}: {}", e.detail)))).transpose()
}

/// Moves lease `id` to `to` if the table allows it from its state.
pub(crate) fn advance(tx: &Connection, id: i64, to: LeaseState) -> Result<(), Refusal> {
    let Some(from) = state_of(tx, id)? else { return refuse(RefusalCode::UnknownLease, format!("no lease {id}")) };
    if !decision::lease_move(from, to) {
        return refuse(RefusalCode::BadTransition, format!("lease {id} is {from}, cannot become {to}"));
    }
    set_state(tx, id, to)?;
    audit::append(tx, &serde_json::json!({"op": to.as_str(), "lease": id}))?;
    Ok(())
}

pub(crate) fn set_state(tx: &Connection, id: i64, to: LeaseState) -> Result<(), StorageError> {
    tx.execute("UPDATE leases SET state = ?2 WHERE id = ?1", params![id, to.as_str()])?;
    Ok(())
}

/// Every lease, by id.
pub(crate) fn all(conn: &Connection) -> Result<Vec<LeaseRow>, StorageError> {
    let mut stmt = conn.prepare("SELECT id, formation, epoch, state, used, admitted_seq FROM leases ORDER BY id")?;
    let rows: Vec<(i64, i64, String, String, i64, i64)> =
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)))?.collect::<Result<_, _>>()?;
    rows.into_iter()
        .map(|(id, formation, epoch, state, used, admitted_seq)| {
            let state = LeaseState::parse(&state).map_err(|e| StorageError::new(format!("lease {id}: {}", e.detail)))?;
            Ok(LeaseRow { id, formation, epoch, state, used: used != 0, admitted_seq })
        })
        .collect()
}
