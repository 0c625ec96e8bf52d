//! `cargo xtask fuzz-seeds`: the seed corpora of the fuzz targets (`fuzz/`),
//! written to `fuzz/corpus/<target>/` from the repository's own data — every
//! fixture source and every declared mutation of it, every profile, every
//! canonical-calls file and its call, environment and contract, a summary of
//! every regime fixture registered here, certificates signed here for the safe
//! canonical calls, and lease tokens admitted by a real runtime store.
//!
//! Seeds are added beside what a corpus already holds (libFuzzer adds its own
//! finds there); a seed with the same name is rewritten.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use base64::Engine;
use fcd_compiler::profile::Profile;
use fcd_compiler::register::{Registration, Request, register};
use fcd_verify::canonical_calls::Canonical;
use fcd_verify::verdict::{check_call, decide};

/// The fuzz targets' certificate key (`fcd_fuzz::CERT_KEY_SEED`, fuzz/src/lib.rs):
/// a test key, so the `cert` target can verify the seed certificates.
const CERT_KEY_SEED: [u8; 32] = [0x5e; 32];
/// The time the `cert` target verifies at (`fcd_fuzz::NOW`).
const NOW: u64 = 1_800_000_000;

/// (target, profile, source extension) of each frontend target.
const FRONTENDS: &[(&str, &str, &str)] = &[
    ("frontend_python", "git-diff", ".py"),
    ("frontend_go", "github-create-repository", ".go"),
    ("frontend_csharp", "azure-redis-create", ".cs"),
    ("frontend_javascript", "dbhub-execute-sql", ".js"),
    ("frontend_typescript", "dbhub-execute-sql", ".ts"),
];

struct Corpus {
    dir: PathBuf,
    written: BTreeMap<&'static str, usize>,
}

impl Corpus {
    fn add(&mut self, target: &'static str, name: &str, bytes: &[u8]) -> Result<()> {
        let dir = self.dir.join(target);
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let name: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '.' { c } else { '_' }).collect();
        std::fs::write(dir.join(format!("seed-{name}")), bytes).with_context(|| format!("writing a seed of {target}"))?;
        *self.written.entry(target).or_default() += 1;
        Ok(())
    }
}

/// Every regular file under `root` whose name ends with `ext`, with its path relative to `root`.
fn files(root: &Path, ext: &str) -> Result<Vec<(String, Vec<u8>)>> {
    let mut out = Vec::new();
    for entry in walkdir_files(root)? {
        if entry.to_string_lossy().ends_with(ext) {
            let relative = entry.strip_prefix(root).unwrap_or(&entry).to_string_lossy().into_owned();
            out.push((relative, std::fs::read(&entry).with_context(|| format!("reading {}", entry.display()))?));
        }
    }
    Ok(out)
}

fn walkdir_files(root: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).with_context(|| format!("listing {}", dir.display()))? {
            let entry = entry?;
            let kind = entry.file_type()?;
            if kind.is_dir() {
                stack.push(entry.path());
            } else if kind.is_file() {
                out.push(entry.path());
            }
        }
    }
    out.sort();
    Ok(out)
}

