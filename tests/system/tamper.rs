//! Byte-flip tamper tests: every byte of a real summary, a real certificate and
//! a real lease token (with the digests and generation the fence is given) is
//! changed in four ways, one at a time, and every changed input must be
//! refused — a load error, a verification failure, a fence refusal. Nothing is
//! skipped: a change that left the input meaning the same would fail the test
//! and would have to be argued here. The totals are printed so they can be
//! quoted (`cargo test --test system tamper:: -- --nocapture`).

use std::path::{Path, PathBuf};

use fcd_compiler::profile::Profile;
use fcd_compiler::register::{Registration, Request, register};
use fcd_model::summary::Summary;
use fcd_runtime::runtime::Runtime;
use fcd_verify::canonical_calls::Canonical;
use fcd_verify::verdict::{Verdict, check_call, decide};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The four changes made at every position. Each one really changes the byte:
/// the xors never leave a byte as it was, and the digit is `7`, or `3` where
/// the byte already is `7`.
const CHANGES: [&str; 4] = ["xor 0x01", "xor 0x80", "xor 0xff", "a digit"];

fn change(byte: u8, which: usize) -> u8 {
    match which {
        0 => byte ^ 0x01,
        1 => byte ^ 0x80,
        2 => byte ^ 0xff,
        _ if byte == b'7' => b'3',
        _ => b'7',
    }
}

/// Positions × changes, and how many of those inputs were refused.
#[derive(Default, Debug, Clone, Copy)]
struct Tally {
    positions: usize,
    inputs: usize,
    refused: usize,
}

/// Applies every change at every position; `refused` says whether fcd refused
/// the changed bytes. Every acceptance is reported with its position and change.
fn flip_all(bytes: &[u8], mut refused: impl FnMut(&[u8]) -> bool) -> (Tally, Vec<String>) {
    let mut tally = Tally { positions: bytes.len(), ..Tally::default() };
    let mut accepted = Vec::new();
    let mut changed = bytes.to_vec();
    for pos in 0..bytes.len() {
        for (which, name) in CHANGES.iter().enumerate() {
            changed[pos] = change(bytes[pos], which);
            assert_ne!(changed[pos], bytes[pos]);
            tally.inputs += 1;
            if refused(&changed) {
                tally.refused += 1;
            } else {
                let context = String::from_utf8_lossy(&bytes[pos.saturating_sub(20)..(pos + 20).min(bytes.len())]).into_owned();
                accepted.push(format!("byte {pos} ({:?}) {name}: accepted, near `{context}`", bytes[pos] as char));
            }
        }
        changed[pos] = bytes[pos];
    }
    (tally, accepted)
}

fn report(what: &str, tally: Tally, accepted: &[String]) {
    println!("tamper {what}: {} positions x {} changes = {} inputs, {} refused", tally.positions, CHANGES.len(), tally.inputs, tally.refused);
    assert!(accepted.is_empty(), "{what}: {} changed inputs were accepted:\n{}", accepted.len(), accepted.join("\n"));
    assert_eq!(tally.inputs, tally.refused);
}

/// The guarded git-diff fixture registered under the canonical configuration,
/// and the canonical calls of its profile.
fn registered() -> (Summary, Canonical) {
    let dir = root().join("profiles/git-diff");
    let profile = Profile::load(&dir).expect("the profile loads");
    let canonical = Canonical::load(&dir.join("canonical.json")).unwrap();
    let request = Request {
        source: root().join("fixtures/git-diff/guarded"),
        release: Some("fixture-guarded".into()),
        config: canonical.env.config.as_object().cloned(),
        ..Request::default()
    };
    match register(&profile, &request).unwrap() {
        Registration::Registered(s) => (*s, canonical),
        Registration::Escalated(e) => panic!("the guarded fixture escalated: {e}"),
    }
}

#[test]
fn every_flipped_byte_of_a_summary_is_refused() {
    let (summary, _) = registered();
    // The bytes `fcd register --out` writes.
    let bytes = summary.to_canonical();
    let path = Path::new("summary.json");
    // The control: the unchanged bytes load, and as the same summary.
    assert_eq!(Summary::parse(path, bytes.clone()).expect("the real summary loads"), summary);
    // A flip outside a string breaks the JSON, an unknown key is refused, a
    // value the digests cover no longer matches its digest, and a changed
    // digest no longer matches its content; a byte made non-ASCII is not UTF-8.
    let (tally, accepted) = flip_all(&bytes, |changed| Summary::parse(path, changed.to_vec()).is_err());
    report("summary", tally, &accepted);
}

