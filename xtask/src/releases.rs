//! `cargo xtask releases`: the release job. Every development release of every
//! profile goes through the pipeline exactly as a user would run it — the
//! built `fcd` binary, one process per step — and each outcome is compared
//! with what the profile's releases.toml and canonical.json expect.
//!
//! Per release: fetch and verify the artifact ([`crate::fetch`]); register
//! it in this process, record the outcome, then `fcd regenerate` in a second
//! process (must report `match`) and admit it — the `fcd` library's
//! [`fcd::release::add`], the very code of `fcd release add`; `fcd certify`
//! for every canonical call, compared with `expect[regime]`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde::Serialize;
use serde_json::Value;

use fcd_verify::canonical_calls::{self, Canonical};

use crate::Format;
use crate::fetch;
use crate::manifest::{self, Expectation, Release};

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

/// What every release of a run shares.
struct Job<'a> {
    fcd: &'a Fcd,
    registry: fcd_runtime::registry::Registry,
    accept: &'a [String],
    oracle: bool,
}

/// What came of one release; one JSON Lines object.
#[derive(Debug, Serialize)]
struct Outcome {
    profile: String,
    release: String,
    /// `regime NAME` or `escalate CODE`.
    expect: String,
    artifact_digest: Option<String>,
    /// Registry digest, or commit and tree ids of a git tag.
    provenance: String,
    downloaded: bool,
    /// Not run: a git release whose repository has no --git-mirror.
    skipped: bool,
    /// With --oracle: what the independent oracle said, in one line.
    oracle: Option<String>,
    /// The registry epoch the summary was admitted as.
    epoch: Option<String>,
    /// Summary and profile digests, for the reports.
    summary_digest: Option<String>,
    profile_digest: Option<String>,
    root: String,
    registration: Option<Registration>,
    regeneration: Option<Regeneration>,
    decisions: Vec<CallDecision>,
    /// Every way the release differs from its expectation; empty when it matches.
    problems: Vec<String>,
    ok: bool,
    seconds: f64,
}

#[derive(Debug, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
enum Registration {
    Registered { summary_digest: String },
    Escalated { code: String, detail: String, file: Option<String>, line: Option<u64> },
}

#[derive(Debug, Serialize)]
struct Regeneration {
    status: String,
    pid: Option<u64>,
    /// The summary digest the second process produced.
    digest: Option<String>,
}

#[derive(Debug, Serialize)]
struct CallDecision {
    call: String,
    decision: String,
    /// The compiler's reason: the matched rule, its reason or the contract violations.
    why: String,
    expected: Option<String>,
}

/// Runs the job; `Ok(false)` when some release differs from its expectation.
pub fn run(opts: &Options) -> Result<bool> {
    let start = Instant::now();
    let root = crate::workspace_root();
    // Every manifest is read and checked before anything is downloaded or built.
    let mut named: Vec<String> = opts.profiles.clone();
    named.extend(opts.extra.iter().map(|(p, _)| p.clone()).filter(|p| !opts.profiles.is_empty() && !opts.profiles.contains(p)));
    let mut plans = profile_dirs(&opts.profiles_dir, &named)?.into_iter().map(|dir| Plan::load(&dir)).collect::<Result<Vec<_>>>()?;
    for (profile, release) in &opts.extra {
        let Some(plan) = plans.iter_mut().find(|p| &p.name == profile) else {
            bail!("--release {profile}=…: no profile `{profile}` with a {}", manifest::FILE);
        };
        plan.releases.push(release.clone());
    }
    let fcd = Fcd::build(root)?;
    let build_time = start.elapsed();
    std::fs::create_dir_all(&opts.cache).with_context(|| format!("{}: cannot create", opts.cache.display()))?;
    let registry = fcd_runtime::registry::Registry::open(&opts.registry).map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut job = Job { fcd: &fcd, registry, accept: &opts.accept, oracle: opts.oracle };
    let total: usize = plans.iter().map(|p| p.releases.len()).sum();
    let progress = crate::progress::Progress::new(total as u64);
    let mut outcomes = Vec::new();
    for plan in &plans {
        for release in &plan.releases {
            progress.start(&format!("{}/{}", plan.name, release.id));
            let outcome = run_release(&mut job, plan, release, &opts.cache, &opts.git_mirrors)?;
            progress.done(&format!("{}/{}: {}", plan.name, release.id, if outcome.ok { "ok" } else { "DIFFERS" }));
            outcomes.push(outcome);
        }
    }
    progress.finish();
    let wall = start.elapsed();
    match opts.format {
        Format::Text => print!("{}", table(&outcomes, wall, build_time)),
        Format::Json => {
            for o in &outcomes {
                println!("{}", serde_json::to_string(o)?);
            }
            eprint!("{}", totals(&outcomes, wall, build_time));
        }
        Format::Sarif => {
            let sarif = crate::sarif::log(&outcomes.iter().map(Outcome::sarif_view).collect::<Vec<_>>());
            println!("{}", serde_json::to_string_pretty(&sarif)?);
            eprint!("{}", totals(&outcomes, wall, build_time));
        }
    }
    Ok(outcomes.iter().all(|o| o.ok))
}

