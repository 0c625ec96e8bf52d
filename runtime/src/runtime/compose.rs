//! One decision made of several steps, committed together: each step is an
//! ordinary decision (formation, admission, the fence…) that reads through
//! [`Pending`], a view of the store with the writes of the steps before it
//! applied, so a step reads the formation or lease an earlier step created
//! exactly as it would read it from the store. The steps' writes are
//! concatenated in order, and their audit entries become one entry
//! (`{"op": "atomic", "steps": [...]}`): the store still commits one
//! decision, with one audit entry, in one transaction.
//!
//! Composition only removes interleavings: every step makes every check it
//! makes alone, on the state the steps before it leave, and nothing else
//! can run between them.

use std::collections::BTreeMap;

use serde_json::json;

use super::refusal::StorageError;
use super::store::{EpochRecord, EvidenceRecord, FormationRecord, IdKind, LeaseRecord, Recorded, StoredLease, View, Write};

/// A view of the store with some writes not yet committed applied on top.
pub(crate) struct Pending<'v> {
    view: &'v mut dyn View,
    epochs: BTreeMap<String, EpochRecord>,
    evidence: BTreeMap<i64, EvidenceRecord>,
    formations: BTreeMap<i64, FormationRecord>,
    /// Leases written, with whether each held its epoch open before (None: new).
    leases: BTreeMap<i64, (LeaseRecord, Option<bool>)>,
    /// The highest id of each kind a write created.
    created: BTreeMap<IdKind, i64>,
}

impl<'v> Pending<'v> {
    pub(crate) fn new(view: &'v mut dyn View) -> Pending<'v> {
        Pending { view, epochs: BTreeMap::new(), evidence: BTreeMap::new(), formations: BTreeMap::new(), leases: BTreeMap::new(), created: BTreeMap::new() }
    }

    fn created(&mut self, kind: IdKind, id: i64) {
        let top = self.created.entry(kind).or_insert(id);
        *top = (*top).max(id);
    }

    /// The record a write changes, as the view sees it now; a write to a record nobody can read is a storage error.
    fn missing(what: &str) -> StorageError {
        StorageError::new(format!("a step writes {what}, which no step read"))
    }

    /// Applies one step's writes, so the next step reads them.
    pub(crate) fn apply(&mut self, writes: &[Write]) -> Result<(), StorageError> {
        for w in writes {
            match w {
                Write::NewEpoch(e) => {
                    self.epochs.insert(e.id.clone(), e.clone());
                }
                Write::EpochState { epoch, to } => {
                    let mut e = self.epoch(epoch)?.ok_or_else(|| Pending::missing(&format!("epoch {epoch}")))?;
                    e.state = *to;
                    self.epochs.insert(epoch.clone(), e);
                }
                Write::NewEvidence(e) => {
                    self.created(IdKind::Evidence, e.id);
                    self.evidence.insert(e.id, e.clone());
                }
                Write::RevokeEvidence(id) => {
                    let mut e = self.evidence(*id)?.ok_or_else(|| Pending::missing(&format!("evidence {id}")))?;
                    e.revoked = true;
                    self.evidence.insert(*id, e);
                }
                Write::NewFormation(f) => {
                    self.created(IdKind::Formation, f.id);
                    self.formations.insert(f.id, f.clone());
                }
                Write::RevokeFormation(id) | Write::LatestLease { formation: id, .. } => {
                    let mut f = self.formation(*id)?.ok_or_else(|| Pending::missing(&format!("formation {id}")))?;
                    match w {
                        Write::LatestLease { lease, .. } => f.latest_lease = Some(*lease),
                        _ => f.revoked = true,
                    }
                    self.formations.insert(*id, f);
                }
                Write::NewLease(l) => {
                    self.created(IdKind::Lease, l.id);
                    self.leases.insert(l.id, (l.clone(), None));
                }
                Write::LeaseState { id, .. } | Write::LeaseUsed(id) => {
                    let before = match self.leases.get(id) {
                        Some((_, before)) => *before,
                        None => Some(self.view.lease(*id)?.ok_or_else(|| Pending::missing(&format!("lease {id}")))?.state.open()),
                    };
                    let mut l = self.lease(*id)?.ok_or_else(|| Pending::missing(&format!("lease {id}")))?;
                    match w {
                        Write::LeaseState { to, .. } => l.state = *to,
                        _ => l.used = true,
                    }
                    self.leases.insert(*id, (l, before));
                }
                // No step reads a resolution back.
                Write::Resolution { .. } => {}
            }
        }
        Ok(())
    }
}

impl View for Pending<'_> {
    fn epoch(&mut self, id: &str) -> Result<Option<EpochRecord>, StorageError> {
        match self.epochs.get(id) {
            Some(e) => Ok(Some(e.clone())),
            None => self.view.epoch(id),
        }
    }

    fn evidence(&mut self, id: i64) -> Result<Option<EvidenceRecord>, StorageError> {
        match self.evidence.get(&id) {
            Some(e) => Ok(Some(e.clone())),
            None => self.view.evidence(id),
        }
    }

    fn formation(&mut self, id: i64) -> Result<Option<FormationRecord>, StorageError> {
        match self.formations.get(&id) {
            Some(f) => Ok(Some(f.clone())),
            None => self.view.formation(id),
        }
    }

    fn lease(&mut self, id: i64) -> Result<Option<LeaseRecord>, StorageError> {
        match self.leases.get(&id) {
            Some((l, _)) => Ok(Some(l.clone())),
            None => self.view.lease(id),
        }
    }

    fn open_leases(&mut self, epoch: &str) -> Result<usize, StorageError> {
        let mut open = self.view.open_leases(epoch)? as i64;
        for (l, before) in self.leases.values().filter(|(l, _)| l.epoch == epoch) {
            open += i64::from(l.state.open()) - i64::from(before.unwrap_or(false));
        }
        usize::try_from(open).map_err(|_| StorageError::new(format!("a negative count of open leases on {epoch}")))
    }

    fn resolver(&mut self) -> Result<Option<[u8; 32]>, StorageError> {
        self.view.resolver()
    }

    fn next_id(&mut self, kind: IdKind) -> Result<i64, StorageError> {
        // A store may offer the same id again until the decision commits (SQLite: the highest stored + 1).
        let id = self.view.next_id(kind)?;
        Ok(match self.created.get(&kind) {
            Some(&top) if top >= id => top + 1,
            _ => id,
        })
    }

    fn all_leases(&mut self) -> Result<Vec<StoredLease>, StorageError> {
        Err(StorageError::new("a decision does not list every lease"))
    }

    fn lost_calls(&mut self) -> Result<Option<String>, StorageError> {
        self.view.lost_calls()
    }
}

/// The decisions of the steps, in order, as one decision.
pub(crate) fn together(steps: Vec<Recorded>) -> Recorded {
    let mut writes = Vec::new();
    let mut entries = Vec::new();
    for step in steps {
        writes.extend(step.writes);
        entries.push(step.audit);
    }
    Recorded { writes, audit: json!({"op": "atomic", "steps": entries}) }
}