#[test]
fn every_flipped_byte_of_a_certificate_is_refused() {
    let (summary, canonical) = registered();
    let keys = tempfile::tempdir().unwrap();
    let key_path = keys.path().join("issuer.key");
    fcd_verify::certificate::keygen(&key_path).unwrap();
    let key = fcd_verify::certificate::load_signing_key(&key_path).unwrap();
    let public = fcd_verify::certificate::load_verifying_key(&fcd_verify::certificate::public_path(&key_path)).unwrap();

    let input = canonical.input("A").expect("canonical call A");
    let call = check_call(&summary, &input).unwrap();
    let decision = decide(&call, &canonical.env, &canonical.contract);
    assert_eq!(decision.decision, Verdict::Safe, "call A is safe on the guarded release");
    let now = 1_800_000_000;
    let safe = decision.certifiable().expect("a safe decision can be certified");
    let issue =
        fcd_verify::certificate::Issue { call, env: &canonical.env, contract: &canonical.contract, decision: safe, now, valid_for: 3_600, source: None };
    let envelope = fcd_verify::certificate::issue(&issue, &key);
    // The bytes `fcd certify --out` writes: canonical JSON and a newline.
    let mut bytes = fcd_model::canon::to_canonical(&envelope);
    bytes.push(b'\n');
    let verify_at = now + 60;
    assert!(fcd_verify::certificate::verify(&bytes, &public, verify_at).is_ok(), "the real certificate verifies");
    // The envelope must be byte-for-byte canonical (so a flip in its framing,
    // or of the final newline, is refused); the payload and signature are
    // base64 whose unused bits must be zero, the key id must be the key's, and
    // the signature covers every byte of the payload.
    let (tally, accepted) = flip_all(&bytes, |changed| fcd_verify::certificate::verify(changed, &public, verify_at).is_err());
    report("certificate", tally, &accepted);
}

#[test]
fn every_flipped_byte_of_a_lease_token_is_refused_by_the_fence() {
    let dir = if Path::new("/dev/shm").is_dir() { tempfile::tempdir_in("/dev/shm").unwrap() } else { tempfile::tempdir().unwrap() };
    let mut rt = Runtime::open(&dir.path().join("runtime.sqlite")).unwrap();
    let artifact = fcd_model::canon::sha256(b"artifact");
    let config = fcd_model::canon::digest(&serde_json::json!({}));
    rt.register_epoch("e0", "git_diff", &artifact, &config, "sha256:summary").unwrap();
    let formation = rt.form("snapshot", "git_diff", "sha256:args", "user:alice", "e0", None, 1_000, 900).unwrap();
    let lease = rt.admit(formation, 1_100).unwrap();
    let generation = lease.generation.to_string();
    assert!(!lease.token.is_empty());

    // The fence takes text. A changed byte that makes the token (or a digest)
    // invalid UTF-8 could not reach it as a `&str`; it is passed as its lossy
    // decoding instead, whose U+FFFD still differs from the ASCII byte it
    // replaces, so the fence itself is what must refuse it.
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let mut totals = Tally::default();
    let mut all_accepted = Vec::new();
    let mut add = |what: &str, (tally, accepted): (Tally, Vec<String>)| {
        println!("tamper fence {what}: {} positions x {} changes = {} inputs, {} refused", tally.positions, CHANGES.len(), tally.inputs, tally.refused);
        totals.positions += tally.positions;
        totals.inputs += tally.inputs;
        totals.refused += tally.refused;
        all_accepted.extend(accepted.into_iter().map(|a| format!("{what}: {a}")));
    };
    // A refused fence commits nothing, so the same lease stays unused throughout.
    add("token", flip_all(lease.token.as_bytes(), |t| rt.fence(&text(t), &artifact, &config, lease.generation, 1_100).is_err()));
    add("artifact digest", flip_all(artifact.as_bytes(), |a| rt.fence(&lease.token, &text(a), &config, lease.generation, 1_100).is_err()));
    add("config digest", flip_all(config.as_bytes(), |c| rt.fence(&lease.token, &artifact, &text(c), lease.generation, 1_100).is_err()));
    // The generation as the CLI reads it (`--generation N`): text that does not
    // parse as an integer never reaches the fence, which is a refusal too.
    add(
        "generation",
        flip_all(generation.as_bytes(), |g| text(g).parse::<i64>().map_or(true, |g| rt.fence(&lease.token, &artifact, &config, g, 1_100).is_err())),
    );
    report("lease token, digests and generation", totals, &all_accepted);

    // Other spellings of the same lease id (found by the `token` fuzz target:
    // `0` + a genuine token passed the fence once) are not the token.
    for respelled in [format!("0{}", lease.token), format!("+{}", lease.token), format!("00{}", lease.token)] {
        assert_eq!(rt.fence(&respelled, &artifact, &config, lease.generation, 1_100).unwrap_err().code, "bad_token", "{respelled}");
    }

    // The control: the untouched inputs pass the fence once, and only once.
    assert_eq!(rt.fence(&lease.token, &artifact, &config, lease.generation, 1_100), Ok(lease.id));
    assert_eq!(rt.fence(&lease.token, &artifact, &config, lease.generation, 1_100).unwrap_err().code, "replay");
}