impl Outcome {
    /// What the SARIF report needs of an outcome.
    fn sarif_view(&self) -> crate::sarif::ReleaseView {
        let escalation = match &self.registration {
            Some(Registration::Escalated { code, detail, file, line }) => Some((code.clone(), detail.clone(), file.clone(), *line)),
            _ => None,
        };
        crate::sarif::ReleaseView {
            profile: self.profile.clone(),
            release: self.release.clone(),
            root: self.root.clone(),
            summary_digest: self.summary_digest.clone(),
            profile_digest: self.profile_digest.clone(),
            artifact_digest: self.artifact_digest.clone(),
            escalation,
            problems: self.problems.clone(),
            skipped: self.skipped,
        }
    }
}

/// The profile directories under `profiles` to run: the named ones, or every one with a releases.toml.
pub(crate) fn profile_dirs(profiles: &Path, names: &[String]) -> Result<Vec<PathBuf>> {
    if !names.is_empty() {
        return names
            .iter()
            .map(|n| {
                let dir = profiles.join(n);
                if dir.join(manifest::FILE).is_file() {
                    Ok(dir)
                } else {
                    bail!("{}: no such file; profile `{n}` lists no releases", dir.join(manifest::FILE).display())
                }
            })
            .collect();
    }
    let mut dirs = Vec::new();
    for entry in std::fs::read_dir(profiles).with_context(|| format!("{}: cannot list", profiles.display()))? {
        let dir = entry.with_context(|| format!("{}: cannot list", profiles.display()))?.path();
        if dir.join(manifest::FILE).is_file() {
            dirs.push(dir);
        }
    }
    dirs.sort();
    if dirs.is_empty() {
        bail!("{}: no profile has a {}", profiles.display(), manifest::FILE);
    }
    Ok(dirs)
}

/// One profile's releases and canonical calls, validated.
struct Plan {
    dir: PathBuf,
    name: String,
    canonical: Canonical,
    releases: Vec<Release>,
}

impl Plan {
    fn load(dir: &Path) -> Result<Plan> {
        let canonical = Canonical::load(&dir.join(canonical_calls::FILE))?;
        let path = dir.join(manifest::FILE);
        let releases = manifest::load(&path, &canonical.regimes)?;
        for release in &releases {
            fetch::check_supported(release).with_context(|| path.display().to_string())?;
        }
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        Ok(Plan { dir: dir.to_owned(), name, canonical, releases })
    }
}

fn run_release(job: &mut Job<'_>, plan: &Plan, release: &Release, cache: &Path, mirrors: &std::collections::BTreeMap<String, PathBuf>) -> Result<Outcome> {
    let start = Instant::now();
    let Some(art) = fetch::materialize(release, cache, mirrors)? else {
        return Ok(Outcome {
            profile: plan.name.clone(),
            release: release.id.clone(),
            expect: release.expect.to_string(),
            artifact_digest: None,
            provenance: format!("not run: {} (give --git-mirror)", release.source.describe()),
            downloaded: false,
            skipped: true,
            oracle: None,
            epoch: None,
            summary_digest: None,
            profile_digest: None,
            root: String::new(),
            registration: None,
            regeneration: None,
            decisions: Vec::new(),
            problems: Vec::new(),
            ok: true,
            seconds: 0.0,
        });
    };
    let mut o = Outcome {
        profile: plan.name.clone(),
        release: release.id.clone(),
        expect: release.expect.to_string(),
        artifact_digest: art.artifact_digest.clone(),
        provenance: art.provenance.clone(),
        downloaded: art.downloaded,
        skipped: false,
        oracle: None,
        epoch: None,
        summary_digest: None,
        profile_digest: None,
        root: art.root.display().to_string(),
        registration: None,
        regeneration: None,
        decisions: Vec::new(),
        problems: Vec::new(),
        ok: false,
        seconds: 0.0,
    };
    // (The previous summary is removed by the registration.)
    let summary = cache.join(format!("{}.summary.json", release.id));
    check_release(job, plan, release, &art, &summary, &mut o)?;
    if job.oracle && matches!(o.registration, Some(Registration::Registered { .. })) {
        let decisions: Vec<(String, String, String)> = o.decisions.iter().map(|d| (d.call.clone(), d.decision.clone(), d.why.clone())).collect();
        let report = crate::oracle_check::run(&plan.name, &plan.dir, &art.root, &decisions)?;
        o.problems.extend(report.problems);
        o.oracle = Some(report.summary);
    }
    o.ok = o.problems.is_empty();
    o.seconds = start.elapsed().as_secs_f64();
    Ok(o)
}

