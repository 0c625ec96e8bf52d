//! Property-based tests of the runtime: random operation sequences, with
//! DESIGN.md's invariants 1-6 checked after every step. One definition runs
//! on both stores: SQLite, and a real 3-member etcd cluster.

use fcd_testkit::{etcd, invariants, tools};

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use ed25519_dalek::{Signer, SigningKey};
use fcd_runtime::runtime::{Call, EvidenceKind, Measured, Runtime, State, StoreSpec};
use invariants::{Model, check_audit, check_invariants};
use proptest::prelude::*;

const EPOCHS: [&str; 3] = ["e0", "e1", "e2"];

fn digests(epoch: &str) -> (String, String) {
    (format!("sha256:artifact-{epoch}"), format!("sha256:config-{epoch}"))
}

#[derive(Debug, Clone)]
enum Op {
    Evidence {
        certificate: bool,
        target: usize,
        args: usize,
    },
    Form {
        args: usize,
        evidence: Option<usize>,
    },
    Admit {
        formation: usize,
    },
    /// A gateway's call: formed and admitted in one decision, and with `hop`
    /// fenced in it too (0: as registered, 1: another artifact, 2: another configuration).
    FormAdmit {
        args: usize,
        evidence: Option<usize>,
        hop: Option<usize>,
    },
    Transition {
        epoch: usize,
        to: usize,
    },
    Complete {
        lease: usize,
    },
    Uncertain {
        lease: usize,
    },
    Resolve {
        lease: usize,
    },
    Revoke {
        evidence: bool,
        index: usize,
    },
    Fence {
        lease: usize,
        tamper: usize,
    },
    Wait {
        seconds: u64,
    },
    /// Completes e0's open leases, then drains and retires it: the path to successors.
    RetireSource,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (any::<bool>(), 1..3usize, 0..2usize).prop_map(|(certificate, target, args)| Op::Evidence { certificate, target, args }),
        (0..2usize, proptest::option::of(0..4usize)).prop_map(|(args, evidence)| Op::Form { args, evidence }),
        (0..6usize).prop_map(|formation| Op::Admit { formation }),
        (0..6usize).prop_map(|formation| Op::Admit { formation }),
        (0..2usize, proptest::option::of(0..4usize), proptest::option::of(0..3usize)).prop_map(|(args, evidence, hop)| Op::FormAdmit { args, evidence, hop }),
        (0..3usize, 0..4usize).prop_map(|(epoch, to)| Op::Transition { epoch, to }),
        (0..8usize).prop_map(|lease| Op::Complete { lease }),
        (0..8usize).prop_map(|lease| Op::Uncertain { lease }),
        (0..8usize).prop_map(|lease| Op::Resolve { lease }),
        (any::<bool>(), 0..4usize).prop_map(|(evidence, index)| Op::Revoke { evidence, index }),
        (0..8usize, 0..4usize).prop_map(|(lease, tamper)| Op::Fence { lease, tamper }),
        (0..400u64).prop_map(|seconds| Op::Wait { seconds }),
        Just(Op::RetireSource),
    ]
}

/// What the test remembers beyond the shared model: the ids it was given.
#[derive(Default)]
struct Given {
    evidence: Vec<i64>,
    leases: Vec<fcd_runtime::runtime::Lease>,
}

fn scratch() -> tempfile::TempDir {
    // A RAM-backed directory where there is one: thousands of durable commits per run.
    if std::path::Path::new("/dev/shm").is_dir() { tempfile::tempdir_in("/dev/shm").unwrap() } else { tempfile::tempdir().unwrap() }
}

/// A fresh, empty store of each kind.
enum Stores<'c> {
    Sqlite,
    Etcd { cluster: &'c etcd::Cluster, next: AtomicUsize },
}

impl Stores<'_> {
    /// Opens a store no other run touched; the guard keeps a SQLite file alive.
    fn fresh(&self) -> (Runtime, Option<tempfile::TempDir>) {
        match self {
            Stores::Sqlite => {
                let dir = scratch();
                (Runtime::open(&dir.path().join("runtime.sqlite")).unwrap(), Some(dir))
            }
            Stores::Etcd { cluster, next } => {
                let prefix = format!("invariants-{}-{}", std::process::id(), next.fetch_add(1, Ordering::Relaxed));
                let spec = StoreSpec::parse(&cluster.store(&prefix)).unwrap();
                (Runtime::open_store(&spec).unwrap(), None)
            }
        }
    }
}

