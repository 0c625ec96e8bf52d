//! The per-call path of a gateway: a call formed, admitted and fenced in one
//! runtime decision (one commit, one audit entry that the history check
//! reads step by step, on both stores), and per-call records committed
//! without fsync only by an operator's choice, with a host crash during such
//! a session keeping every epoch from retiring until it is acknowledged.

use fcd_testkit::{etcd, tools};

use fcd_model::refusal::RefusalCode;
use fcd_runtime::runtime::{Call, CallDurability, Measured, Runtime, State, StoreSpec};
use rusqlite::{Connection, params};

const CALL: Call<'static> = Call { snapshot: "snap", tool: "tool", args_digest: "sha256:args", principal: "user:alice", source: "e0" };
const AS_REGISTERED: Measured<'static> = Measured { artifact: "sha256:a0", config: "sha256:c0", server_config: None };

fn registered(rt: &mut Runtime) {
    rt.register_epoch("e0", "tool", "sha256:a0", "sha256:c0", "s").unwrap();
    rt.register_epoch("e1", "tool", "sha256:a1", "sha256:c1", "s").unwrap();
}

fn history_is_clean(rt: &Runtime) {
    let report = fcd_lifecycle::audit_check::check_runtime(rt).unwrap();
    assert!(report.violations.is_empty(), "{}", report.text());
}

/// Formed, admitted and fenced at once; refused at the hop, nothing is left; both on `rt`.
fn one_decision_per_call(rt: &mut Runtime) {
    registered(rt);
    let before = rt.audit_entries().unwrap().len();
    let lease = rt.form_admit(&CALL, None, 100, 900, Some(AS_REGISTERED)).unwrap();
    let entries = rt.audit_entries().unwrap();
    assert_eq!(entries.len(), before + 1, "one decision, one audit entry");
    let entry: serde_json::Value = serde_json::from_str(&entries.last().unwrap().entry).unwrap();
    let ops: Vec<&str> = entry["steps"].as_array().unwrap().iter().map(|s| s["op"].as_str().unwrap()).collect();
    assert_eq!((entry["op"].as_str(), ops), (Some("atomic"), vec!["form", "admit", "fence"]));
    let leases = rt.leases().unwrap();
    assert_eq!(leases.len(), 1);
    assert!(leases[0].used && leases[0].state.open(), "the token is spent and the lease is open until the reply");
    assert_eq!(rt.authority(lease.formation).unwrap(), Some(("e0".to_owned(), None)));
    // The token was spent in the decision: it never passes again.
    assert_eq!(rt.fence(&lease.token, "sha256:a0", "sha256:c0", lease.generation, 101).unwrap_err().code, RefusalCode::Replay);
    rt.complete(lease.id).unwrap();
    // Refused at the hop (another artifact, another configuration): no formation, no lease, no entry.
    for hop in [Measured { artifact: "sha256:other", ..AS_REGISTERED }, Measured { config: "sha256:other", ..AS_REGISTERED }] {
        let r = rt.form_admit(&CALL, None, 102, 900, Some(hop)).unwrap_err();
        assert!(matches!(r.code, RefusalCode::FinalHopArtifactMismatch | RefusalCode::FinalHopConfigMismatch), "{r}");
    }
    assert_eq!((rt.leases().unwrap().len(), rt.audit_entries().unwrap().len()), (1, before + 2));
    // Without a hop, formed and admitted only: the fence is passed later, once.
    let later = rt.form_admit(&CALL, None, 103, 900, None).unwrap();
    assert!(rt.leases().unwrap().iter().any(|l| l.id == later.id && !l.used));
    assert_eq!(rt.fence(&later.token, "sha256:a0", "sha256:c0", later.generation, 104), Ok(later.id));
    rt.complete(later.id).unwrap();
    // A draining source forms nothing; drain and retirement see every lease.
    rt.transition("e0", State::Draining).unwrap();
    assert_eq!(rt.form_admit(&CALL, None, 105, 900, Some(AS_REGISTERED)).unwrap_err().code, RefusalCode::SourceNotEligible);
    rt.transition("e0", State::Stale).unwrap();
    history_is_clean(rt);
    assert!(rt.verify_audit().is_ok());
}

#[test]
fn a_call_formed_admitted_and_fenced_at_once_is_one_decision_on_both_stores() {
    let dir = tempfile::tempdir().unwrap();
    one_decision_per_call(&mut Runtime::open(&dir.path().join("runtime.sqlite")).unwrap());
    if !tools::tools_or_skip("a_call_formed_admitted_and_fenced_at_once_is_one_decision on etcd", etcd::available()) {
        return;
    }
    let cluster = etcd::Cluster::start().unwrap();
    let spec = StoreSpec::parse(&cluster.store("at-once")).unwrap();
    one_decision_per_call(&mut Runtime::open_store(&spec).unwrap());
}

