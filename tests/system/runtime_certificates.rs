//! The runtime verifies what it admits: epochs come only from admitted
//! registry epochs, and certificate evidence only from a DSSE envelope that
//! verifies under a configured issuer, is valid now, names the source and
//! target epochs' artifacts and summaries and the contract, and (at
//! formation) is for this very call. A forged, expired, wrong-issuer,
//! wrong-call or wrong-artifact certificate is refused, each here.

use std::path::PathBuf;

use base64::Engine;
use ed25519_dalek::{SigningKey, VerifyingKey};
use fcd_compiler::profile::Profile;
use fcd_compiler::register::{Registration, Request, register};
use fcd_model::canon;
use fcd_model::refusal::RefusalCode;
use fcd_model::summary::Summary;
use fcd_runtime::registry::{Regeneration, Registry};
use fcd_runtime::runtime::{Measured, Runtime, State};
use fcd_verify::canonical_calls::Canonical;
use fcd_verify::certificate::{self, Issue};
use fcd_verify::verdict::{CallInput, check_call, decide};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn summary(fixture: &str, id: &str) -> Summary {
    let profile = Profile::load(&root().join("profiles/github-create-repository")).unwrap();
    let request = Request { source: root().join("fixtures/github-create-repository").join(fixture), release: Some(id.into()), ..Request::default() };
    let Registration::Registered(summary) = register(&profile, &request).unwrap() else { panic!("{fixture} escalated") };
    *summary
}

const NOW: u64 = 1_900_000_000;

/// v1.4 is the source, v1.3 the successor; both admitted into a registry and registered from it.
struct World {
    rt: Runtime,
    registry: Registry,
    v14: (String, Summary),
    v13: (String, Summary),
    canonical: Canonical,
    issuer: SigningKey,
    _dir: tempfile::TempDir,
}

fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let mut registry = Registry::open(&dir.path().join("registry.sqlite")).unwrap();
    let mut rt = Runtime::open(&dir.path().join("runtime.sqlite")).unwrap();
    let mut admitted = |s: Summary| {
        let regeneration = Regeneration { process: 7, summary_digest: s.summary_digest.clone() };
        let id = registry.admit(&s, &regeneration).unwrap();
        (id, s)
    };
    let (v14, v13) = (admitted(summary("default-true", "v1.4")), admitted(summary("default-false", "v1.3")));
    for (id, s) in [&v14, &v13] {
        assert_eq!(&rt.register_admitted(&registry, id, None).unwrap(), s);
    }
    let canonical = Canonical::load(&root().join("profiles/github-create-repository/canonical.json")).unwrap();
    World { rt, registry, v14, v13, canonical, issuer: SigningKey::from_bytes(&[7; 32]), _dir: dir }
}

/// Canonical call B keeps `private`: safe on v1.3.
const KEEPS_PRIVATE: &str = "B";

/// A certificate for canonical call `name` on `target`, naming `source`, signed by `key`.
fn certificate(w: &World, name: &str, target: &Summary, source: &Summary, key: &SigningKey, now: u64) -> Vec<u8> {
    let input = CallInput::new(w.canonical.call(name).unwrap(), "canonical.json");
    let call = check_call(target, &input).unwrap();
    let decision = decide(&call, &w.canonical.env, &w.canonical.contract);
    let safe = decision.certifiable().expect("the call is safe on the target");
    let issue = Issue { call, env: &w.canonical.env, contract: &w.canonical.contract, decision: safe, now, valid_for: 600, source: Some(source) };
    let mut bytes = canon::to_canonical(&certificate::issue(&issue, key));
    bytes.push(b'\n');
    bytes
}

fn contract(w: &World) -> String {
    canon::digest(&w.canonical.contract)
}

fn issuers(w: &World) -> Vec<VerifyingKey> {
    vec![w.issuer.verifying_key()]
}

fn add(w: &mut World, envelope: &[u8], now: u64) -> Result<i64, fcd_runtime::runtime::Refusal> {
    let (keys, contract) = (issuers(w), contract(w));
    let (source, target) = (w.v14.0.clone(), w.v13.0.clone());
    w.rt.add_certificate(envelope, &keys, &source, &target, &contract, now)
}

fn args_digest(w: &World, name: &str) -> String {
    canon::digest(&w.canonical.call(name).unwrap().arguments)
}

#[test]
fn a_genuine_certificate_is_evidence_for_its_own_call_after_retirement() {
    let mut w = world();
    let envelope = certificate(&w, KEEPS_PRIVATE, &w.v13.1, &w.v14.1, &w.issuer, NOW);
    let evidence = add(&mut w, &envelope, NOW + 1).unwrap();
    let (tool, digest, source) = (w.canonical.call(KEEPS_PRIVATE).unwrap().tool, args_digest(&w, KEEPS_PRIVATE), w.v14.0.clone());
    let f = w.rt.form("snap", &tool, &digest, "user:alice", &source, Some(evidence), NOW + 2, 300).unwrap();
    w.rt.transition(&source, State::Draining).unwrap();
    w.rt.transition(&source, State::Stale).unwrap();
    let lease = w.rt.admit(f, NOW + 3).unwrap();
    assert_eq!(lease.epoch, w.v13.0);
    let (artifact, config) = w.rt.epoch_digests(&w.v13.0).unwrap().unwrap();
    assert_eq!(artifact, w.v13.1.source.digest, "the epoch's artifact is the summary's own (fixtures publish no artifact digest)");
    assert_eq!(w.rt.fence(&lease.token, &artifact, &config, lease.generation, NOW + 4).unwrap(), lease.id);
}

