//! DESIGN.md's runtime invariants 1-6 as one check over a whole store,
//! shared by the property tests (after every step, on every store), the
//! multi-process race and the etcd fault tests (over the whole history),
//! with the audit check of the recorded history (docs/lifecycle.md).

use std::collections::BTreeMap;

use fcd_runtime::runtime::{Runtime, State};
use proptest::prelude::*;

/// What a test remembers to check the store against.
#[derive(Default)]
pub struct Model {
    /// Every formation made, with the authority it was given.
    pub formations: Vec<(i64, (String, Option<String>))>,
    /// How many times each lease's token passed the fence.
    pub fenced: BTreeMap<i64, usize>,
}

/// Checks invariants 1-6 over everything `rt` holds, for epochs `epochs`.
pub fn check_invariants(rt: &Runtime, model: &Model, epochs: &[&str]) -> Result<(), TestCaseError> {
    let leases = rt.leases().map_err(|e| TestCaseError::fail(format!("leases do not read: {e}")))?;
    for (id, original) in &model.formations {
        // 1. Authority only contracts: a formation's authority never changes after formation.
        prop_assert_eq!(&rt.authority(*id).unwrap().unwrap(), original, "formation {} changed its authority", id);
    }
    let mut seqs = BTreeMap::new();
    for lease in &leases {
        let (source, successor) = rt.authority(lease.formation).unwrap().unwrap();
        // 1. Every lease runs inside its formation's A0.
        prop_assert!(lease.epoch == source || Some(&lease.epoch) == successor.as_ref(), "lease {} on {} outside A0", lease.id, lease.epoch);
        // 2. A non-source epoch only once the source was STALE, and only the captured successor.
        if lease.epoch != source {
            let (_, stale) = rt.lifecycle_seqs(&source).unwrap();
            prop_assert!(stale.is_some_and(|s| s < lease.admitted_seq), "lease {} on the successor before {} was stale", lease.id, source);
        }
        // 3. Admission and drain are serialized: no lease starts after its epoch began draining.
        let (drained, _) = rt.lifecycle_seqs(&lease.epoch).unwrap();
        prop_assert!(drained.is_none_or(|d| lease.admitted_seq < d), "lease {} admitted after {} began draining", lease.id, lease.epoch);
        // One admission, one lease: no two leases share an admission.
        prop_assert!(
            seqs.insert(lease.admitted_seq, lease.id).is_none(),
            "leases {:?} and {} share admission {}",
            seqs.get(&lease.admitted_seq),
            lease.id,
            lease.admitted_seq
        );
    }
    for epoch in epochs {
        // 4. STALE only when no admitted or uncertain lease remains.
        if rt.state(epoch).unwrap() == Some(State::Stale) {
            let open = leases.iter().filter(|l| &l.epoch == epoch && l.state.open()).count();
            prop_assert_eq!(open, 0, "{} is STALE with open leases", epoch);
        }
    }
    // At most one effect per formation (docs/lifecycle.md S15): no two leases of one formation passed the fence.
    let mut ran = BTreeMap::new();
    for lease in leases.iter().filter(|l| l.used) {
        prop_assert!(
            ran.insert(lease.formation, lease.id).is_none(),
            "formation {} ran twice: leases {:?} and {}",
            lease.formation,
            ran.get(&lease.formation),
            lease.id
        );
    }
    for (lease, times) in &model.fenced {
        // 5 and 6. A token passes the fence once: one authorized effect per admitted invocation.
        prop_assert!(*times <= 1, "lease {} passed the fence {} times", lease, times);
        let stored = leases.iter().find(|l| l.id == *lease);
        prop_assert!(stored.is_some_and(|l| l.used), "lease {} passed the fence but the store does not say so", lease);
    }
    Ok(())
}

/// The audit log is one unbroken hash chain with an entry for every lease's
/// admission, and the history it records keeps every safety property of
/// docs/lifecycle.md (what `fcd audit check` checks).
pub fn check_audit(rt: &Runtime) -> Result<(), TestCaseError> {
    let report = fcd_lifecycle::audit_check::check_runtime(rt).map_err(|e| TestCaseError::fail(format!("the audit log does not read: {e}")))?;
    prop_assert!(report.violations.is_empty(), "{}", report.text());
    let entries = rt.audit_entries().map_err(|e| TestCaseError::fail(format!("the audit log does not read: {e}")))?;
    let chained = rt.verify_audit();
    prop_assert!(chained.is_ok(), "the audit chain is broken: {:?}", chained);
    let admissions: std::collections::BTreeSet<i64> = entries.iter().filter(|e| e.entry.contains("\"op\":\"admit\"")).map(|e| e.seq).collect();
    for lease in rt.leases().unwrap() {
        prop_assert!(admissions.contains(&lease.admitted_seq), "lease {} has no audit entry at its admission {}", lease.id, lease.admitted_seq);
    }
    Ok(())
}
