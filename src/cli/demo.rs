//! `fcd demo`: the whole path on the bundled, hand-written git-diff fixtures.
//!
//! The profile, its canonical calls and both fixture regimes are compiled into
//! the binary, so the demo runs anywhere. It registers each regime, has a
//! second process (this binary, `fcd regenerate`) rebuild each summary, then
//! decides every canonical call on each side, signs a certificate for each
//! safe one with a fresh key and verifies it.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::json;

use crate::cli::{Format, Io, Status, print, print_json, unix_now};
use fcd_compiler::profile::Profile;
use fcd_compiler::register::{Registration, Request, register};
use fcd_model::error::InputError;
use fcd_verify::canonical_calls::Canonical;
use fcd_verify::certificate::{self, Issue};
use fcd_verify::verdict::{check_call, decide};

const PROFILE: &str = include_str!("../../profiles/git-diff/profile.toml");
const CANONICAL: &str = include_str!("../../profiles/git-diff/canonical.json");
const REGIMES: [(&str, &str); 2] = [
    ("unguarded", include_str!("../../fixtures/git-diff/unguarded/mcp_server_git/server.py")),
    ("guarded", include_str!("../../fixtures/git-diff/guarded/mcp_server_git/server.py")),
];

fn write(path: &Path, text: &str) -> Result<(), InputError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| InputError::new(dir, format!("cannot create: {e}")))?;
    }
    std::fs::write(path, text).map_err(|e| InputError::new(path, format!("cannot write: {e}")))
}

pub fn run(format: Format, io: &mut Io<'_>) -> Result<Status, InputError> {
    let work = tempfile::tempdir().map_err(|e| InputError::new("<tmp>", format!("cannot create a work directory: {e}")))?;
    let root = work.path();
    // The directory names the profile (`profiles/<id>`).
    let profile_dir = root.join("git-diff");
    write(&profile_dir.join("profile.toml"), PROFILE)?;
    write(&profile_dir.join("canonical.json"), CANONICAL)?;
    let profile = Profile::load(&profile_dir)?;
    let canonical = Canonical::load(&profile_dir.join("canonical.json"))?;
    let key_path = root.join("demo-key");
    certificate::keygen(&key_path)?;
    let key = certificate::load_signing_key(&key_path)?;
    let verifying = key.verifying_key();
    let now = unix_now(None);

    let mut text = String::new();
    let mut rows = Vec::new();
    let mut all_expected = true;
    let _ = writeln!(text, "fcd demo: tool `{}`, profile {} v{}", canonical.tool, profile.id, profile.version);
    let _ = writeln!(
        text,
        "contract: principal {}, allow {:?}, mutation {}\n",
        canonical.contract.principal, canonical.contract.allow, canonical.contract.mutation
    );
    for (regime, source) in REGIMES {
        let src = root.join(regime);
        write(&src.join("mcp_server_git/server.py"), source)?;
        let request = Request { source: src.clone(), release: Some(format!("fixture-{regime}")), ..Request::default() };
        let summary = match register(&profile, &request)? {
            Registration::Registered(s) => s,
            Registration::Escalated(e) => return Err(InputError::new(&src, format!("bundled fixture escalated: {e}"))),
        };
        let summary_path = root.join(format!("{regime}.summary.json"));
        std::fs::write(&summary_path, summary.to_canonical()).map_err(|e| InputError::new(&summary_path, e.to_string()))?;
        let regenerated = regenerate_elsewhere(&summary_path, &src, &profile_dir);
        all_expected &= regenerated.is_ok();
        let _ = writeln!(text, "release fixture-{regime}: {} rules, summary {}", summary.rules.len(), summary.summary_digest);
        let _ = writeln!(
            text,
            "  second process: {}",
            match &regenerated {
                Ok(line) => line.clone(),
                Err(e) => format!("FAILED: {e}"),
            }
        );
        for (name, c) in &canonical.calls {
            let Some(input) = canonical.input(name) else { continue };
            let call = check_call(&summary, &input)?;
            let d = decide(&call, &canonical.env, &canonical.contract);
            let certificate = d.certifiable().map(|safe| {
                let issue = Issue { call, env: &canonical.env, contract: &canonical.contract, decision: safe, now, valid_for: 300, source: None };
                certificate::issue(&issue, &key)
            });
            let verified = certificate.as_ref().map(|env| certificate::verify(&fcd_model::canon::to_canonical(env), &verifying, now).is_ok());
            let expected = c.expect.get(regime).copied();
            let matches = expected == Some(d.decision) && verified != Some(false);
            all_expected &= matches;
            let args = serde_json::to_string(&c.arguments).unwrap_or_default();
            let _ = writeln!(
                text,
                "  call {name} {args:<52} {:<8}{}{}",
                d.decision.as_str(),
                match verified {
                    Some(true) => "certificate signed and verified",
                    Some(false) => "certificate FAILED verification",
                    None => d.reason.as_deref().unwrap_or(if d.violations.is_empty() { "" } else { "effect outside the contract" }),
                },
                if matches { "" } else { "   <- differs from the canonical expectation" }
            );
            rows.push(json!({
                "regime": regime, "call": name, "decision": d.decision, "expected": expected,
                "reason": d.reason, "violations": d.violations, "certificate_verified": verified,
            }));
        }
        text.push('\n');
    }
    let _ = writeln!(
        text,
        "{}",
        if all_expected {
            "every decision matches the canonical expectations (profiles/git-diff/canonical.json)"
        } else {
            "SOME DECISIONS DIFFER from the canonical expectations"
        }
    );
    match format {
        Format::Json => print_json(io, &json!({"decisions": rows, "all_expected": all_expected}))?,
        Format::Text => print(io, &text)?,
    }
    Ok(if all_expected { Status::Success } else { Status::Refused })
}

/// Runs `fcd regenerate` in a separate process of this same binary.
fn regenerate_elsewhere(summary: &Path, source: &Path, profile: &Path) -> Result<String, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = std::process::Command::new(exe)
        .arg("regenerate")
        .arg("--summary")
        .arg(summary)
        .arg("--source")
        .arg(source)
        .arg("--profile")
        .arg(profile)
        .output()
        .map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if out.status.success() { Ok(stdout) } else { Err(format!("{stdout} {}", String::from_utf8_lossy(&out.stderr).trim())) }
}
