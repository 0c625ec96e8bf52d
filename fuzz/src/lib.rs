//! The fuzz targets' shared harness: each `fuzz_targets/*.rs` hands libFuzzer's
//! bytes to one function here, which drives fcd's public API with them.
//!
//! The property of every target is that fcd never panics and never hangs on
//! input (libFuzzer runs with `-timeout=2`: an input that takes longer is a
//! finding). Where a stronger property is cheap it is asserted too: a freshly
//! compiled summary has no integrity problem and loads back; a summary
//! resealed with correct digests loads; a certificate issued for a safe
//! decision verifies; a fence only ever accepts a genuine, unused token.
//!
//! Fixed inputs (profiles, fixtures, canonical calls) are read once, from the
//! repository this crate lives in.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use ed25519_dalek::{Signer, SigningKey};
use fcd_verify::canonical_calls::Canonical;
use fcd_verify::verdict::{Call, CallInput, Contract, Env, Verdict, check_call, decide};
use fcd_compiler::profile::Profile;
use fcd_compiler::register::{Registration, Request, register};
use fcd_model::summary::Summary;
use fcd_frontends::{Lang, Region, SourceFile};

/// The certificate key of the fuzz targets and of the seed certificate
/// (`cargo xtask fuzz-seeds` signs with the same bytes). A test key: it signs
/// nothing outside fuzzing.
pub const CERT_KEY_SEED: [u8; 32] = [0x5e; 32];

/// The time at which certificates are verified and issued.
pub const NOW: u64 = 1_800_000_000;

pub fn repo() -> PathBuf {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR"));
    fuzz.parent().unwrap_or(fuzz).to_owned()
}

/// Profile and base fixture each frontend target runs under.
pub fn setup_of(lang: Lang) -> (&'static str, &'static str, &'static str) {
    match lang {
        Lang::Python => ("git-diff", "guarded", ".py"),
        Lang::Go => ("github-create-repository", "default-true", ".go"),
        Lang::CSharp => ("azure-redis-create", "wired-default-false", ".cs"),
        Lang::JavaScript => ("dbhub-execute-sql", "bundle-assignment-allowed", ".js"),
        Lang::TypeScript => ("dbhub-execute-sql", "ts-assignment-allowed", ".ts"),
    }
}

/// A profile with the files of its base fixture.
pub struct Setup {
    pub profile: Profile,
    pub base: Vec<SourceFile>,
    /// Paths of the base fixture the fuzz input takes, one at a time.
    pub slots: Vec<String>,
}

impl Setup {
    pub fn new(lang: Lang) -> Setup {
        let (profile_id, fixture, ext) = setup_of(lang);
        let profile = Profile::load(&repo().join("profiles").join(profile_id)).expect("the profile loads");
        let root = repo().join("fixtures").join(profile_id).join(fixture);
        let base = fcd_compiler::closure::collect(&root, &profile).expect("the fixture is readable").expect("the fixture is small");
        let slots: Vec<String> = base.iter().filter(|f| f.path.ends_with(ext)).map(|f| f.path.clone()).collect();
        assert!(!slots.is_empty(), "{profile_id}/{fixture} has no {ext} file");
        Setup { profile, base, slots }
    }
}

/// Frontend target: the input as the only file, then in place of each file of
/// the base fixture in turn (so mutated fixture sources meet the other files of
/// their release); each time the regions are found, their calls listed, the
/// facts extracted, the inventories checked and a summary compiled.
pub fn frontend(setup: &Setup, data: &[u8]) {
    for slot in &setup.slots {
        let alone = vec![SourceFile { path: slot.clone(), bytes: data.to_vec() }];
        analyze(setup, &alone);
        let replaced: Vec<SourceFile> =
            setup.base.iter().map(|f| if &f.path == slot { SourceFile { path: f.path.clone(), bytes: data.to_vec() } } else { f.clone() }).collect();
        analyze(setup, &replaced);
    }
}

