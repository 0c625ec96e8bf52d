//! The runtime against a store it did not write itself: a state, lease state
//! or evidence kind it does not know is a storage failure naming the value,
//! never a state guessed in its place; and the reason codes print as before.

use fcd_model::refusal::RefusalCode;
use fcd_runtime::runtime::{EvidenceKind, Runtime, State};
use rusqlite::{Connection, params};

fn store() -> (tempfile::TempDir, std::path::PathBuf, Runtime) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runtime.sqlite");
    let mut rt = Runtime::open(&path).unwrap();
    rt.register_epoch("e0", "tool", "sha256:a0", "sha256:c0", "s").unwrap();
    rt.register_epoch("e1", "tool", "sha256:a1", "sha256:c1", "s").unwrap();
    (dir, path, rt)
}

fn poke(path: &std::path::Path, sql: &str) {
    Connection::open(path).unwrap().execute(sql, params![]).unwrap();
}

#[test]
fn an_unknown_epoch_state_is_a_storage_failure_not_stale() {
    let (_dir, path, mut rt) = store();
    let cert = rt.add_evidence(EvidenceKind::Edge, "tool", None, "e0", "e1", 0, 10_000).unwrap();
    let f = rt.form("snap", "tool", "args", "user:alice", "e0", Some(cert), 100, 900).unwrap();
    poke(&path, "UPDATE epochs SET state = 'RETIRED' WHERE epoch_id = 'e0'");
    let r = rt.state("e0").unwrap_err();
    assert_eq!(r.code, RefusalCode::Storage);
    assert!(r.is_storage() && r.detail.contains("`RETIRED`"), "{r}");
    // Before, RETIRED read as STALE and the formation moved to its successor.
    let r = rt.admit(f, 101).unwrap_err();
    assert!(r.is_storage() && r.detail.contains("`RETIRED`"), "{r}");
    assert!(rt.leases().unwrap().is_empty());
    assert!(rt.transition("e0", State::Draining).unwrap_err().is_storage());
}

#[test]
fn an_unknown_lease_state_or_evidence_kind_is_a_storage_failure() {
    let (_dir, path, mut rt) = store();
    let ev = rt.add_evidence(EvidenceKind::Edge, "tool", None, "e0", "e1", 0, 10_000).unwrap();
    let f = rt.form("snap", "tool", "args", "user:alice", "e0", None, 100, 900).unwrap();
    let lease = rt.admit(f, 101).unwrap();
    poke(&path, "UPDATE leases SET state = 'lost'");
    assert!(rt.leases().unwrap_err().detail.contains("`lost`"));
    assert!(rt.complete(lease.id).unwrap_err().is_storage());
    assert!(rt.fence(&lease.token, "sha256:a0", "sha256:c0", lease.generation, 101).unwrap_err().is_storage());
    poke(&path, "UPDATE evidence SET kind = 'hunch'");
    let r = rt.form("snap", "tool", "other-args", "user:alice", "e0", Some(ev), 100, 900).unwrap_err();
    assert!(r.is_storage() && r.detail.contains("`hunch`"), "{r}");
}

#[test]
fn codes_print_as_they_always_did() {
    let (_dir, _path, mut rt) = store();
    let r = rt.transition("e0", State::Stale).unwrap_err();
    assert_eq!(r.code, "bad_transition");
    assert_eq!(r.to_string(), "bad_transition: e0 is ADVERTISED, cannot become STALE");
    assert_eq!(serde_json::to_value(&r).unwrap(), serde_json::json!({"code": "bad_transition", "detail": "e0 is ADVERTISED, cannot become STALE"}));
    assert_eq!(rt.revoke("lease:1").unwrap_err().code.as_str(), "bad_handle");
    assert_eq!(rt.complete(7).unwrap_err().code, RefusalCode::UnknownLease);
    assert!(!rt.complete(7).unwrap_err().is_storage());
}

#[test]
fn a_store_from_before_formations_named_their_latest_lease_learns_it_from_its_leases() {
    let (_dir, path, mut rt) = store();
    let f = rt.form("snap", "tool", "args", "user:alice", "e0", None, 100, 900).unwrap();
    let lease = rt.admit(f, 101).unwrap();
    drop(rt);
    poke(&path, "ALTER TABLE formations DROP COLUMN latest_lease");
    // Opening adds the column back, filled from the leases: the admitted lease still holds its formation.
    let mut rt = Runtime::open(&path).unwrap();
    let r = rt.admit(f, 102).unwrap_err();
    assert_eq!(r.code, RefusalCode::FormationInFlight);
    assert!(r.detail.contains(&format!("lease {}", lease.id)), "{r}");
    assert_eq!(rt.fence(&lease.token, "sha256:a0", "sha256:c0", lease.generation, 102), Ok(lease.id));
}