/// Register, regenerate, admit, certify; every difference from the expectation goes into `o.problems`.
fn check_release(job: &mut Job<'_>, plan: &Plan, release: &Release, art: &fetch::Materialized, summary: &Path, o: &mut Outcome) -> Result<()> {
    let (fcd, dir, canonical) = (job.fcd, plan.dir.as_path(), &plan.canonical);
    let target = match target(dir, &plan.name, release, art, summary) {
        Ok(t) => t,
        Err(e) => {
            o.problems.push(format!("{e:#}"));
            return Ok(());
        }
    };
    // What the job saw last time, and what a person accepted, before this run's outcome is recorded.
    let previous = job.registry.previous_outcome(&plan.name, &release.id).map_err(|e| anyhow::anyhow!("{e}"))?;
    let accepted = job.registry.accepted_escalation(&plan.name, &release.id).map_err(|e| anyhow::anyhow!("{e}"))?;
    // Registration in this process, its outcome recorded (`fcd release add` does the same).
    let registration = match fcd::release::add::register(&job.registry, &target) {
        Ok(r) => Registration::from(&r),
        Err(fcd::release::add::AddError::Input(e)) => {
            o.problems.push(e.to_string());
            return Ok(());
        }
        Err(fcd::release::add::AddError::Registry(e)) => bail!("{e}"),
    };
    let registered = matches!(registration, Registration::Registered { .. });
    if let Registration::Escalated { code, .. } = &registration
        && job.accept.contains(&release.id)
    {
        job.registry.accept_escalation(&plan.name, &release.id, code).map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    let accepted_now = job.accept.contains(&release.id);
    o.problems.extend(review(&release.expect, &registration, previous.as_ref(), accepted.as_deref(), accepted_now));
    o.registration = Some(registration);
    let (regime, decisions) = match &release.expect {
        Expectation::Regime(r) => (Some(r.as_str()), None),
        Expectation::Decisions(d) => (None, Some(d)),
        Expectation::Unreviewed => (None, None),
        Expectation::Escalate(_) => return Ok(()),
    };
    if let Some(d) = decisions
        && let Some(extra) = d.keys().find(|c| !canonical.calls.contains_key(*c))
    {
        o.problems.push(format!("releases.toml expects a decision for call {extra}, which canonical.json does not have"));
    }
    if !registered {
        return Ok(());
    }
    // The second process, then admission of only a summary it reproduced, in one transaction.
    let admission = fcd::release::add::regenerate_and_admit(&mut job.registry, &fcd.exe, &target);
    match admission.regeneration {
        Ok(second) => {
            o.problems.extend(second.problem());
            if let Some(epoch) = admission.epoch {
                match epoch {
                    Ok(epoch) => o.epoch = Some(epoch),
                    Err(e) => o.problems.push(format!("registry: {e}")),
                }
                let stored = fcd_model::summary::Summary::load(summary).map_err(|e| anyhow::anyhow!("{e}"))?;
                o.summary_digest = Some(stored.summary_digest.clone());
                o.profile_digest = Some(stored.profile.digest.clone());
            }
            o.regeneration = Some(Regeneration { status: second.status, pid: second.pid, digest: second.summary_digest });
        }
        Err(e) => o.problems.push(e.to_string()),
    }
    let work = tempfile::tempdir().context("cannot create a directory for the canonical calls")?;
    for (name, call) in &canonical.calls {
        let expected = match decisions {
            Some(d) => d.get(name).cloned(),
            None => regime.and_then(|r| call.expect.get(r)).map(|v| v.as_str().to_owned()),
        };
        match certify(fcd, canonical, name, summary, work.path()) {
            Ok((decision, why)) => {
                if let Some(regime) = regime
                    && expected.as_deref() != Some(decision.as_str())
                {
                    o.problems.push(format!(
                        "call {name}: decision {decision}, canonical.json expects {} for regime {regime}",
                        expected.as_deref().unwrap_or("nothing")
                    ));
                }
                if decisions.is_some() && expected.as_deref() != Some(decision.as_str()) {
                    o.problems.push(format!("call {name}: decision {decision}, releases.toml expects {}", expected.as_deref().unwrap_or("nothing")));
                }
                o.decisions.push(CallDecision { call: name.clone(), decision, why, expected });
            }
            Err(e) => o.problems.push(format!("call {name}: {e:#}")),
        }
    }
    Ok(())
}

/// Every way a registration outcome fails the job: an unexpected or wrong
/// escalation, an expected escalation that was accepted instead, or a release
/// that registered automatically before and escalates now; an escalation a
/// person accepted (now or before, with the same code) fails nothing.
fn review(
    expect: &Expectation,
    got: &Registration,
    previous: Option<&fcd_runtime::registry::ReleaseStatus>,
    accepted: Option<&str>,
    accepted_now: bool,
) -> Vec<String> {
    if let Registration::Escalated { code, .. } = got
        && (accepted_now || accepted == Some(code.as_str()))
    {
        return Vec::new();
    }
    let mut problems: Vec<String> = escalation_problems(expect, got).into_iter().collect();
    let was_automatic = previous.is_some_and(|p| p.status == "automatic");
    if was_automatic && matches!(got, Registration::Escalated { .. }) && !matches!(expect, Expectation::Escalate(_)) {
        problems.push("this release registered automatically before and escalates now".into());
    }
    problems
}

fn escalation_problems(expect: &Expectation, got: &Registration) -> Option<String> {
    match (expect, got) {
        (Expectation::Regime(_) | Expectation::Decisions(_), Registration::Registered { .. }) => None,
        (Expectation::Decisions(d), Registration::Escalated { code, detail, .. }) => Some(format!(
            "unexpected escalation {code} (expected to register with {}): {detail}",
            d.iter().map(|(c, v)| format!("{c}={v}")).collect::<Vec<_>>().join(", ")
        )),
        (Expectation::Regime(r), Registration::Escalated { code, detail, .. }) => {
            Some(format!("unexpected escalation {code} (expected to register as regime {r}): {detail}"))
        }
        (Expectation::Escalate(want), Registration::Registered { .. }) => {
            Some(format!("expected escalation {want}, but the release was registered (accepted)"))
        }
        (Expectation::Escalate(want), Registration::Escalated { code, .. }) if want.as_str() != code => {
            Some(format!("escalated with {code}, releases.toml expects {want}"))
        }
        (Expectation::Escalate(_), Registration::Escalated { .. }) => None,
        // Nobody said what a release named on the command line should give: its
        // escalation is reported for review, not counted against the job.
        (Expectation::Unreviewed, _) => None,
    }
}

/// What the registration binds: the release tree, its artifact digest, and
/// the canonical environment's configuration (the canonical calls are
/// decided under it), written beside the summary for both processes to read.
fn target(dir: &Path, profile_name: &str, release: &Release, art: &fetch::Materialized, summary: &Path) -> Result<fcd::release::add::Target> {
    let config = summary.with_extension("config.json");
    let canonical: Value = serde_json::from_str(&std::fs::read_to_string(dir.join(canonical_calls::FILE))?)?;
    std::fs::write(&config, canonical["env"]["config"].to_string()).with_context(|| format!("{}: cannot write", config.display()))?;
    Ok(fcd::release::add::Target {
        profile: dir.to_owned(),
        profile_name: profile_name.to_owned(),
        release: release.id.clone(),
        root: art.root.clone(),
        artifact_digest: art.artifact_digest.clone(),
        config: Some(config),
        summary: summary.to_owned(),
    })
}

impl From<&fcd_compiler::register::Registration> for Registration {
    fn from(r: &fcd_compiler::register::Registration) -> Registration {
        match r {
            fcd_compiler::register::Registration::Registered(s) => Registration::Registered { summary_digest: s.summary_digest.clone() },
            fcd_compiler::register::Registration::Escalated(e) => Registration::Escalated {
                code: e.code.as_str().to_owned(),
                detail: e.detail.clone(),
                file: e.anchor.as_ref().map(|a| a.file.clone()),
                line: e.anchor.as_ref().map(|a| a.line as u64),
            },
        }
    }
}

/// Writes the canonical call, env and contract as files and runs `fcd certify`;
/// returns the decision and the compiler's reason for it.
fn certify(fcd: &Fcd, canonical: &Canonical, name: &str, summary: &Path, work: &Path) -> Result<(String, String)> {
    let call = canonical.call(name).with_context(|| format!("canonical.json has no call {name}"))?;
    let files = [
        (work.join(format!("{name}.call.json")), serde_json::to_vec_pretty(&call)?),
        (work.join("env.json"), serde_json::to_vec_pretty(&canonical.env)?),
        (work.join("contract.json"), serde_json::to_vec_pretty(&canonical.contract)?),
    ];
    for (path, bytes) in &files {
        std::fs::write(path, bytes).with_context(|| format!("{}: cannot write", path.display()))?;
    }
    let mut cmd = fcd.command("certify");
    cmd.arg("--summary").arg(summary);
    cmd.arg("--call").arg(&files[0].0).arg("--env").arg(&files[1].0).arg("--contract").arg(&files[2].0);
    cmd.args(["--format", "json"]);
    let run = fcd.run(cmd, &[0, 1])?;
    let v = &run.json;
    let mut why = match v["matched_rule"].as_u64() {
        Some(i) => format!("rule {i}"),
        None => "no rule".to_owned(),
    };
    if let Some(reason) = v["reason"].as_str() {
        why.push_str(&format!(": {reason}"));
    }
    if let Some(violations) = v["violations"].as_array().filter(|a| !a.is_empty()) {
        let list: Vec<&str> = violations.iter().filter_map(Value::as_str).collect();
        why.push_str(&format!(": {}", list.join("; ")));
    }
    match v["decision"].as_str() {
        Some(d) => Ok((d.to_owned(), why)),
        None => bail!("fcd certify: no decision in {}", run.json),
    }
}

/// The `fcd` binary next to this xtask executable, built fresh by [`Fcd::build`].
struct Fcd {
    exe: PathBuf,
}

/// One finished `fcd` process: the JSON document it printed.
struct Run {
    json: Value,
}

impl Fcd {
    /// Runs `cargo build --bin fcd` in the profile this xtask was built with,
    /// so the job never judges a stale binary.
    fn build(root: &Path) -> Result<Fcd> {
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

    fn command(&self, subcommand: &str) -> Command {
        let mut cmd = Command::new(&self.exe);
        cmd.arg(subcommand);
        cmd
    }

    /// Runs `cmd`, which must exit with one of `codes` and print one JSON document.
    fn run(&self, mut cmd: Command, codes: &[i32]) -> Result<Run> {
        let shown = format!("{cmd:?}");
        let output = cmd.output().with_context(|| format!("cannot run {}", self.exe.display()))?;
        let code = output.status.code().unwrap_or(-1);
        let stderr = String::from_utf8_lossy(&output.stderr);
        if !codes.contains(&code) {
            bail!("{shown}: exit {code}: {}", stderr.trim_end());
        }
        let json = serde_json::from_slice(&output.stdout)
            .with_context(|| format!("{shown}: stdout is not JSON: {}", String::from_utf8_lossy(&output.stdout).trim_end()))?;
        Ok(Run { json })
    }
}

fn table(outcomes: &[Outcome], wall: Duration, build: Duration) -> String {
    let mut rows = vec![[
        "release".to_owned(),
        "registration".to_owned(),
        "regeneration".to_owned(),
        "decisions".to_owned(),
        "matches expected".to_owned(),
        "oracle".to_owned(),
    ]];
    for o in outcomes {
        rows.push([
            format!("{}/{}", o.profile, o.release),
            if o.skipped { o.provenance.clone() } else { registration_cell(o.registration.as_ref()) },
            match &o.regeneration {
                Some(r) => format!("{} (pid {})", r.status, r.pid.map_or("?".to_owned(), |p| p.to_string())),
                None => "-".to_owned(),
            },
            if o.decisions.is_empty() {
                "-".to_owned()
            } else {
                o.decisions.iter().map(|d| format!("{}={}", d.call, d.decision)).collect::<Vec<_>>().join(" ")
            },
            if o.skipped {
                "not run".to_owned()
            } else if o.ok {
                format!("yes ({})", o.expect)
            } else {
                format!("NO ({})", o.expect)
            },
            o.oracle.clone().unwrap_or_else(|| "-".to_owned()),
        ]);
    }
    let widths: Vec<usize> = (0..6).map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0)).collect();
    let mut t = String::new();
    for (n, row) in rows.iter().enumerate() {
        let cells: Vec<String> = row.iter().zip(&widths).map(|(c, w)| format!("{c:<w$}")).collect();
        let _ = writeln!(t, "{}", cells.join(" | ").trim_end());
        if n == 0 {
            let _ = writeln!(t, "{}", widths.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>().join("-|-"));
        }
        if n > 0 {
            for p in &outcomes[n - 1].problems {
                let _ = writeln!(t, "    ! {p}");
            }
        }
    }
    t.push('\n');
    t.push_str(&totals(outcomes, wall, build));
    t
}

