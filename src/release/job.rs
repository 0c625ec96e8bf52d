//! Checking a profile's official releases against what its releases.toml
//! and canonical.json expect: the core of `fcd profile check-releases DIR`
//! and of the release job (`cargo xtask releases`, which adds the oracle,
//! the history triage and its reports).
//!
//! Per release: fetch and verify the artifact ([`materialize`]); register
//! it in this process and record the outcome in the registry; `fcd
//! regenerate` in a second process (must report `match`) and admission —
//! [`add`], the very code of `fcd release add`; then `fcd certify` in a
//! process of its own for every canonical call, each decision compared with
//! `expect[regime]` (or the release's own `expect`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde::Serialize;
use serde_json::Value;

use fcd_verify::canonical_calls::{self, Canonical};

use super::add;
use super::fetch::{self, DigestFrom, Materialized};
use super::manifest::{self, Expectation, Release, Source};

/// What every release of a run shares.
pub struct Job<'a> {
    pub fcd: &'a Fcd,
    pub registry: fcd_runtime::registry::Registry,
    /// Releases whose escalation a person reviewed and accepts.
    pub accept: &'a [String],
    /// A second opinion on every automatic registration's decisions (the
    /// release job's independent oracle): its problems and a one-line summary.
    pub oracle: Option<&'a Oracle>,
}

/// Judges a registered release's decisions from its tree: (problems, summary).
pub type Oracle = dyn Fn(&Plan, &Path, &[CallDecision]) -> Result<(Vec<String>, String)>;

/// What came of one release; one JSON Lines object.
#[derive(Debug, Serialize)]
pub struct Outcome {
    pub profile: String,
    pub release: String,
    /// `regime NAME` or `escalate CODE`.
    pub expect: String,
    pub artifact_digest: Option<String>,
    /// Registry digest, or commit and tree ids of a git tag.
    pub provenance: String,
    pub downloaded: bool,
    /// Not run: a git release whose repository has no --git-mirror.
    pub skipped: bool,
    /// With --oracle: what the independent oracle said, in one line.
    pub oracle: Option<String>,
    /// The registry epoch the summary was admitted as.
    pub epoch: Option<String>,
    /// Summary and profile digests, for the reports.
    pub summary_digest: Option<String>,
    pub profile_digest: Option<String>,
    pub root: String,
    pub registration: Option<Registration>,
    pub regeneration: Option<Regeneration>,
    pub decisions: Vec<CallDecision>,
    /// Every way the release differs from its expectation; empty when it matches.
    pub problems: Vec<String>,
    pub ok: bool,
    pub seconds: f64,
}

#[derive(Debug, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Registration {
    Registered { summary_digest: String },
    Escalated { code: String, detail: String, file: Option<String>, line: Option<u64> },
}