fn analyze(setup: &Setup, files: &[SourceFile]) {
    let profile = &setup.profile;
    let frontend = fcd_compiler::languages::frontend(profile.language);
    let env = profile.env();
    // Every candidate region, even where the pipeline would stop at an
    // ambiguity: list its calls.
    for f in files {
        let Ok(syntax) = fcd_frontends::parse(profile.language.for_file(&f.path), f) else { continue };
        let trees = [(f.path.as_str(), &syntax)];
        for spec in &profile.regions {
            for node in frontend.find_regions(&syntax, &spec.kind) {
                let region = Region { name: &spec.name, file: &f.path, node, trees: &trees, env: &env };
                let _ = frontend.check_region(&region);
                let _ = frontend.calls(&region);
                let _ = region.anchor(node);
            }
        }
    }
    // The pipeline as `register` runs it.
    let Ok(analysis) = fcd_frontends::analyze_with(frontend, files, &profile.regions, &profile.fact_specs(), &env) else { return };
    let _ = fcd_compiler::inventory::check(&analysis.regions, |r| profile.inventories.get(r));
    let closure = fcd_compiler::closure::closure(files);
    let binding = fcd_compiler::summary::ReleaseBinding { release: "fuzz".into(), artifact_digest: None, config_digest: fcd_model::canon::digest(&serde_json::json!({})) };
    let summary = fcd_compiler::summary::compile(profile, closure, analysis, binding);
    assert!(summary.integrity_problems().is_empty(), "a freshly compiled summary has integrity problems: {:?}", summary.integrity_problems());
    if let Err(e) = Summary::parse(Path::new("compiled.json"), summary.to_canonical()) {
        panic!("a freshly compiled summary does not load back: {e}");
    }
}

/// The base fixture a profile of each language registers, for the profile target.
fn fixture_root(lang: Lang) -> PathBuf {
    let (profile_id, fixture, _) = setup_of(lang);
    repo().join("fixtures").join(profile_id).join(fixture)
}

/// Profile target: the input as `profile.toml` text, and as a file in a
/// profile directory; a profile that validates registers the base fixture of
/// its language.
pub fn profile(scratch: &Path, data: &[u8]) {
    let dir = scratch.join("profile");
    let _ = std::fs::create_dir_all(&dir);
    if std::fs::write(dir.join("profile.toml"), data).is_ok() {
        let _ = Profile::load(&dir);
    }
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(profile) = Profile::parse(Path::new("profile.toml"), text) else { return };
    let request = Request { source: fixture_root(profile.language), release: Some("fuzz".into()), ..Request::default() };
    if let Ok(Registration::Registered(summary)) = register(&profile, &request) {
        assert!(summary.integrity_problems().is_empty(), "{:?}", summary.integrity_problems());
    }
}

/// Every profile's registered base fixture and canonical calls.
pub struct Judged {
    pub cases: Vec<(Summary, Canonical)>,
}

impl Judged {
    pub fn new() -> Judged {
        let mut cases = Vec::new();
        for lang in [Lang::Python, Lang::Go, Lang::CSharp, Lang::JavaScript] {
            let (profile_id, _, _) = setup_of(lang);
            let dir = repo().join("profiles").join(profile_id);
            let profile = Profile::load(&dir).expect("the profile loads");
            let canonical = Canonical::load(&dir.join("canonical.json")).expect("canonical.json loads");
            let config = canonical.env.config.as_object().cloned();
            let request = Request { source: fixture_root(lang), release: Some("fuzz".into()), config, ..Request::default() };
            let registered = register(&profile, &request);
            match registered.expect("the fixture registers") {
                Registration::Registered(s) => cases.push((*s, canonical)),
                Registration::Escalated(e) => panic!("{profile_id} escalated: {e}"),
            }
        }
        Judged { cases }
    }
}

impl Default for Judged {
    fn default() -> Self {
        Judged::new()
    }
}

pub fn key() -> SigningKey {
    SigningKey::from_bytes(&CERT_KEY_SEED)
}

/// Decides a call; a safe decision is signed and must verify.
fn judge(summary: &Summary, call: &Call, env: &Env, contract: &Contract) {
    let input = CallInput::new(call.clone(), "call.json");
    let Ok(call) = check_call(summary, &input) else { return };
    let decision = decide(&call, env, contract);
    let Some(safe) = decision.certifiable() else {
        assert_ne!(decision.decision, Verdict::Safe, "a safe decision can always be certified");
        return;
    };
    let key = key();
    let issue = fcd_verify::certificate::Issue { call, env, contract, decision: safe, now: NOW, valid_for: 300, source: None };
    let envelope = fcd_verify::certificate::issue(&issue, &key);
    let bytes = fcd_model::canon::to_canonical(&envelope);
    if let Err(e) = fcd_verify::certificate::verify(&bytes, &key.verifying_key(), NOW) {
        panic!("a certificate just issued is refused: {e}");
    }
}