#[test]
fn a_history_whose_atomic_entry_breaks_a_step_is_caught() {
    // The checker reads the steps, not only the entry: a fence inside it for a configuration not registered is S8.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runtime.sqlite");
    let mut rt = Runtime::open(&path).unwrap();
    registered(&mut rt);
    rt.form_admit(&CALL, None, 100, 900, Some(AS_REGISTERED)).unwrap();
    let mut records = rt.audit_events().unwrap();
    let last = records.last_mut().unwrap();
    let text = format!("{:?}", last.event);
    assert!(text.contains("Atomic"), "{text}");
    let entry = rt.audit_entries().unwrap().last().unwrap().entry.replace("sha256:c0", "sha256:c9");
    last.event = fcd_runtime::runtime::AuditEvent::parse(&entry);
    let report = fcd_lifecycle::audit_check::check(&records);
    assert!(report.violations.iter().any(|v| v.property == "S8"), "{}", report.text());
}

fn writers(path: &std::path::Path) -> Vec<(String, String, i64)> {
    let conn = Connection::open(path).unwrap();
    let mut stmt = conn.prepare("SELECT id, boot, pid FROM call_writers").unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect()
}

fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap().trim().to_owned()
}

#[test]
fn a_process_crash_writer_is_recorded_while_open_and_gone_once_closed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runtime.sqlite");
    let mut rt = Runtime::open_store_with(&StoreSpec::Sqlite(path.clone()), CallDurability::ProcessCrash).unwrap();
    registered(&mut rt);
    let w = writers(&path);
    assert_eq!(w.len(), 1);
    assert_eq!((w[0].1.as_str(), w[0].2), (boot_id().as_str(), i64::from(std::process::id())));
    let lease = rt.form_admit(&CALL, None, 100, 900, Some(AS_REGISTERED)).unwrap();
    rt.complete(lease.id).unwrap();
    assert_eq!(rt.lost_calls().unwrap(), None, "a writer of this boot that is still open lost nothing");
    drop(rt);
    assert!(writers(&path).is_empty(), "a clean close fsyncs and forgets the writer");
    // Everything it committed is there for the next opener, which needs no fsync of its own.
    let mut rt = Runtime::open(&path).unwrap();
    assert_eq!(rt.leases().unwrap().len(), 1);
    rt.transition("e0", State::Draining).unwrap();
    rt.transition("e0", State::Stale).unwrap();
    history_is_clean(&rt);
}

#[test]
fn a_writer_of_this_boot_whose_process_is_gone_lost_nothing() {
    // The host kept running: the dead writer's commits are in its page cache, and the next open fsyncs them.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runtime.sqlite");
    let mut rt = Runtime::open(&path).unwrap();
    registered(&mut rt);
    drop(rt);
    Connection::open(&path).unwrap().execute("INSERT INTO call_writers VALUES ('gone', ?1, 2147483646)", params![boot_id()]).unwrap();
    let mut rt = Runtime::open(&path).unwrap();
    assert!(writers(&path).is_empty());
    assert_eq!(rt.lost_calls().unwrap(), None);
    rt.transition("e0", State::Draining).unwrap();
    rt.transition("e0", State::Stale).unwrap();
}