/// A cluster for the etcd runs, or `None` (the reason printed) where etcd is missing.
fn cluster_or_skip(test: &str) -> Option<etcd::Cluster> {
    if !tools::tools_or_skip(test, etcd::available()) {
        return None;
    }
    Some(etcd::Cluster::start().unwrap_or_else(|e| panic!("{test}: {e}")))
}

/// What a run exercised, so the generator is known to reach every path.
#[derive(Default, Debug)]
struct Stats {
    admitted_source: usize,
    admitted_successor: usize,
    fenced: usize,
    refusals: BTreeMap<&'static str, usize>,
}

fn run(ops: Vec<Op>, stores: &Stores<'_>) -> Result<Stats, TestCaseError> {
    let mut stats = Stats::default();
    let (mut rt, _guard) = stores.fresh();
    let resolver = SigningKey::from_bytes(&[7u8; 32]);
    rt.set_resolver(&resolver.verifying_key()).unwrap();
    for e in EPOCHS {
        let (a, c) = digests(e);
        rt.register_epoch(e, "tool", &a, &c, "sha256:summary").unwrap();
    }
    let mut model = Model::default();
    let mut given = Given::default();
    let mut now = 1_000u64;
    for op in ops {
        match op {
            Op::Evidence { certificate, target, args } => {
                let args = format!("args-{args}");
                let added = if certificate {
                    rt.add_unverified_certificate("tool", &args, "user:alice", "e0", EPOCHS[target], now, now + 600)
                } else {
                    rt.add_evidence(EvidenceKind::Edge, "tool", None, "e0", EPOCHS[target], now, now + 600)
                };
                if let Ok(id) = added {
                    given.evidence.push(id);
                }
            }
            Op::Form { args, evidence } => {
                let evidence = evidence.and_then(|i| given.evidence.get(i).copied());
                if let Ok(id) = rt.form("snap", "tool", &format!("args-{args}"), "user:alice", "e0", evidence, now, 900) {
                    model.formations.push((id, rt.authority(id).unwrap().unwrap()));
                }
            }
            Op::Admit { formation } => {
                if let Some((id, (source, _))) = model.formations.get(formation) {
                    match rt.admit(*id, now) {
                        Ok(lease) => {
                            if &lease.epoch == source {
                                stats.admitted_source += 1;
                            } else {
                                stats.admitted_successor += 1;
                            }
                            given.leases.push(lease);
                        }
                        Err(r) => *stats.refusals.entry(r.code.as_str()).or_default() += 1,
                    }
                }
            }
            Op::FormAdmit { args, evidence, hop } => {
                let evidence = evidence.and_then(|i| given.evidence.get(i).copied());
                let (mut artifact, mut config) = digests("e0");
                match hop {
                    Some(1) => artifact.push('x'),
                    Some(2) => config.push('x'),
                    _ => {}
                }
                let measured = hop.map(|_| Measured { artifact: &artifact, config: &config, server_config: None });
                let args = format!("args-{args}");
                let call = Call { snapshot: "snap", tool: "tool", args_digest: &args, principal: "user:alice", source: "e0" };
                let before = rt.audit_entries().unwrap().len();
                match rt.form_admit(&call, evidence, now, 900, measured) {
                    Ok(lease) => {
                        // One decision, one audit entry; a mismatched hop never passes.
                        prop_assert_eq!(rt.audit_entries().unwrap().len(), before + 1);
                        prop_assert!(matches!(hop, None | Some(0)), "a mismatched final hop passed ({:?})", hop);
                        prop_assert_eq!(&lease.epoch, "e0", "a formation admitted at once runs on its source");
                        model.formations.push((lease.formation, rt.authority(lease.formation).unwrap().unwrap()));
                        stats.admitted_source += 1;
                        if hop.is_some() {
                            stats.fenced += 1;
                            *model.fenced.entry(lease.id).or_default() += 1;
                        }
                        given.leases.push(lease);
                    }
                    Err(r) => {
                        // Refused anywhere, nothing of it is committed: no formation, no lease, no entry.
                        prop_assert_eq!(rt.audit_entries().unwrap().len(), before, "a refused call left a record: {}", r);
                        *stats.refusals.entry(r.code.as_str()).or_default() += 1;
                    }
                }
            }
            Op::Transition { epoch, to } => {
                let to = [State::Advertised, State::HiddenButValid, State::Draining, State::Stale][to];
                let _ = rt.transition(EPOCHS[epoch], to);
            }
            Op::Complete { lease } => {
                if let Some(l) = given.leases.get(lease) {
                    let _ = rt.complete(l.id);
                }
            }
            Op::Uncertain { lease } => {
                if let Some(l) = given.leases.get(lease) {
                    let _ = rt.mark_uncertain(l.id);
                }
            }
            Op::Resolve { lease } => {
                if let Some(l) = given.leases.get(lease) {
                    let sig = resolver.sign(fcd_runtime::runtime::resolution_message(l.id, "completed").as_bytes());
                    let _ = rt.resolve(l.id, "completed", &sig.to_bytes());
                }
            }
            Op::Revoke { evidence, index } => {
                let handle = if evidence {
                    given.evidence.get(index).map(|id| format!("evidence:{id}"))
                } else {
                    model.formations.get(index).map(|(id, _)| format!("formation:{id}"))
                };
                if let Some(h) = handle {
                    let _ = rt.revoke(&h);
                }
            }
            Op::Fence { lease, tamper } => {
                // Any lease given so far (a formation has at most one lease in flight, so there are
                // fewer leases than before S15: an index past the end would leave the fence untried).
                if let Some(l) = given.leases.get(lease % given.leases.len().max(1)) {
                    let (mut artifact, mut config) = digests(&l.epoch);
                    let mut generation = l.generation;
                    match tamper {
                        1 => artifact.push('x'),
                        2 => config.push('x'),
                        3 => generation += 1,
                        _ => {}
                    }
                    let result = rt.fence(&l.token, &artifact, &config, generation, now);
                    if let Err(r) = &result {
                        *stats.refusals.entry(r.code.as_str()).or_default() += 1;
                    }
                    let accepted = result.is_ok();
                    stats.fenced += usize::from(accepted);
                    // 5. Only for the registered artifact, configuration and generation.
                    prop_assert!(!(accepted && tamper != 0), "the fence accepted a mismatched final hop ({tamper})");
                    if accepted {
                        *model.fenced.entry(l.id).or_default() += 1;
                    }
                }
            }
            Op::Wait { seconds } => now += seconds,
            Op::RetireSource => {
                for l in given.leases.iter().filter(|l| l.epoch == "e0") {
                    let _ = rt.complete(l.id);
                }
                let _ = rt.transition("e0", State::Draining);
                let _ = rt.transition("e0", State::Stale);
            }
        }
        check_invariants(&rt, &model, &EPOCHS)?;
    }
    check_audit(&rt)?;
    Ok(stats)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, .. ProptestConfig::default() })]

    #[test]
    fn invariants_hold_after_every_step(ops in proptest::collection::vec(op(), 1..60)) {
        run(ops, &Stores::Sqlite)?;
    }
}

