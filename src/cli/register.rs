//! `fcd register` and `fcd regenerate`.

use std::fmt::Write as _;
use std::path::PathBuf;

use serde_json::{Value, json};

use super::{Format, Io, Status, print, print_json, write_atomic};
use fcd_compiler::profile::Profile;
use fcd_compiler::register::{Registration, Request, escalation_json, read_config, register as run_register, registration_json};
use fcd_model::error::InputError;
use fcd_model::summary::Summary;

/// Compiles a profile against one release's source into a summary, or escalates.
#[derive(Debug, clap::Args)]
pub struct RegisterArgs {
    /// Profile directory or its profile.toml.
    #[arg(long)]
    profile: PathBuf,
    /// Release root: unpacked sdist or npm package, or the repository at a tag.
    #[arg(long)]
    source: PathBuf,
    /// Release id (default: the source directory's name).
    #[arg(long)]
    release: Option<String>,
    /// Digest of the official artifact, sha256:HEX.
    #[arg(long)]
    artifact_digest: Option<String>,
    /// Registered configuration, a JSON object.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Where to write the summary (canonical JSON). Nothing is written on escalation.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Output: text for people, or one JSON document.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

/// Rebuilds a summary from its inputs in this (separate) process and compares every digest.
#[derive(Debug, clap::Args)]
pub struct RegenerateArgs {
    /// The summary to check.
    #[arg(long)]
    summary: PathBuf,
    /// Release root to regenerate from: the same tree the summary was registered from.
    #[arg(long)]
    source: PathBuf,
    /// Profile directory or its profile.toml.
    #[arg(long)]
    profile: PathBuf,
    /// Registered configuration, a JSON object (must be the one registered).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Output: text for people, or one JSON document.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn register(a: RegisterArgs, io: &mut Io<'_>) -> Result<Status, InputError> {
    let profile = Profile::load(&a.profile)?;
    let config = a.config.as_deref().map(read_config).transpose()?;
    let request = Request { source: a.source, release: a.release, artifact_digest: a.artifact_digest, config };
    let outcome = run_register(&profile, &request)?;
    if let (Registration::Registered(summary), Some(out)) = (&outcome, &a.out) {
        write_atomic(out, &summary.to_canonical())?;
    }
    match a.format {
        Format::Json => print_json(io, &registration_json(&outcome))?,
        Format::Text => print(io, &registration_text(&outcome))?,
    }
    Ok(match outcome {
        Registration::Registered(_) => Status::Success,
        Registration::Escalated(_) => Status::Escalated,
    })
}

fn registration_text(r: &Registration) -> String {
    let mut t = String::new();
    match r {
        Registration::Registered(s) => {
            let _ = writeln!(t, "registered {} on release {}", s.profile.id, s.release);
            let _ = writeln!(t, "  summary {}", s.summary_digest);
            for f in &s.facts {
                let _ = writeln!(t, "  fact    {} ({}) at {}:{}", f.name, f.kind, f.anchor.file, f.anchor.line);
            }
            for (i, rule) in s.rules.iter().enumerate() {
                let _ = writeln!(t, "  {}  when {} -> {}", rule.named(i), rule.when, rule.then);
            }
        }
        Registration::Escalated(e) => {
            let _ = writeln!(t, "escalated: {}", e.code);
            let _ = writeln!(t, "  {}", e.detail);
            if let Some(a) = &e.anchor {
                let _ = writeln!(t, "  at {}:{}", a.file, a.line);
            }
        }
    }
    t
}

pub fn regenerate(a: RegenerateArgs, io: &mut Io<'_>) -> Result<Status, InputError> {
    let stored = Summary::load(&a.summary)?;
    let profile = Profile::load(&a.profile)?;
    let config = a.config.as_deref().map(read_config).transpose()?;
    let request = Request { source: a.source, release: Some(stored.release.clone()), artifact_digest: stored.artifact_digest.clone(), config };
    let fresh = match run_register(&profile, &request)? {
        Registration::Registered(s) => s,
        Registration::Escalated(e) => {
            match a.format {
                Format::Json => print_json(io, &json!({"status": "escalated", "reason": escalation_json(&e)}))?,
                Format::Text => print(io, &format!("regeneration escalated: {e}\n"))?,
            }
            return Ok(Status::Escalated);
        }
    };
    let differing: Vec<Value> = stored
        .digests()
        .into_iter()
        .zip(fresh.digests())
        .filter(|(s, f)| s.1 != f.1)
        .map(|((name, s), (_, f))| json!({"digest": name, "stored": s, "regenerated": f}))
        .collect();
    let same_bytes = stored.to_canonical() == fresh.to_canonical();
    let ok = differing.is_empty() && same_bytes;
    match a.format {
        Format::Json => print_json(
            io,
            &json!({
                "status": if ok { "match" } else { "mismatch" },
                "summary_digest": fresh.summary_digest,
                "process": std::process::id(),
                "differing": differing,
            }),
        )?,
        Format::Text => {
            let mut t = String::new();
            if ok {
                let _ = writeln!(t, "regenerated in process {}: every digest matches ({})", std::process::id(), fresh.summary_digest);
            } else {
                let _ = writeln!(t, "regenerated summary differs:");
                for d in &differing {
                    let _ = writeln!(t, "  {} digest: stored {} regenerated {}", d["digest"].as_str().unwrap_or(""), d["stored"], d["regenerated"]);
                }
            }
            print(io, &t)?;
        }
    }
    Ok(if ok { Status::Success } else { Status::Refused })
}