#[derive(Debug, Serialize)]
pub struct Regeneration {
    pub status: String,
    pub pid: Option<u64>,
    /// The summary digest the second process produced.
    pub digest: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct CallDecision {
    pub call: String,
    pub decision: String,
    /// The compiler's reason: the matched rule, its reason or the contract violations.
    pub why: String,
    pub expected: Option<String>,
}

/// The profile directories under `profiles` to run: the named ones, or every one with a releases.toml.
pub fn profile_dirs(profiles: &Path, names: &[String]) -> Result<Vec<PathBuf>> {
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
pub struct Plan {
    pub dir: PathBuf,
    pub name: String,
    pub canonical: Canonical,
    pub releases: Vec<Release>,
}

impl Plan {
    pub fn load(dir: &Path) -> Result<Plan> {
        let canonical = Canonical::load(&dir.join(canonical_calls::FILE))?;
        let path = dir.join(manifest::FILE);
        let releases = manifest::load(&path, &canonical.regimes)?;
        for release in &releases {
            check_supported(release).with_context(|| path.display().to_string())?;
        }
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        Ok(Plan { dir: dir.to_owned(), name, canonical, releases })
    }
}

/// Makes the release available under `cache`, verified and unpacked. A git
/// release without a mirror for its repository is not run (`Ok(None)`).
pub fn materialize(release: &Release, cache: &Path, mirrors: &BTreeMap<String, PathBuf>) -> Result<Option<Materialized>> {
    std::fs::create_dir_all(cache).with_context(|| format!("{}: cannot create the cache directory", cache.display()))?;
    match &release.source {
        Source::Pypi(p) => fetch::pypi(&release.id, p, DigestFrom::Manifest, cache).map(Some),
        Source::Npm(n) => fetch::npm(&release.id, n, DigestFrom::Manifest, cache).map(Some),
        Source::Dir(d) => {
            let root = d.path.canonicalize().with_context(|| format!("{}: release directory not found", d.path.display()))?;
            if !root.is_dir() {
                bail!("{}: not a directory", root.display());
            }
            Ok(Some(Materialized { artifact_digest: None, provenance: format!("directory {}", root.display()), root, downloaded: false }))
        }
        Source::Case(c) => {
            let cases = crate::profile_test::load_cases(&c.profile)?;
            let Some(case) = cases.iter().find(|k| k.name == c.name) else {
                bail!("release `{}`: no case `{}` in {}/tests/*.toml", release.id, c.name, c.profile.display());
            };
            let root = cache.join(&release.id);
            if root.exists() {
                std::fs::remove_dir_all(&root).with_context(|| format!("{}: cannot clear the previous tree", root.display()))?;
            }
            case.materialize_into(&root)?;
            Ok(Some(Materialized { artifact_digest: None, provenance: format!("test case {} of {}", c.name, case.file.display()), root, downloaded: false }))
        }
        Source::Git(g) => match mirrors.get(&g.repository) {
            Some(mirror) => fetch::git_mirror(&release.id, g, mirror, cache).map(Some),
            None => Ok(None),
        },
    }
}

/// Refuses, before any work starts, a release whose source kind has no fetcher yet.
pub fn check_supported(release: &Release) -> Result<()> {
    match &release.source {
        Source::Pypi(_) | Source::Npm(_) | Source::Git(_) | Source::Dir(_) | Source::Case(_) => Ok(()),
    }
}

pub fn run_release(job: &mut Job<'_>, plan: &Plan, release: &Release, cache: &Path, mirrors: &BTreeMap<String, PathBuf>) -> Result<Outcome> {
    let start = Instant::now();
    let Some(art) = materialize(release, cache, mirrors)? else {
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
    if let Some(oracle) = job.oracle
        && matches!(o.registration, Some(Registration::Registered { .. }))
    {
        let (problems, summary) = oracle(plan, &art.root, &o.decisions)?;
        o.problems.extend(problems);
        o.oracle = Some(summary);
    }
    o.ok = o.problems.is_empty();
    o.seconds = start.elapsed().as_secs_f64();
    Ok(o)
}

/// Register, regenerate, admit, certify; every difference from the expectation goes into `o.problems`.
fn check_release(job: &mut Job<'_>, plan: &Plan, release: &Release, art: &Materialized, summary: &Path, o: &mut Outcome) -> Result<()> {
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
    let registration = match add::register(&job.registry, &target) {
        Ok(r) => Registration::from(&r),
        Err(add::AddError::Input(e)) => {
            o.problems.push(e.to_string());
            return Ok(());
        }
        Err(add::AddError::Registry(e)) => bail!("{e}"),
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
    let admission = add::regenerate_and_admit(&mut job.registry, &fcd.exe, &target);
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
fn target(dir: &Path, profile_name: &str, release: &Release, art: &fetch::Materialized, summary: &Path) -> Result<add::Target> {
    let config = summary.with_extension("config.json");
    let canonical: Value = serde_json::from_str(&std::fs::read_to_string(dir.join(canonical_calls::FILE))?)?;
    std::fs::write(&config, canonical["env"]["config"].to_string()).with_context(|| format!("{}: cannot write", config.display()))?;
    Ok(add::Target {
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

/// The `fcd` binary each step runs in a process of its own: the running one
/// for `fcd profile check-releases`, one built fresh for the release job.
pub struct Fcd {
    pub exe: PathBuf,
}

/// One finished `fcd` process: the JSON document it printed.
struct Run {
    json: Value,
}

impl Fcd {
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

/// The outcomes as a table, each problem under its release, then the totals.
pub fn table(outcomes: &[Outcome], wall: Duration, build: Duration) -> String {
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
    // The oracle's column only when an oracle judged (the release job's --oracle).
    let columns = if outcomes.iter().any(|o| o.oracle.is_some()) { 6 } else { 5 };
    let widths: Vec<usize> = (0..columns).map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0)).collect();
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

/// One line of counts and one of times (`build`: the time spent making sure the binary is fresh).
pub fn totals(outcomes: &[Outcome], wall: Duration, build: Duration) -> String {
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
    let building = if build.is_zero() { String::new() } else { format!(" ({:.2} s of it checking the fcd build)", build.as_secs_f64()) };
    let _ = writeln!(
        t,
        "wall time {:.2} s{building}; artifacts: {downloaded} downloaded, {} from the verified cache",
        wall.as_secs_f64(),
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
