//! Property-based tests of the runtime: random operation sequences, with
//! DESIGN.md's invariants 1-6 checked after every step, and every recorded
//! history checked by the audit check (docs/lifecycle.md's safety properties).

use std::collections::BTreeMap;

use ed25519_dalek::{Signer, SigningKey};
use fcd::runtime::{EvidenceKind, Runtime, State};
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

/// What the test remembers to check the store against.
#[derive(Default)]
struct Model {
    evidence: Vec<i64>,
    formations: Vec<(i64, (String, Option<String>))>,
    leases: Vec<fcd::runtime::Lease>,
    fenced: BTreeMap<i64, usize>,
}

fn scratch() -> tempfile::TempDir {
    // A RAM-backed directory where there is one: thousands of durable commits per run.
    if std::path::Path::new("/dev/shm").is_dir() { tempfile::tempdir_in("/dev/shm").unwrap() } else { tempfile::tempdir().unwrap() }
}

fn check_invariants(rt: &Runtime, model: &Model) -> Result<(), TestCaseError> {
    let leases = rt.leases().unwrap();
    for (id, original) in &model.formations {
        // 1. Authority only contracts: a formation's authority never changes after formation.
        prop_assert_eq!(&rt.authority(*id).unwrap().unwrap(), original, "formation {} changed its authority", id);
    }
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
    }
    for epoch in EPOCHS {
        // 4. STALE only when no admitted or uncertain lease remains.
        if rt.state(epoch).unwrap() == Some(State::Stale) {
            let open = leases.iter().filter(|l| l.epoch == epoch && (l.state == "admitted" || l.state == "uncertain")).count();
            prop_assert_eq!(open, 0, "{} is STALE with open leases", epoch);
        }
    }
    for (lease, times) in &model.fenced {
        // 5 and 6. A token passes the fence once: one authorized effect per admitted invocation.
        prop_assert!(*times <= 1, "lease {} passed the fence {} times", lease, times);
    }
    Ok(())
}

/// What a run exercised, so the generator is known to reach every path.
#[derive(Default, Debug)]
struct Stats {
    admitted_source: usize,
    admitted_successor: usize,
    fenced: usize,
    refusals: BTreeMap<&'static str, usize>,
}

