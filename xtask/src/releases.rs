//! `cargo xtask releases`: the release job. Every development release of every
//! profile goes through the pipeline exactly as a user would run it — the
//! built `fcd` binary, one process per step — and each outcome is compared
//! with what the profile's releases.toml and canonical.json expect.
//!
//! Each release is checked by [`fcd::release::job`], the code of `fcd
//! profile check-releases`; the job adds a freshly built binary, every
//! profile at once, the independent oracle (`--oracle`), releases named on
//! the command line, and JSON Lines and SARIF reports.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use fcd::release::job::{self, Fcd, Job, Outcome, Plan, Registration};
use fcd::release::manifest::{self, Release};

use crate::Format;

pub struct Options {
    pub profiles: Vec<String>,
    /// The directory holding the profiles (`profiles/` of the workspace, or `--profiles`).
    pub profiles_dir: PathBuf,
    /// Compare every automatic registration's decisions with the independent oracle's.
    pub oracle: bool,
    /// `OWNER/REPO` -> a local bare mirror, for [release.git] releases.
    pub git_mirrors: std::collections::BTreeMap<String, PathBuf>,
    pub cache: PathBuf,
    pub format: Format,
    /// The SQLite registry that admitted summaries and outcomes go to.
    pub registry: PathBuf,
    /// Releases whose escalation a person reviewed and accepts.
    pub accept: Vec<String>,
    /// Releases named on the command line, by profile.
    pub extra: Vec<(String, Release)>,
}

/// Runs the job; `Ok(false)` when some release differs from its expectation.
pub fn run(opts: &Options) -> Result<bool> {
    let start = Instant::now();
    let root = crate::workspace_root();
    // Every manifest is read and checked before anything is downloaded or built.
    let mut named: Vec<String> = opts.profiles.clone();
    named.extend(opts.extra.iter().map(|(p, _)| p.clone()).filter(|p| !opts.profiles.is_empty() && !opts.profiles.contains(p)));
    let mut plans = job::profile_dirs(&opts.profiles_dir, &named)?.into_iter().map(|dir| Plan::load(&dir)).collect::<Result<Vec<_>>>()?;
    for (profile, release) in &opts.extra {
        let Some(plan) = plans.iter_mut().find(|p| &p.name == profile) else {
            bail!("--release {profile}=…: no profile `{profile}` with a {}", manifest::FILE);
        };
        plan.releases.push(release.clone());
    }
    let fcd = build_fcd(root)?;
    let build_time = start.elapsed();
    std::fs::create_dir_all(&opts.cache).with_context(|| format!("{}: cannot create", opts.cache.display()))?;
    let registry = fcd_runtime::registry::Registry::open(&opts.registry).map_err(|e| anyhow::anyhow!("{e}"))?;
    let oracle = |plan: &Plan, root: &Path, decisions: &[job::CallDecision]| {
        let decisions: Vec<(String, String, String)> = decisions.iter().map(|d| (d.call.clone(), d.decision.clone(), d.why.clone())).collect();
        let report = crate::oracle_check::run(&plan.name, &plan.dir, root, &decisions)?;
        Ok((report.problems, report.summary))
    };
    let mut job = Job { fcd: &fcd, registry, accept: &opts.accept, oracle: opts.oracle.then_some(&oracle as &job::Oracle) };
    let total: usize = plans.iter().map(|p| p.releases.len()).sum();
    let progress = crate::progress::Progress::new(total as u64);
    let mut outcomes = Vec::new();
    for plan in &plans {
        for release in &plan.releases {
            progress.start(&format!("{}/{}", plan.name, release.id));
            let outcome = job::run_release(&mut job, plan, release, &opts.cache, &opts.git_mirrors)?;
            progress.done(&format!("{}/{}: {}", plan.name, release.id, if outcome.ok { "ok" } else { "DIFFERS" }));
            outcomes.push(outcome);
        }
    }
    progress.finish();
    let wall = start.elapsed();
    match opts.format {
        Format::Text => print!("{}", job::table(&outcomes, wall, build_time)),
        Format::Json => {
            for o in &outcomes {
                println!("{}", serde_json::to_string(o)?);
            }
            eprint!("{}", job::totals(&outcomes, wall, build_time));
        }
        Format::Sarif => {
            let sarif = crate::sarif::log(&outcomes.iter().map(sarif_view).collect::<Vec<_>>());
            println!("{}", serde_json::to_string_pretty(&sarif)?);
            eprint!("{}", job::totals(&outcomes, wall, build_time));
        }
    }
    Ok(outcomes.iter().all(|o| o.ok))
}

/// What the SARIF report needs of an outcome.
fn sarif_view(o: &Outcome) -> crate::sarif::ReleaseView {
    let escalation = match &o.registration {
        Some(Registration::Escalated { code, detail, file, line }) => Some((code.clone(), detail.clone(), file.clone(), *line)),
        _ => None,
    };
    crate::sarif::ReleaseView {
        profile: o.profile.clone(),
        release: o.release.clone(),
        root: o.root.clone(),
        summary_digest: o.summary_digest.clone(),
        profile_digest: o.profile_digest.clone(),
        artifact_digest: o.artifact_digest.clone(),
        escalation,
        problems: o.problems.clone(),
        skipped: o.skipped,
    }
}

/// Runs `cargo build --bin fcd` in the profile this xtask was built with,
/// so the job never judges a stale binary.
fn build_fcd(root: &Path) -> Result<Fcd> {
    let me = std::env::current_exe().context("cannot locate the xtask executable")?;
    let dir = me.parent().context("the xtask executable has no directory")?.to_owned();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root).args(["build", "--quiet", "--bin", "fcd"]);
    match dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") => {}
        Some("release") => {
            cmd.arg("--release");
        }
        Some(other) => {
            cmd.args(["--profile", other]);
        }
        None => bail!("{}: cannot tell which cargo profile built xtask", dir.display()),
    }
    let status = cmd.status().context("cannot run cargo to build fcd")?;
    if !status.success() {
        bail!("cargo build --bin fcd failed ({status})");
    }
    let exe = dir.join(format!("fcd{}", std::env::consts::EXE_SUFFIX));
    if !exe.is_file() {
        bail!("{}: fcd was built but is not next to xtask", exe.display());
    }
    Ok(Fcd { exe })
}