/// The same property on a 3-member etcd cluster (fewer cases: each step is
/// several network round trips; each case in its own key prefix of one
/// cluster). Each case also runs on SQLite, and both stores must come to the
/// same admissions, fence passes and refusals: one runtime, two stores.
#[test]
fn invariants_hold_after_every_step_on_etcd() {
    let Some(cluster) = cluster_or_skip("invariants_hold_after_every_step_on_etcd") else { return };
    let stores = Stores::Etcd { cluster: &cluster, next: AtomicUsize::new(0) };
    let config = ProptestConfig { cases: 96, failure_persistence: None, ..ProptestConfig::default() };
    let mut runner = proptest::test_runner::TestRunner::new(config);
    let total = std::cell::RefCell::new(Stats::default());
    let result = runner.run(&proptest::collection::vec(op(), 10..60), |ops| {
        let on_sqlite = run(ops.clone(), &Stores::Sqlite)?;
        let on_etcd = run(ops, &stores)?;
        prop_assert_eq!(format!("{on_sqlite:?}"), format!("{on_etcd:?}"), "the stores decided differently");
        let mut total = total.borrow_mut();
        total.admitted_source += on_etcd.admitted_source;
        total.admitted_successor += on_etcd.admitted_successor;
        total.fenced += on_etcd.fenced;
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    // The runs reached the cluster's admissions (the fence and the successor: the test below and the fault tests).
    let total = total.into_inner();
    assert!(total.admitted_source + total.admitted_successor > 0, "{total:?}");
}

/// The generator is not vacuous: over a fixed sample it admits on sources and
/// successors, passes the fence, and meets every refusal the invariants guard.
#[test]
fn the_operation_generator_reaches_every_path() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = proptest::collection::vec(op(), 40..60);
    let mut total = Stats::default();
    for _ in 0..200 {
        let ops = strategy.new_tree(&mut runner).unwrap().current();
        let stats = run(ops, &Stores::Sqlite).unwrap();
        total.admitted_source += stats.admitted_source;
        total.admitted_successor += stats.admitted_successor;
        total.fenced += stats.fenced;
        for (k, v) in stats.refusals {
            *total.refusals.entry(k).or_default() += v;
        }
    }
    assert!(total.admitted_source > 0 && total.admitted_successor > 0 && total.fenced > 0, "{total:?}");
    for code in ["source_draining", "not_captured", "replay", "final_hop_artifact_mismatch", "final_hop_config_mismatch", "stale_generation"] {
        assert!(total.refusals.contains_key(code), "never refused with {code}: {total:?}");
    }
}

#[test]
fn a_draining_source_refuses_and_a_captured_successor_runs_after_stale() {
    draining_then_successor(&Stores::Sqlite);
    if let Some(cluster) = cluster_or_skip("a_draining_source_refuses_and_a_captured_successor_runs_after_stale on etcd") {
        draining_then_successor(&Stores::Etcd { cluster: &cluster, next: AtomicUsize::new(0) });
    }
}

fn draining_then_successor(stores: &Stores<'_>) {
    let (mut rt, _guard) = stores.fresh();
    for e in EPOCHS {
        let (a, c) = digests(e);
        rt.register_epoch(e, "tool", &a, &c, "s").unwrap();
    }
    let cert = rt.add_unverified_certificate("tool", "args-0", "user:alice", "e0", "e1", 0, 10_000).unwrap();
    let [f, g, h] = ["snap-1", "snap-2", "snap-3"].map(|snap| rt.form(snap, "tool", "args-0", "user:alice", "e0", Some(cert), 100, 900).unwrap());
    let first = rt.admit(f, 100).unwrap();
    assert_eq!(first.epoch, "e0");
    rt.transition("e0", State::Draining).unwrap();
    assert_eq!(rt.admit(g, 101).unwrap_err().code, "source_draining");
    // A formed call runs at most once: its lease is admitted, so the formation is not admitted again.
    assert_eq!(rt.admit(f, 101).unwrap_err().code, "formation_in_flight");
    assert_eq!(rt.transition("e0", State::Stale).unwrap_err().code, "leases_outstanding");
    rt.complete(first.id).unwrap();
    rt.transition("e0", State::Stale).unwrap();
    assert_eq!(rt.admit(f, 102).unwrap_err().code, "formation_in_flight");
    let second = rt.admit(g, 102).unwrap();
    assert_eq!(second.epoch, "e1");
    let (a, c) = digests("e1");
    assert_eq!(rt.fence(&second.token, &a, &c, second.generation, 102).unwrap(), second.id);
    assert_eq!(rt.fence(&second.token, &a, &c, second.generation, 102).unwrap_err().code, "replay");
    rt.revoke(&format!("evidence:{cert}")).unwrap();
    assert_eq!(rt.admit(h, 103).unwrap_err().code, "revoked");
    assert!(rt.verify_audit().unwrap() > 5);
    check_audit(&rt).unwrap();
}

/// Issue 28, point 2: on etcd each store instance chains its audit entries
/// in the transaction that commits each decision, so the log of two writers
/// interleaved checks clean, and an entry edited or dropped afterwards, even
/// the newest, breaks its writer's chain (there is no queue to edit first).
#[test]
fn etcd_audit_entries_are_chained_as_they_are_written_and_an_edit_or_a_gap_breaks_the_chain() {
    let Some(cluster) = cluster_or_skip("etcd_audit_entries_are_chained_as_they_are_written") else { return };
    let prefix = format!("chains-{}", std::process::id());
    let spec = StoreSpec::parse(&cluster.store(&prefix)).unwrap();
    let (mut one, mut two) = (Runtime::open_store(&spec).unwrap(), Runtime::open_store(&spec).unwrap());
    for (i, e) in EPOCHS.iter().enumerate() {
        let (a, c) = digests(e);
        let rt = if i % 2 == 0 { &mut one } else { &mut two };
        rt.register_epoch(e, "tool", &a, &c, "s").unwrap();
    }
    let cert = one.add_unverified_certificate("tool", "args-0", "user:alice", "e0", "e1", 0, 10_000).unwrap();
    let formed = two.form("snap", "tool", "args-0", "user:alice", "e0", Some(cert), 100, 900).unwrap();
    let lease = one.admit(formed, 100).unwrap();
    two.complete(lease.id).unwrap();
    assert!(one.verify_audit().unwrap() >= 5, "two writers' chains join");
    check_audit(&one).unwrap();
    let last = two.audit_last().unwrap().expect("a last entry");
    assert_eq!(Some(&last.seq), one.audit_entries().unwrap().last().map(|e| &e.seq), "the newest entry of either writer, in a few reads");
    assert_eq!(one.audit_last().unwrap().map(|e| e.hash), Some(last.hash));

    // Edit an entry where it lies, then drop one: the chain of its writer no longer holds.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let links = format!("/{prefix}/audit/chains/");
    let kvs = runtime.block_on(async {
        let mut client = etcd_client::Client::connect(cluster.endpoints(), None).await.unwrap();
        let got = client.get(links.clone(), Some(etcd_client::GetOptions::new().with_prefix())).await.unwrap();
        got.kvs().iter().map(|kv| (kv.key().to_vec(), kv.value().to_vec())).collect::<Vec<_>>()
    });
    let writers: std::collections::BTreeSet<String> =
        kvs.iter().filter_map(|(k, _)| String::from_utf8_lossy(k).strip_prefix(&links).and_then(|r| r.split_once('/')).map(|(w, _)| w.to_owned())).collect();
    assert_eq!(writers.len(), 2, "one chain per writer: {writers:?}");
    let (key, value) = kvs.first().cloned().unwrap();
    let mut link: serde_json::Value = serde_json::from_slice(&value).unwrap();
    link["entry"] = serde_json::Value::String(format!("{} ", link["entry"].as_str().unwrap()));
    let put = |k: Vec<u8>, v: Vec<u8>| {
        runtime.block_on(async { etcd_client::Client::connect(cluster.endpoints(), None).await.unwrap().put(k, v, None).await.unwrap() })
    };
    put(key.clone(), serde_json::to_vec(&link).unwrap());
    assert_eq!(one.verify_audit().unwrap_err().code, "audit_broken", "an edited entry");
    put(key.clone(), value);
    assert!(one.verify_audit().is_ok(), "restored, it holds again");
    let middle = kvs.iter().find(|(k, _)| String::from_utf8_lossy(k).ends_with(&format!("{:020}", 1))).map(|(k, _)| k.clone()).unwrap();
    runtime.block_on(async { etcd_client::Client::connect(cluster.endpoints(), None).await.unwrap().delete(middle, None).await.unwrap() });
    let e = one.verify_audit().unwrap_err();
    assert_eq!(e.code, "audit_broken", "a dropped entry: {}", e.detail);
}

/// An audit log larger than a gRPC message (4 MiB) still reads: the store
/// reads it in pages at one revision, in order.
#[test]
fn etcd_an_audit_log_larger_than_one_message_reads_in_pages() {
    let Some(cluster) = cluster_or_skip("etcd_an_audit_log_larger_than_one_message_reads_in_pages") else { return };
    let prefix = format!("big-audit-{}", std::process::id());
    let spec = StoreSpec::parse(&cluster.store(&prefix)).unwrap();
    let rt = Runtime::open_store(&spec).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let filler = "x".repeat(5_000);
    let count = 1_100i64;
    runtime.block_on(async {
        let mut client = etcd_client::Client::connect(cluster.endpoints(), None).await.unwrap();
        for seq in 1..=count {
            let value = serde_json::json!({ "entry": format!("{seq} {filler}"), "prev": "", "hash": "" });
            client.put(format!("/{prefix}/audit/sealed/{seq:020}"), serde_json::to_vec(&value).unwrap(), None).await.unwrap();
        }
    });
    let entries = rt.audit_entries().expect("a 5.5 MB log reads");
    let seqs: Vec<i64> = entries.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (1..=count).collect::<Vec<_>>(), "every entry, once, in order");
}