fn registration_cell(r: Option<&Registration>) -> String {
    match r {
        None => "error".to_owned(),
        Some(Registration::Registered { summary_digest }) => {
            format!("registered {}", summary_digest.get(..19).unwrap_or(summary_digest))
        }
        Some(Registration::Escalated { code, file, line, .. }) => match (file, line) {
            (Some(f), Some(l)) => format!("escalated {code} at {f}:{l}"),
            (Some(f), None) => format!("escalated {code} at {f}"),
            _ => format!("escalated {code}"),
        },
    }
}

fn totals(outcomes: &[Outcome], wall: Duration, build: Duration) -> String {
    let automatic = outcomes.iter().filter(|o| matches!(o.registration, Some(Registration::Registered { .. }))).count();
    let escalated = outcomes.iter().filter(|o| matches!(o.registration, Some(Registration::Escalated { .. }))).count();
    let skipped = outcomes.iter().filter(|o| o.skipped).count();
    let errors = outcomes.len() - automatic - escalated - skipped;
    let failed = outcomes.iter().filter(|o| !o.ok).count();
    let downloaded = outcomes.iter().filter(|o| o.downloaded).count();
    let mut t = String::new();
    let _ = write!(t, "{} releases: {automatic} automatic + {escalated} escalated", outcomes.len());
    if errors > 0 {
        let _ = write!(t, " + {errors} failed to register");
    }
    if skipped > 0 {
        let _ = write!(t, " ({skipped} git releases not run: no --git-mirror)");
    }
    let _ =
        writeln!(t, "; {}", if failed == 0 { "every outcome matches its expectation".to_owned() } else { format!("{failed} DIFFER from their expectations") });
    let _ = writeln!(
        t,
        "wall time {:.2} s ({:.2} s of it checking the fcd build); artifacts: {downloaded} downloaded, {} from the verified cache",
        wall.as_secs_f64(),
        build.as_secs_f64(),
        outcomes.iter().filter(|o| !o.skipped && !o.downloaded).count()
    );
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn escalated(code: &str) -> Registration {
        Registration::Escalated { code: code.into(), detail: "d".into(), file: Some("f".into()), line: Some(1) }
    }

    fn automatic() -> fcd_runtime::registry::ReleaseStatus {
        fcd_runtime::registry::ReleaseStatus { status: "automatic".into(), code: None }
    }

    #[test]
    fn a_previously_automatic_release_that_escalates_fails() {
        let problems = review(&Expectation::Unreviewed, &escalated("inventory_violation"), Some(&automatic()), None, false);
        assert_eq!(problems, ["this release registered automatically before and escalates now"]);
        assert!(review(&Expectation::Unreviewed, &escalated("inventory_violation"), None, None, false).is_empty());
    }

    #[test]
    fn an_accepted_escalation_fails_nothing_while_its_code_holds() {
        let regime = Expectation::Regime("guarded".into());
        assert_eq!(review(&regime, &escalated("shape_mismatch"), Some(&automatic()), None, false).len(), 2);
        assert!(review(&regime, &escalated("shape_mismatch"), Some(&automatic()), None, true).is_empty());
        assert!(review(&regime, &escalated("shape_mismatch"), None, Some("shape_mismatch"), false).is_empty());
        assert_eq!(review(&regime, &escalated("parse_error"), None, Some("shape_mismatch"), false).len(), 1, "another code is a new escalation");
    }

    #[test]
    fn an_expected_escalation_that_registers_fails() {
        let expect = Expectation::Escalate(fcd_frontends::EscalationCode::ShapeMismatch);
        let problems = review(&expect, &Registration::Registered { summary_digest: "x".into() }, None, None, false);
        assert!(problems[0].contains("accepted"), "{problems:?}");
    }
}