/// Call/env/contract target: the input as a canonical-calls file (every call
/// judged on every profile's summary), and as a call, an environment and a
/// contract on their own, each judged with the other two from canonical.json.
pub fn certify(judged: &Judged, data: &[u8]) {
    let path = Path::new("input.json");
    if let Ok(c) = serde_json::from_slice::<Canonical>(data) {
        for (summary, _) in &judged.cases {
            for name in c.calls.keys() {
                if let Some(call) = c.call(name) {
                    judge(summary, &call, &c.env, &c.contract);
                }
            }
        }
    }
    match serde_json::from_slice::<Call>(data) {
        Ok(call) => {
            for (summary, c) in &judged.cases {
                judge(summary, &call, &c.env, &c.contract);
            }
        }
        Err(e) => {
            let _ = fcd_model::InputError::json(path, &e).to_string();
        }
    }
    if let Ok(env) = serde_json::from_slice::<Env>(data) {
        for (summary, c) in &judged.cases {
            for name in c.calls.keys() {
                if let Some(call) = c.call(name) {
                    judge(summary, &call, &env, &c.contract);
                }
            }
        }
    }
    if let Ok(contract) = serde_json::from_slice::<Contract>(data) {
        for (summary, c) in &judged.cases {
            for name in c.calls.keys() {
                if let Some(call) = c.call(name) {
                    judge(summary, &call, &c.env, &contract);
                }
            }
        }
    }
}

/// Summary target: the input loaded as a summary file; then, if it has the
/// shape of a summary, resealed with correct digests, which must load unless
/// its format or final rule is wrong, and every canonical call decided on it.
pub fn summary(judged: &Judged, data: &[u8]) {
    let path = Path::new("summary.json");
    if let Ok(loaded) = Summary::parse(path, data.to_vec()) {
        assert!(loaded.integrity_problems().is_empty());
    }
    let Ok(mut s) = serde_json::from_slice::<Summary>(data) else { return };
    s.facts_digest = fcd_model::canon::digest(&s.facts);
    s.rules_digest = fcd_model::canon::digest(&s.rules);
    s.source.digest = fcd_model::canon::digest(&s.source.files);
    s.summary_digest = s.content_digest();
    let well_formed = s.format == fcd_model::summary::FORMAT && s.rules.last() == Some(&fcd_model::summary::catch_all());
    match Summary::parse(path, s.to_canonical()) {
        Ok(loaded) => {
            assert!(well_formed, "a summary with a wrong format or final rule loaded");
            for (_, c) in &judged.cases {
                for name in c.calls.keys() {
                    if let Some(call) = c.call(name) {
                        judge(&loaded, &call, &c.env, &c.contract);
                    }
                }
            }
        }
        Err(e) => assert!(!well_formed, "a resealed summary is refused: {e}"),
    }
}

/// Certificate target: the input verified as an envelope; then the input as
/// the payload of an envelope the fuzz key really signs, so the statement's
/// own checks (types, issuer, decision, validity) are reached.
pub fn cert(data: &[u8]) {
    let key = key();
    let verifying = key.verifying_key();
    let _ = fcd_verify::certificate::verify(data, &verifying, NOW);
    let sig = key.sign(&fcd_verify::certificate::pae(fcd_verify::certificate::PAYLOAD_TYPE, data));
    let envelope = fcd_verify::certificate::DsseEnvelope {
        payload_type: fcd_verify::certificate::PAYLOAD_TYPE.into(),
        payload: B64.encode(data),
        signatures: vec![fcd_verify::certificate::DsseSignature { keyid: fcd_verify::certificate::key_id(&verifying), sig: B64.encode(sig.to_bytes()) }],
    };
    let bytes = fcd_model::canon::to_canonical(&envelope);
    if let Ok(statement) = fcd_verify::certificate::verify(&bytes, &verifying, NOW) {
        let p = &statement.predicate;
        assert!(p.decision == "safe" && p.valid_from <= NOW && NOW <= p.valid_until && p.issuer == fcd_verify::certificate::key_id(&verifying));
    }
}