#[test]
fn after_a_host_crash_during_a_process_crash_session_no_epoch_retires_until_an_operator_acknowledges_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runtime.sqlite");
    let mut rt = Runtime::open(&path).unwrap();
    registered(&mut rt);
    drop(rt);
    // A writer recorded under another boot id was open when its host went down.
    Connection::open(&path).unwrap().execute("INSERT INTO call_writers VALUES ('w1', 'an-earlier-boot', 4242)", []).unwrap();
    let mut rt = Runtime::open(&path).unwrap();
    let why = rt.lost_calls().unwrap().expect("the store says calls may be missing");
    assert!(why.contains("w1") && why.contains("an-earlier-boot"), "{why}");
    // Calls still run (nothing they read can be missing); draining still starts; retiring does not.
    let lease = rt.form_admit(&CALL, None, 100, 900, Some(AS_REGISTERED)).unwrap();
    rt.complete(lease.id).unwrap();
    rt.transition("e0", State::Draining).unwrap();
    let r = rt.transition("e0", State::Stale).unwrap_err();
    assert_eq!(r.code, RefusalCode::CallsUnaccounted);
    assert_eq!(r.code.as_str(), "calls_unaccounted");
    assert!(r.detail.contains("acknowledge-lost-calls"), "{r}");
    assert_eq!(rt.state("e0").unwrap(), Some(State::Draining));
    // The operator's acknowledgement (`fcd runtime acknowledge-lost-calls`) is durable and audited; then the epoch retires.
    drop(rt);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fcd"))
        .args(["runtime", "acknowledge-lost-calls", "--store"])
        .arg(format!("sqlite:{}", path.display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let printed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let acknowledged = printed["acknowledged"].as_array().unwrap();
    assert_eq!(acknowledged.len(), 1);
    assert!(acknowledged[0].as_str().unwrap().contains("w1"), "{printed}");
    let mut rt = Runtime::open(&path).unwrap();
    assert_eq!(rt.lost_calls().unwrap(), None);
    assert!(rt.acknowledge_lost_calls().unwrap().is_empty(), "nothing left to acknowledge, nothing recorded");
    rt.transition("e0", State::Stale).unwrap();
    assert!(rt.audit_entries().unwrap().iter().filter(|e| e.entry.contains("\"op\":\"acknowledge_lost_calls\"")).count() == 1);
    history_is_clean(&rt);
}

#[test]
fn process_crash_durability_is_refused_on_etcd() {
    // Before any connection: etcd commits every decision to a quorum, so the setting could only mislead.
    let spec = StoreSpec::parse("etcd:127.0.0.1:1").unwrap();
    let r = Runtime::open_store_with(&spec, CallDurability::ProcessCrash).err().expect("refused");
    assert!(r.is_storage() && r.detail.contains("SQLite setting"), "{r}");
    assert_eq!(CallDurability::parse("process-crash"), Ok(CallDurability::ProcessCrash));
    assert!(CallDurability::parse("NORMAL").is_err());
}

#[test]
fn a_crashed_process_crash_gateway_loses_no_commit_and_its_open_lease_keeps_the_epoch_draining() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runtime.sqlite");
    let mut rt = Runtime::open(&path).unwrap();
    registered(&mut rt);
    drop(rt);
    // A writer with per-call commits unsynced: 20 calls completed, one more fenced, then the process dies.
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_fcd"))
        .args(["runtime", "crash-after-calls", "--epoch", "e0", "--tool", "tool", "--count", "20", "--store"])
        .arg(format!("sqlite:{}", path.display()))
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(!status.success() && status.code().is_none(), "the writer was to die by a signal: {status}");
    // Its writer row is of this boot and its process is gone: its commits are in the page cache, kept.
    assert_eq!(writers(&path).len(), 1);
    let mut rt = Runtime::open(&path).unwrap();
    assert!(writers(&path).is_empty(), "the next opener forgets a writer of this boot whose process is gone");
    assert_eq!(rt.lost_calls().unwrap(), None);
    let leases = rt.leases().unwrap();
    assert_eq!(leases.len(), 21, "no unsynced commit is lost when only the process dies");
    assert_eq!(leases.iter().filter(|l| l.state == fcd_runtime::runtime::LeaseState::Completed).count(), 20);
    // The call that passed the fence and never reported keeps its epoch from retiring until it is resolved.
    rt.transition("e0", State::Draining).unwrap();
    assert_eq!(rt.transition("e0", State::Stale).unwrap_err().code, RefusalCode::LeasesOutstanding);
    history_is_clean(&rt);
}

/// A completion is committed without waiting for an fsync (a call's reply
/// does not wait for it), even in `full`: a host crash can lose it. What
/// stable storage then holds is the store as of the admission. This test
/// takes that store (a consistent copy made before the completion) and
/// checks the loss fails closed: the lease is open, so its formation is not
/// admitted again and its epoch does not retire until an operator
/// completes it with `fcd runtime complete`, a durable decision.
#[test]
fn a_completion_lost_with_its_host_leaves_the_lease_open_until_an_operator_completes_it() {
    let dir = tempfile::tempdir().unwrap();
    let (path, on_disk) = (dir.path().join("runtime.sqlite"), dir.path().join("at-the-last-fsync.sqlite"));
    let mut rt = Runtime::open(&path).unwrap();
    registered(&mut rt);
    let lease = rt.form_admit(&CALL, None, 100, 900, Some(AS_REGISTERED)).unwrap();
    Connection::open(&path).unwrap().execute("VACUUM INTO ?1", params![on_disk.to_str().unwrap()]).unwrap();
    rt.complete(lease.id).unwrap();
    drop(rt);
    let mut rt = Runtime::open(&on_disk).unwrap();
    let open: Vec<_> = rt.leases().unwrap().into_iter().filter(|l| l.state.open()).map(|l| l.id).collect();
    assert_eq!(open, [lease.id], "the completion is lost; the lease it closed is open");
    assert_eq!(rt.admit(lease.formation, 101).unwrap_err().code, RefusalCode::FormationInFlight, "the call is not run again");
    rt.transition("e0", State::Draining).unwrap();
    assert!(rt.transition("e0", State::Stale).is_err(), "the epoch does not retire under an open lease");
    drop(rt);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fcd"))
        .args(["runtime", "complete", "--lease", &lease.id.to_string(), "--store"])
        .arg(format!("sqlite:{}", on_disk.display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut rt = Runtime::open(&on_disk).unwrap();
    rt.transition("e0", State::Stale).unwrap();
    history_is_clean(&rt);
}