#[test]
fn a_forged_certificate_is_refused() {
    let mut w = world();
    let envelope = certificate(&w, KEEPS_PRIVATE, &w.v13.1, &w.v14.1, &w.issuer, NOW);
    // The statement rewritten (another principal), the signature kept, the envelope re-canonicalized.
    let mut env: certificate::DsseEnvelope = serde_json::from_slice(&envelope).unwrap();
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut statement: certificate::Statement = serde_json::from_slice(&b64.decode(&env.payload).unwrap()).unwrap();
    statement.predicate.principal = "user:mallory".into();
    env.payload = b64.encode(canon::to_canonical(&statement));
    let forged = canon::to_canonical(&env);
    let r = add(&mut w, &forged, NOW + 1).unwrap_err();
    assert_eq!(r.code, RefusalCode::UntrustedCertificate, "{r}");
    // An altered byte outside the signed payload is refused too: the envelope is kept in its issued form.
    let text = String::from_utf8(envelope).unwrap().replacen("{\"payload\"", "{ \"payload\"", 1);
    assert_eq!(add(&mut w, text.as_bytes(), NOW + 1).unwrap_err().code, RefusalCode::UntrustedCertificate);
    // Free fields are not a certificate at all.
    let r = w.rt.add_evidence(fcd_runtime::runtime::EvidenceKind::Certificate, "create_repository", Some("sha256:x"), &w.v14.0, &w.v13.0, 0, NOW * 2);
    assert_eq!(r.unwrap_err().code, RefusalCode::BadEvidence);
}

#[test]
fn a_certificate_by_another_issuer_is_refused() {
    let mut w = world();
    let stranger = SigningKey::from_bytes(&[9; 32]);
    let envelope = certificate(&w, KEEPS_PRIVATE, &w.v13.1, &w.v14.1, &stranger, NOW);
    let r = add(&mut w, &envelope, NOW + 1).unwrap_err();
    assert_eq!(r.code, RefusalCode::UntrustedCertificate, "{r}");
    // The same certificate is accepted by a runtime that trusts that issuer.
    let (source, target, contract) = (w.v14.0.clone(), w.v13.0.clone(), contract(&w));
    assert!(w.rt.add_certificate(&envelope, &[stranger.verifying_key()], &source, &target, &contract, NOW + 1).is_ok());
}

#[test]
fn an_expired_or_not_yet_valid_certificate_is_refused() {
    let mut w = world();
    let envelope = certificate(&w, KEEPS_PRIVATE, &w.v13.1, &w.v14.1, &w.issuer, NOW);
    let r = add(&mut w, &envelope, NOW + 601).unwrap_err();
    assert_eq!(r.code, RefusalCode::Expired, "{r}");
    assert_eq!(add(&mut w, &envelope, NOW - 1).unwrap_err().code, RefusalCode::Expired);
    // Accepted inside its window, it still expires as evidence: admission after the window refuses.
    let evidence = add(&mut w, &envelope, NOW + 600).unwrap();
    let (tool, digest, source) = (w.canonical.call(KEEPS_PRIVATE).unwrap().tool, args_digest(&w, KEEPS_PRIVATE), w.v14.0.clone());
    let f = w.rt.form("snap", &tool, &digest, "user:alice", &source, Some(evidence), NOW + 600, 3600).unwrap();
    w.rt.transition(&source, State::Draining).unwrap();
    w.rt.transition(&source, State::Stale).unwrap();
    assert_eq!(w.rt.admit(f, NOW + 601).unwrap_err().code, RefusalCode::Expired);
}

#[test]
fn a_certificate_for_another_call_is_not_captured() {
    let mut w = world();
    let envelope = certificate(&w, KEEPS_PRIVATE, &w.v13.1, &w.v14.1, &w.issuer, NOW);
    let evidence = add(&mut w, &envelope, NOW + 1).unwrap();
    let (tool, source) = (w.canonical.call(KEEPS_PRIVATE).unwrap().tool, w.v14.0.clone());
    // Other arguments (canonical call A), the same principal.
    let other = args_digest(&w, "A");
    let r = w.rt.form("snap", &tool, &other, "user:alice", &source, Some(evidence), NOW + 2, 300).unwrap_err();
    assert_eq!(r.code, RefusalCode::NotCaptured, "{r}");
    // The same arguments for another principal.
    let digest = args_digest(&w, KEEPS_PRIVATE);
    let r = w.rt.form("snap", &tool, &digest, "user:bob", &source, Some(evidence), NOW + 2, 300).unwrap_err();
    assert_eq!(r.code, RefusalCode::NotCaptured, "{r}");
    // A certificate under another contract is refused when it is added.
    let (keys, target) = (issuers(&w), w.v13.0.clone());
    let r = w.rt.add_certificate(&envelope, &keys, &source, &target, "sha256:another-contract", NOW + 1).unwrap_err();
    assert_eq!(r.code, RefusalCode::CertificateMismatch, "{r}");
}