fn run(ops: Vec<Op>) -> Result<Stats, TestCaseError> {
    let mut stats = Stats::default();
    let dir = scratch();
    let mut rt = Runtime::open(&dir.path().join("runtime.sqlite")).unwrap();
    let resolver = SigningKey::from_bytes(&[7u8; 32]);
    rt.set_resolver(&resolver.verifying_key()).unwrap();
    for e in EPOCHS {
        let (a, c) = digests(e);
        rt.register_epoch(e, "tool", &a, &c, "sha256:summary").unwrap();
    }
    let mut model = Model::default();
    let mut now = 1_000u64;
    for op in ops {
        match op {
            Op::Evidence { certificate, target, args } => {
                let kind = if certificate { EvidenceKind::Certificate } else { EvidenceKind::Edge };
                let args = format!("args-{args}");
                if let Ok(id) = rt.add_evidence(kind, "tool", certificate.then_some(args.as_str()), "e0", EPOCHS[target], now, now + 600) {
                    model.evidence.push(id);
                }
            }
            Op::Form { args, evidence } => {
                let evidence = evidence.and_then(|i| model.evidence.get(i).copied());
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
                            model.leases.push(lease);
                        }
                        Err(r) => *stats.refusals.entry(r.code.as_str()).or_default() += 1,
                    }
                }
            }
            Op::Transition { epoch, to } => {
                let to = [State::Advertised, State::HiddenButValid, State::Draining, State::Stale][to];
                let _ = rt.transition(EPOCHS[epoch], to);
            }
            Op::Complete { lease } => {
                if let Some(l) = model.leases.get(lease) {
                    let _ = rt.complete(l.id);
                }
            }
            Op::Uncertain { lease } => {
                if let Some(l) = model.leases.get(lease) {
                    let _ = rt.mark_uncertain(l.id);
                }
            }
            Op::Resolve { lease } => {
                if let Some(l) = model.leases.get(lease) {
                    let sig = resolver.sign(fcd::runtime::resolution_message(l.id, "completed").as_bytes());
                    let _ = rt.resolve(l.id, "completed", &sig.to_bytes());
                }
            }
            Op::Revoke { evidence, index } => {
                let handle = if evidence {
                    model.evidence.get(index).map(|id| format!("evidence:{id}"))
                } else {
                    model.formations.get(index).map(|(id, _)| format!("formation:{id}"))
                };
                if let Some(h) = handle {
                    let _ = rt.revoke(&h);
                }
            }
            Op::Fence { lease, tamper } => {
                if let Some(l) = model.leases.get(lease) {
                    let (mut artifact, mut config) = digests(&l.epoch);
                    let mut generation = l.generation;
                    match tamper {
                        1 => artifact.push('x'),
                        2 => config.push('x'),
                        3 => generation += 1,
                        _ => {}
                    }
                    let result = rt.fence(&l.token, &artifact, &config, generation);
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
                for l in model.leases.iter().filter(|l| l.epoch == "e0") {
                    let _ = rt.complete(l.id);
                }
                let _ = rt.transition("e0", State::Draining);
                let _ = rt.transition("e0", State::Stale);
            }
        }
        check_invariants(&rt, &model)?;
    }
    prop_assert!(rt.verify_audit().is_ok(), "the audit chain is broken");
    // The recorded history keeps every safety property of docs/lifecycle.md.
    let report = fcd::lifecycle::history::check_runtime(&rt).unwrap();
    prop_assert!(report.violations.is_empty(), "{}", report.text());
    Ok(stats)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, .. ProptestConfig::default() })]

    #[test]
    fn invariants_hold_after_every_step(ops in proptest::collection::vec(op(), 1..60)) {
        run(ops)?;
    }
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
        let stats = run(ops).unwrap();
        total.admitted_source += stats.admitted_source;
        total.admitted_successor += stats.admitted_successor;
        total.fenced += stats.fenced;
        for (k, v) in stats.refusals {
            *total.refusals.entry(k).or_default() += v;
        }
    }
    assert!(total.admitted_source > 0 && total.admitted_successor > 0 && total.fenced > 0, "{total:?}");
    for code in ["source_draining", "not_captured", "replay", "final_hop_artifact_mismatch", "stale_generation"] {
        assert!(total.refusals.contains_key(code), "never refused with {code}: {total:?}");
    }
}

#[test]
fn a_draining_source_refuses_and_a_captured_successor_runs_after_stale() {
    let dir = scratch();
    let mut rt = Runtime::open(&dir.path().join("r.sqlite")).unwrap();
    for e in EPOCHS {
        let (a, c) = digests(e);
        rt.register_epoch(e, "tool", &a, &c, "s").unwrap();
    }
    let cert = rt.add_evidence(EvidenceKind::Certificate, "tool", Some("args-0"), "e0", "e1", 0, 10_000).unwrap();
    let f = rt.form("snap", "tool", "args-0", "user:alice", "e0", Some(cert), 100, 900).unwrap();
    let first = rt.admit(f, 100).unwrap();
    assert_eq!(first.epoch, "e0");
    rt.transition("e0", State::Draining).unwrap();
    assert_eq!(rt.admit(f, 101).unwrap_err().code, "source_draining");
    assert_eq!(rt.transition("e0", State::Stale).unwrap_err().code, "leases_outstanding");
    rt.complete(first.id).unwrap();
    rt.transition("e0", State::Stale).unwrap();
    let second = rt.admit(f, 102).unwrap();
    assert_eq!(second.epoch, "e1");
    let (a, c) = digests("e1");
    assert_eq!(rt.fence(&second.token, &a, &c, second.generation).unwrap(), second.id);
    assert_eq!(rt.fence(&second.token, &a, &c, second.generation).unwrap_err().code, "replay");
    rt.revoke(&format!("evidence:{cert}")).unwrap();
    assert_eq!(rt.admit(f, 103).unwrap_err().code, "revoked");
    assert!(rt.verify_audit().unwrap() > 5);
    let report = fcd::lifecycle::history::check_runtime(&rt).unwrap();
    assert!(report.violations.is_empty(), "{}", report.text());
}