pub fn run(root: &Path) -> Result<bool> {
    let mut corpus = Corpus { dir: root.join("fuzz/corpus"), written: BTreeMap::new() };
    let profiles = root.join("profiles");

    // Frontends: every fixture source and every declared mutation of the profile's language.
    for &(target, profile_id, ext) in FRONTENDS {
        for (path, bytes) in files(&root.join("fixtures").join(profile_id), ext)? {
            corpus.add(target, &format!("fixture-{path}"), &bytes)?;
        }
        let cases = fcd::profile_test::load_cases(&profiles.join(profile_id)).map_err(|e| anyhow!("{e}"))?;
        for case in cases {
            let case_root = case.root().map_err(|e| anyhow!("{e}"))?;
            for (path, bytes) in files(&case_root.path, ext)? {
                corpus.add(target, &format!("case-{}-{path}", case.name), &bytes)?;
            }
        }
    }

    let key = ed25519_dalek::SigningKey::from_bytes(&CERT_KEY_SEED);
    let mut ids: Vec<String> = std::fs::read_dir(&profiles)?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("profile.toml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    ids.sort();
    for id in &ids {
        let dir = profiles.join(id);
        corpus.add("profile", id, &std::fs::read(dir.join("profile.toml"))?)?;

        let canonical_path = dir.join("canonical.json");
        let canonical_bytes = std::fs::read(&canonical_path)?;
        corpus.add("certify", &format!("{id}-canonical"), &canonical_bytes)?;
        let canonical = Canonical::load(&canonical_path).map_err(|e| anyhow!("{e}"))?;
        corpus.add("certify", &format!("{id}-env"), serde_json::to_string_pretty(&canonical.env)?.as_bytes())?;
        corpus.add("certify", &format!("{id}-contract"), serde_json::to_string_pretty(&canonical.contract)?.as_bytes())?;
        for name in canonical.calls.keys() {
            let call = canonical.call(name).ok_or_else(|| anyhow!("no call {name}"))?;
            corpus.add("certify", &format!("{id}-call-{name}"), serde_json::to_string_pretty(&call)?.as_bytes())?;
        }

        // A summary of every fixture the profile's cases register, and certificates of its safe calls.
        let profile = Profile::load(&dir).map_err(|e| anyhow!("{e}"))?;
        let config = canonical.env.config.as_object().cloned();
        for fixture in walkdir_dirs(&root.join("fixtures").join(id))? {
            let name = fixture.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let request = Request { source: fixture.clone(), release: Some(format!("fixture-{name}")), config: config.clone(), ..Request::default() };
            let Registration::Registered(summary) = register(&profile, &request).map_err(|e| anyhow!("{e}"))? else { continue };
            corpus.add("summary", &format!("{id}-{name}"), &summary.to_canonical())?;
            for call_name in canonical.calls.keys() {
                let call = canonical.call(call_name).ok_or_else(|| anyhow!("no call {call_name}"))?;
                let input = fcd_verify::verdict::CallInput::new(call, &canonical_path);
                let Ok(call) = check_call(&summary, &input) else { continue };
                let decision = decide(&call, &canonical.env, &canonical.contract);
                let Some(safe) = decision.certifiable() else { continue };
                let issue = fcd_verify::certificate::Issue {
                    call,
                    env: &canonical.env,
                    contract: &canonical.contract,
                    decision: safe,
                    now: NOW - 60,
                    valid_for: 3_600,
                    source: None,
                };
                let envelope = fcd_verify::certificate::issue(&issue, &key);
                let mut bytes = fcd_model::canon::to_canonical(&envelope);
                bytes.push(b'\n');
                fcd_verify::certificate::verify(&bytes, &key.verifying_key(), NOW).map_err(|e| anyhow!("the seed certificate does not verify: {e}"))?;
                corpus.add("cert", &format!("{id}-{name}-{call_name}-envelope"), &bytes)?;
                let payload = base64::engine::general_purpose::STANDARD.decode(&envelope.payload)?;
                corpus.add("cert", &format!("{id}-{name}-{call_name}-statement"), &payload)?;
            }
        }
    }

    // Lease tokens from a real runtime store, and the templates the token target fills.
    let store = tempfile::tempdir()?;
    let mut rt = fcd_runtime::runtime::Runtime::open(&store.path().join("runtime.sqlite")).map_err(|e| anyhow!("{e}"))?;
    let (artifact, config) =
        ("sha256:1111111111111111111111111111111111111111111111111111111111111111", "sha256:2222222222222222222222222222222222222222222222222222222222222222");
    rt.register_epoch("e0", "tool", artifact, config, "sha256:summary").map_err(|e| anyhow!("{e}"))?;
    for i in 0..3 {
        // A formed call is admitted at most once: one formation per token.
        let formation = rt.form("snap", "tool", "args", "user:alice", "e0", None, 1_000, 1_000_000).map_err(|e| anyhow!("{e}"))?;
        let lease = rt.admit(formation, 2_000).map_err(|e| anyhow!("{e}"))?;
        corpus.add("token", &format!("real-{i}"), format!("{}\n{artifact}\n{config}\n{}", lease.token, lease.generation).as_bytes())?;
    }
    for (name, text) in [
        ("genuine", "$T\n$A\n$C\n1"),
        ("genuine-token-only", "$T"),
        ("stale-generation", "$T\n$A\n$C\n2"),
        ("wrong-artifact", "$T\nsha256:0000\n$C\n1"),
        ("wrong-config", "$T\n$A\nsha256:0000\n1"),
        ("suffixed", "$T.0\n$A\n$C\n1"),
    ] {
        corpus.add("token", name, text.as_bytes())?;
    }

    // Client lines for the gateway's framing: a session as an SDK client writes it, and the inputs it must answer.
    let call = |id: &str| {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"git_diff","arguments":{{"repo_path":"/srv/repo","target":"main"}}}}}}"#)
    };
    for (name, lines) in [
        (
            "session",
            vec![
                r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#.to_owned(),
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
                call("1"),
            ],
        ),
        ("duplicate-id", vec![call("7"), call("7"), String::new(), r#"{"jsonrpc":"2.0","id":7,"result":{}}"#.to_owned(), call("7")]),
        (
            "malformed",
            vec![
                r#"{"jsonrpc":"2.0","id":1,"method":"#.to_owned(),
                r#"{"id":2,"method":"x","params":1e400}"#.to_owned(),
                r#"{"id":3,"method":"x","params":"\ud800"}"#.to_owned(),
            ],
        ),
        ("nesting", vec!["[".repeat(200) + &"]".repeat(200)]),
        ("oversized", vec!["x".repeat(600), call("\"s\"")]),
        ("cancel", vec![call("9"), r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}"#.to_owned()]),
    ] {
        corpus.add("gateway_framing", name, lines.join("\n").as_bytes())?;
    }

    for (target, n) in &corpus.written {
        println!("{target:<22} {n:>4} seeds");
    }
    println!("written to {}", corpus.dir.display());
    Ok(true)
}

/// The immediate subdirectories of `dir` (each a fixture release root), sorted.
fn walkdir_dirs(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("listing {}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    out.sort();
    Ok(out)
}