#[test]
fn a_certificate_for_another_artifact_is_refused() {
    let mut w = world();
    // Issued on v1.4's summary (it is safe there too) but offered as evidence for v1.3.
    let on_source = certificate(&w, KEEPS_PRIVATE, &w.v14.1, &w.v14.1, &w.issuer, NOW);
    let r = add(&mut w, &on_source, NOW + 1).unwrap_err();
    assert_eq!(r.code, RefusalCode::CertificateMismatch, "{r}");
    assert!(r.detail.contains("target artifact"), "{r}");
    // Right target, but naming another source release.
    let other_source = certificate(&w, KEEPS_PRIVATE, &w.v13.1, &w.v13.1, &w.issuer, NOW);
    let r = add(&mut w, &other_source, NOW + 1).unwrap_err();
    assert_eq!(r.code, RefusalCode::CertificateMismatch, "{r}");
    assert!(r.detail.contains("source"), "{r}");
}

#[test]
fn epochs_come_only_from_intact_admitted_registry_epochs() {
    let mut w = world();
    let r = w.rt.register_admitted(&w.registry, "sha256:made-up", None).unwrap_err();
    assert_eq!(r.code, RefusalCode::NotAdmitted);
    // A summary edited in the registry after admission is not registered.
    let path = w._dir.path().join("registry.sqlite");
    let db = rusqlite::Connection::open(&path).unwrap();
    db.execute("UPDATE summaries SET bytes = CAST(REPLACE(CAST(bytes AS TEXT), 'v1.3', 'v9.9') AS BLOB)", []).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut fresh = Runtime::open(&dir.path().join("runtime.sqlite")).unwrap();
    let r = fresh.register_admitted(&w.registry, &w.v13.0, None).unwrap_err();
    assert_eq!(r.code, RefusalCode::NotAdmitted, "{r}");
    assert_eq!(fresh.state(&w.v13.0).unwrap(), None);
}

#[test]
fn server_configuration_files_are_bound_at_the_first_registration_and_never_again() {
    let w = world();
    let dir = tempfile::tempdir().unwrap();
    let mut rt = Runtime::open(&dir.path().join("bound.sqlite")).unwrap();
    let epoch = &w.v14.0;
    rt.register_admitted(&w.registry, epoch, Some("sha256:files-1")).unwrap();
    // A restart that measures the files changed registers the epoch again: what is bound stays.
    rt.register_admitted(&w.registry, epoch, Some("sha256:files-2")).unwrap();
    rt.register_admitted(&w.registry, epoch, None).unwrap();
    assert_eq!(rt.server_config(epoch).unwrap().as_deref(), Some("sha256:files-1"));
    let (artifact, config) = rt.epoch_digests(epoch).unwrap().unwrap();
    for (n, (files, passes)) in [(Some("sha256:files-2"), false), (None, false), (Some("sha256:files-1"), true)].into_iter().enumerate() {
        let f = rt.form("snap", &w.v14.1.tool, &format!("sha256:args-{n}"), "user:alice", epoch, None, NOW, 900).unwrap();
        let lease = rt.admit(f, NOW).unwrap();
        let measured = Measured { artifact: &artifact, config: &config, server_config: files };
        match rt.fence_measured(&lease.token, &measured, lease.generation, NOW) {
            Ok(id) => assert!(passes && id == lease.id, "{files:?} passed"),
            Err(r) => {
                assert!(!passes, "{files:?}: {r}");
                assert_eq!(r.code, RefusalCode::FinalHopConfigMismatch, "{r}");
                assert!(r.detail.contains("sha256:files-1"), "the refusal names what is bound: {r}");
            }
        }
    }
    // An epoch registered without files refuses a hop that measures some.
    let (artifact13, config13) = w.rt.epoch_digests(&w.v13.0).unwrap().unwrap();
    let mut rt13 = w.rt;
    let f = rt13.form("snap", &w.v13.1.tool, "sha256:args", "user:alice", &w.v13.0, None, NOW, 900).unwrap();
    let lease = rt13.admit(f, NOW).unwrap();
    let measured = Measured { artifact: &artifact13, config: &config13, server_config: Some("sha256:files-1") };
    assert_eq!(rt13.fence_measured(&lease.token, &measured, lease.generation, NOW).unwrap_err().code, RefusalCode::FinalHopConfigMismatch);
}