/// Issue 28, point 1: on etcd, independent calls share no written key. Two
/// writers (two gateways) each run calls on the same epoch through
/// formation, admission, fence and completion; no key one writes is written
/// or compared by the other, and the only keys both compare are the epoch
/// and the evidence, which no per-call decision writes. Ids come from blocks
/// reserved on each writer's own claim key, never a shared counter.
#[test]
fn etcd_independent_calls_write_disjoint_keys() {
    let Some(cluster) = cluster_or_skip("etcd_independent_calls_write_disjoint_keys") else { return };
    let spec = StoreSpec::parse(&cluster.store(&format!("disjoint-{}", std::process::id()))).unwrap();
    let (mut one, mut two) = (Runtime::open_store(&spec).unwrap(), Runtime::open_store(&spec).unwrap());
    let (a, c) = digests("e0");
    one.register_epoch("e0", "tool", &a, &c, "s").unwrap();
    let (a1, c1) = digests("e1");
    one.register_epoch("e1", "tool", &a1, &c1, "s").unwrap();
    let edge = one.add_evidence(EvidenceKind::Edge, "tool", None, "e0", "e1", 0, 10_000).unwrap();
    one.take_key_log();
    let call = |rt: &mut Runtime| {
        let formed = rt.form("snap", "tool", "args", "user:alice", "e0", Some(edge), 100, 900).unwrap();
        let lease = rt.admit(formed, 100).unwrap();
        assert_eq!(rt.fence(&lease.token, &a, &c, lease.generation, 100).unwrap(), lease.id);
        rt.complete(lease.id).unwrap();
    };
    // Interleaved, several calls each: the second writer's ids come from its own blocks.
    for _ in 0..3 {
        call(&mut one);
        call(&mut two);
    }
    let keys = |log: &[fcd_runtime::runtime::TxnKeys], read: bool| -> std::collections::BTreeSet<String> {
        log.iter().flat_map(|t| if read { t.read.clone() } else { t.written.clone() }).collect()
    };
    let (log_one, log_two) = (one.take_key_log(), two.take_key_log());
    assert_eq!(log_one.iter().filter(|t| !t.read.is_empty()).count(), 12, "four decisions per call: {log_one:?}");
    let (w1, w2, r1, r2) = (keys(&log_one, false), keys(&log_two, false), keys(&log_one, true), keys(&log_two, true));
    assert!(w1.is_disjoint(&w2), "both write {:?}", w1.intersection(&w2).collect::<Vec<_>>());
    assert!(w1.is_disjoint(&r2) && w2.is_disjoint(&r1), "one compares what the other writes");
    let shared: Vec<&String> = r1.intersection(&r2).collect();
    let epoch_and_edge = [format!("epoch/{}", fcd_model::canon::hex(b"e0")), format!("evidence/{edge:020}")];
    assert!(shared.iter().all(|k| epoch_and_edge.contains(k)), "shared reads beyond the epoch and the evidence: {shared:?}");
    assert!(w1.iter().all(|k| !k.starts_with("ids/") || k.starts_with("ids/claims/")), "a shared id counter: {w1:?}");
}

/// A store opened while a member is down connects to one that answers,
/// whichever member it tries first (the first is chosen at random).
#[test]
fn etcd_a_store_opens_while_a_member_is_down() {
    let Some(mut cluster) = cluster_or_skip("etcd_a_store_opens_while_a_member_is_down") else { return };
    let store = cluster.store(&format!("member-down-{}", std::process::id()));
    let mut rt = Runtime::open_store(&StoreSpec::parse(&store).unwrap()).unwrap();
    rt.register_epoch("e0", "tool", "sha256:a", "sha256:c", "s").unwrap();
    drop(rt);
    cluster.kill(0);
    for _ in 0..6 {
        let rt = Runtime::open_store(&StoreSpec::parse(&store).unwrap()).expect("a store opens on the members that answer");
        assert_eq!(rt.state("e0").unwrap(), Some(State::Advertised));
    }
}
