//! The paper's two experiments on the github-create-repository summaries
//! (hand-written fixtures): four successor policies compared, and when a
//! successor certificate may authorize a formed call.

use std::path::PathBuf;

use fcd_compiler::profile::Profile;
use fcd_compiler::register::{Registration, Request, register};
use fcd_model::canon;
use fcd_model::effect::Exposure;
use fcd_model::summary::Summary;
use fcd_runtime::runtime::{EvidenceKind, Runtime, State};
use fcd_verify::canonical_calls::Canonical;
use fcd_verify::verdict::{Call, CallInput, Verdict, check_call, decide};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

struct Release {
    epoch: String,
    summary: Summary,
}

fn release(fixture: &str, id: &str) -> Release {
    let profile = Profile::load(&root().join("profiles/github-create-repository")).unwrap();
    let request = Request { source: root().join("fixtures/github-create-repository").join(fixture), release: Some(id.into()), ..Request::default() };
    let Registration::Registered(summary) = register(&profile, &request).unwrap() else { panic!("{fixture} escalated") };
    Release { epoch: fcd_runtime::registry::epoch_id(&summary), summary: *summary }
}

/// v1.4 (omitted private is private) is the source; v1.3 (omitted is public) the successor.
struct World {
    rt: Runtime,
    v14: Release,
    v13: Release,
    canonical: Canonical,
    _dir: tempfile::TempDir,
}

const NOW: u64 = 1_900_000_000;

fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let mut rt = Runtime::open(&dir.path().join("runtime.sqlite")).unwrap();
    let (v14, v13) = (release("default-true", "v1.4"), release("default-false", "v1.3"));
    for r in [&v14, &v13] {
        let s = &r.summary;
        rt.register_epoch(&r.epoch, &s.tool, &s.source.digest, &s.config_digest, &s.summary_digest).unwrap();
    }
    let canonical = Canonical::load(&root().join("profiles/github-create-repository/canonical.json")).unwrap();
    World { rt, v14, v13, canonical, _dir: dir }
}

fn call(w: &World, name: &str) -> Call {
    w.canonical.call(name).unwrap()
}

fn args_digest(c: &Call) -> String {
    canon::digest(&c.arguments)
}

/// Canonical call B (private true) is the paper's call A; canonical A ({name}) its call B.
const KEEPS_PRIVATE: &str = "B";
const OMITS_PRIVATE: &str = "A";