/// A runtime store with one registered epoch, for the token target.
pub struct Fence {
    pub runtime: fcd_runtime::runtime::Runtime,
}

pub const ARTIFACT: &str = "sha256:1111111111111111111111111111111111111111111111111111111111111111";
pub const CONFIG: &str = "sha256:2222222222222222222222222222222222222222222222222222222222222222";

impl Fence {
    pub fn new(db: &Path) -> Fence {
        let mut runtime = fcd_runtime::runtime::Runtime::open(db).expect("the runtime store opens");
        runtime.register_epoch("e0", "tool", ARTIFACT, CONFIG, "sha256:summary").expect("epoch");
        Fence { runtime }
    }
}

/// Token target: the input's lines are the token, the artifact and
/// configuration digests about to run, and the generation (as the CLI parses
/// it). `$T` in the token line is replaced by a genuine token of a newly
/// admitted lease, `$A` and `$C` by the registered digests, so mutations reach
/// the checks behind the MAC. An accepted token must be genuine and accepted
/// once only.
pub fn token(fence: &Mutex<Fence>, data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.split('\n');
    let token_line = lines.next().unwrap_or_default();
    let artifact = lines.next().unwrap_or(ARTIFACT).replace("$A", ARTIFACT);
    let config = lines.next().unwrap_or(CONFIG).replace("$C", CONFIG);
    let generation: i64 = lines.next().and_then(|g| g.trim().parse().ok()).unwrap_or(1);
    let mut f = fence.lock().unwrap_or_else(|e| e.into_inner());
    let mut genuine = None;
    let token = if token_line.contains("$T") {
        // A formed call is admitted at most once: each genuine token is of a call formed for it.
        let formation = f.runtime.form("snap", "tool", "args", "user:alice", "e0", None, 1_000, u64::MAX / 4).expect("formation");
        let lease = f.runtime.admit(formation, 2_000).expect("the formation admits");
        let t = token_line.replace("$T", &lease.token);
        genuine = Some(lease.token);
        t
    } else {
        token_line.to_owned()
    };
    if let Ok(id) = f.runtime.fence(&token, &artifact, &config, generation, 2_000) {
        assert_eq!(Some(&token), genuine.as_ref(), "the fence accepted lease {id} for a token it never issued");
        assert!(artifact == ARTIFACT && config == CONFIG && generation == 1, "the fence accepted a mismatch");
        assert!(f.runtime.fence(&token, &artifact, &config, generation, 2_000).is_err(), "a replayed token passed the fence");
    }
}

/// The gateway's client framing on arbitrary lines (`fcd_gateway::framing`):
/// every line is forwarded only when it is JSON within the limit, and
/// otherwise answered with a one-line JSON-RPC error (-32700 or -32600); a
/// request id is forwarded again only after a response for it was sent.
pub fn gateway_framing(data: &[u8]) {
    use fcd_gateway::framing::{Framing, INVALID_REQUEST, PARSE_ERROR, Verdict};
    const MAX: usize = 512;
    let mut framing = Framing::default();
    for (i, line) in data.split(|b| *b == b'\n').enumerate() {
        // Every fourth line is one the gateway sent back (a response ends a request's time in flight).
        if i % 4 == 3 {
            framing.sent(line);
            continue;
        }
        let oversized = line.len() > MAX;
        match framing.judge(if oversized { &[] } else { line }, oversized, MAX) {
            Verdict::Forward => {
                assert!(!oversized, "an oversized line was forwarded");
                assert!(serde_json::from_slice::<serde_json::Value>(line.strip_suffix(b"\r").unwrap_or(line)).is_ok(), "forwarded a line that is not JSON");
            }
            Verdict::Reply(reply) => {
                let code = reply["error"]["code"].as_i64();
                assert!(code == Some(PARSE_ERROR) || code == Some(INVALID_REQUEST), "{reply}");
                assert_eq!(reply["jsonrpc"], "2.0");
                assert!(!reply.to_string().contains('\n'), "a reply is one line");
            }
            Verdict::Skip => assert!(line.iter().all(u8::is_ascii_whitespace)),
        }
    }
}