#[derive(Debug, PartialEq)]
enum Outcome {
    /// Ran on this epoch with an effect of this exposure.
    Ran(String, Exposure),
    /// Stopped before the handler, with this reason code.
    Stopped(&'static str),
}

/// Forms the call on v1.4 under a policy's evidence, retires v1.4, then admits and runs it.
fn run_after_retirement(w: &mut World, name: &str, evidence: Option<i64>) -> Outcome {
    let c = call(w, name);
    let formation = w.rt.form("snapshot-1", &c.tool, &args_digest(&c), "user:alice", &w.v14.epoch, evidence, NOW, 3600).unwrap();
    retire(w);
    match w.rt.admit(formation, NOW + 10) {
        Err(r) => {
            audit_passes(w);
            Outcome::Stopped(r.code.as_str())
        }
        Ok(lease) => {
            let target = if lease.epoch == w.v13.epoch { &w.v13 } else { &w.v14 };
            let s = &target.summary;
            w.rt.fence(&lease.token, &s.source.digest, &s.config_digest, lease.generation, NOW + 10).unwrap();
            let input = CallInput::new(c.clone(), "canonical.json");
            let d = decide(&check_call(s, &input).unwrap(), &w.canonical.env, &w.canonical.contract);
            w.rt.complete(lease.id).unwrap();
            audit_passes(w);
            Outcome::Ran(if lease.epoch == w.v13.epoch { "v1.3".into() } else { "v1.4".into() }, d.effects[0].exposure)
        }
    }
}

/// The world's recorded history keeps every safety property of docs/lifecycle.md.
fn audit_passes(w: &World) {
    let report = fcd_lifecycle::audit_check::check_runtime(&w.rt).unwrap();
    assert!(report.violations.is_empty(), "{}", report.text());
}

fn retire(w: &mut World) {
    if w.rt.state(&w.v14.epoch).unwrap() == Some(State::Advertised) {
        w.rt.transition(&w.v14.epoch, State::Draining).unwrap();
        w.rt.transition(&w.v14.epoch, State::Stale).unwrap();
    }
}

#[test]
fn policies_compared_on_a_retiring_release() {
    // Exact pinning and release-wide deny: no successor evidence at all.
    for policy in ["exact pinning", "release-wide deny"] {
        let mut w = world();
        assert_eq!(run_after_retirement(&mut w, KEEPS_PRIVATE, None), Outcome::Stopped("not_captured"), "{policy}");
        let mut w = world();
        assert_eq!(run_after_retirement(&mut w, OMITS_PRIVATE, None), Outcome::Stopped("not_captured"), "{policy}");
    }

    // Release-wide allow: one edge for every call of the tool; the call that omits
    // `private` runs on v1.3 and creates a public repository.
    let mut w = world();
    let edge = w.rt.add_evidence(EvidenceKind::Edge, "create_repository", None, &w.v14.epoch, &w.v13.epoch, 0, NOW + 86_400).unwrap();
    assert_eq!(run_after_retirement(&mut w, KEEPS_PRIVATE, Some(edge)), Outcome::Ran("v1.3".into(), Exposure::Private));
    let mut w2 = world();
    let edge = w2.rt.add_evidence(EvidenceKind::Edge, "create_repository", None, &w2.v14.epoch, &w2.v13.epoch, 0, NOW + 86_400).unwrap();
    assert_eq!(run_after_retirement(&mut w2, OMITS_PRIVATE, Some(edge)), Outcome::Ran("v1.3".into(), Exposure::Public), "release-wide allow leaks");

    // Call-specific FCD: a certificate exists only where v1.3 keeps the call's meaning.
    let mut w = world();
    let mut certificates = std::collections::BTreeMap::new();
    for name in [KEEPS_PRIVATE, OMITS_PRIVATE] {
        let c = call(&w, name);
        let input = CallInput::new(c.clone(), "canonical.json");
        let d = decide(&check_call(&w.v13.summary, &input).unwrap(), &w.canonical.env, &w.canonical.contract);
        if d.decision == Verdict::Safe {
            let id = w.rt.add_unverified_certificate(&c.tool, &args_digest(&c), "user:alice", &w.v14.epoch, &w.v13.epoch, 0, NOW + 86_400).unwrap();
            certificates.insert(name, id);
        }
    }
    assert_eq!(certificates.len(), 1, "only the call that keeps private is certified on v1.3");
    let keeps = run_after_retirement(&mut w, KEEPS_PRIVATE, certificates.get(KEEPS_PRIVATE).copied());
    assert_eq!(keeps, Outcome::Ran("v1.3".into(), Exposure::Private), "FCD completes the call with its original approval");
    let mut w = world();
    let omits = run_after_retirement(&mut w, OMITS_PRIVATE, certificates.get(OMITS_PRIVATE).copied());
    assert_eq!(omits, Outcome::Stopped("not_captured"), "FCD blocks the changed call before the handler");
}

#[test]
fn successor_timing_and_the_final_hop() {
    let mut w = world();
    let c = call(&w, KEEPS_PRIVATE);
    let digest = args_digest(&c);

    // A formation made before the certificate existed captures nothing ...
    let old = w.rt.form("snapshot-1", &c.tool, &digest, "user:alice", &w.v14.epoch, None, NOW, 3600).unwrap();
    let cert = w.rt.add_unverified_certificate(&c.tool, &digest, "user:alice", &w.v14.epoch, &w.v13.epoch, 0, NOW + 86_400).unwrap();
    // ... and one made after it captures the certificate.
    let fresh = w.rt.form("snapshot-2", &c.tool, &digest, "user:alice", &w.v14.epoch, Some(cert), NOW + 1, 3600).unwrap();
    retire(&mut w);
    assert_eq!(w.rt.authority(old).unwrap().unwrap().1, None, "a later certificate never joins an older record");
    assert_eq!(w.rt.admit(old, NOW + 10).unwrap_err().code, "not_captured");
    let lease = w.rt.admit(fresh, NOW + 10).unwrap();
    assert_eq!(lease.epoch, w.v13.epoch, "the captured certificate executes after retirement");

    // The final hop: an artifact that is not the successor's stops before the handler, and so does a replay.
    let s13 = &w.v13.summary;
    let wrong = w.rt.fence(&lease.token, &w.v14.summary.source.digest, &s13.config_digest, lease.generation, NOW + 10).unwrap_err();
    assert_eq!(wrong.code, "final_hop_artifact_mismatch");
    assert_eq!(w.rt.fence(&lease.token, &s13.source.digest, &s13.config_digest, lease.generation, NOW + 10).unwrap(), lease.id);
    assert_eq!(w.rt.fence(&lease.token, &s13.source.digest, &s13.config_digest, lease.generation, NOW + 10).unwrap_err().code, "replay");
    audit_passes(&w);
}
