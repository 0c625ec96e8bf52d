//! `cargo xtask releases --history`: every published release of each
//! profile's tool (its releases.toml `[history]`), registered in process and in
//! parallel, then folded into a triage ([`crate::triage`]).
//!
//! Unlike the release job nothing here is pinned or expected: a release is
//! automatic (registered, regenerated to the same digest, its canonical
//! decisions matched to a regime), escalated, failed (download, materialize,
//! register, regeneration) or not run (a git history without a mirror), and
//! every one of them is reported.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::{Context, Result, bail};

use fcd_compiler::profile::Profile;
use fcd_compiler::register::{Registration, Request, register};
use fcd_verify::canonical_calls::{self, Canonical};
use fcd_verify::verdict::{check_call, decide};

use crate::Format;
use crate::fetch;
use crate::triage::{self, Record, Status};
use crate::versions;
use fcd::release::manifest::{self, History, Release};

pub struct Options {
    pub profiles: Vec<String>,
    /// `OWNER/REPO` -> a local bare mirror.
    pub git_mirrors: BTreeMap<String, PathBuf>,
    pub cache: PathBuf,
    pub format: Format,
    /// Worker threads; the machine's available parallelism when none.
    pub jobs: Option<usize>,
    /// Ask the registries for their version lists even when the cached lists are fresh.
    pub refresh: bool,
    /// The directory holding the profiles (`profiles/` of the workspace, or `--profiles`).
    pub profiles_dir: PathBuf,
    /// Judge every automatic registration with the independent oracle too.
    pub oracle: bool,
}

/// One profile, loaded once and shared by the workers.
struct Plan {
    name: String,
    dir: PathBuf,
    profile: Profile,
    canonical: Canonical,
    config: Option<fcd_compiler::register::Config>,
}

/// One published release to judge.
struct Task {
    plan: usize,
    release: Release,
    version: String,
    source: &'static str,
}

/// Runs the triage; `Ok(false)` when some release failed (download,
/// materialize, register, regeneration). Escalations are the triage's
/// subject, not failures.
pub fn run(opts: &Options) -> Result<bool> {
    let start = Instant::now();
    let (records, notes) = collect(opts)?;
    let groups = triage::group(&records);
    let wall = start.elapsed();
    render(opts.format, &records, &groups, &notes, wall)?;
    // A release the oracle judges otherwise than the compiler, or cannot judge, fails the run.
    let oracle_ok = records.iter().all(|r| r.oracle.as_deref().is_none_or(|o| o.starts_with("agrees") || o.starts_with("unjudged")));
    Ok(oracle_ok && !records.iter().any(|r| matches!(r.status, Status::Failed { .. })))
}

/// Every release of every profile's history, judged; and notes on where the lists came from.
fn collect(opts: &Options) -> Result<(Vec<Record>, Vec<String>)> {
    let dirs = fcd::release::job::profile_dirs(&opts.profiles_dir, &opts.profiles)?;
    std::fs::create_dir_all(&opts.cache).with_context(|| format!("{}: cannot create", opts.cache.display()))?;
    let mut plans = Vec::new();
    let mut tasks = Vec::new();
    let mut records = Vec::new();
    let mut notes = Vec::new();
    for dir in dirs {
        let path = dir.join(manifest::FILE);
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let Some(history) = manifest::load_history(&path)? else {
            if opts.profiles.contains(&name) {
                bail!("{}: no [history] table; profile `{name}` says nowhere where its releases are listed", path.display());
            }
            notes.push(format!("{name}: no [history] in {}, not triaged", path.display()));
            continue;
        };
        let plan = load_plan(&dir, name)?;
        enumerate(plans.len(), &plan.name, &history, opts, &mut tasks, &mut records, &mut notes);
        plans.push(plan);
    }
    let jobs = opts.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1);
    records.extend(judge_all(&plans, tasks, &opts.cache, &opts.git_mirrors, jobs, opts.oracle));
    notes.push(format!("{jobs} worker threads"));
    Ok((records, notes))
}

fn render(format: Format, records: &[Record], groups: &[triage::Group], notes: &[String], wall: std::time::Duration) -> Result<()> {
    match format {
        Format::Text => print!("{}", triage::text(records, groups, notes, wall)),
        Format::Json => {
            for g in groups {
                let mut v = serde_json::to_value(g)?;
                v["type"] = "group".into();
                println!("{v}");
            }
            for r in records {
                let mut v = serde_json::to_value(r)?;
                v["type"] = "release".into();
                println!("{v}");
            }
            eprint!("{}", triage::totals(records, notes, wall));
        }
        Format::Sarif => {
            println!("{}", serde_json::to_string_pretty(&triage::sarif(records, groups))?);
            eprint!("{}", triage::totals(records, notes, wall));
        }
    }
    Ok(())
}

fn load_plan(dir: &Path, name: String) -> Result<Plan> {
    let profile = Profile::load(dir)?;
    let canonical = Canonical::load(&dir.join(canonical_calls::FILE))?;
    // The registration's configuration is the canonical environment's: the
    // canonical calls are decided under it.
    let config = match &canonical.env.config {
        serde_json::Value::Object(map) => Some(map.clone()),
        serde_json::Value::Null => None,
        other => bail!("{}: env.config is {other}, not a JSON object", canonical.file.display()),
    };
    Ok(Plan { name, dir: dir.to_owned(), profile, canonical, config })
}

/// Lists every release of one history into `tasks`; a list that cannot be had
/// and a git history without a mirror become records of their own.
fn enumerate(plan: usize, name: &str, history: &History, opts: &Options, tasks: &mut Vec<Task>, records: &mut Vec<Record>, notes: &mut Vec<String>) {
    let mut registry = |kind: &'static str, package: &str, listed: Result<versions::Listed>| match listed {
        Ok(listed) => {
            notes.push(format!("{name}: {} {kind} versions of {package} ({})", listed.versions.len(), listed.origin));
            for version in listed.versions {
                let spec = match kind {
                    "pypi" => format!("{name}=pypi:{package}=={version}"),
                    _ => format!("{name}=npm:{package}@{version}"),
                };
                match manifest::parse_extra(&spec) {
                    Ok((_, release)) => tasks.push(Task { plan, release, version, source: kind }),
                    Err(e) => records.push(unjudged(name, &format!("{package}-{version}"), &version, kind, "list", format!("{e:#}"))),
                }
            }
        }
        Err(e) => records.push(unjudged(name, &format!("{kind}:{package}"), "", kind, "list", format!("{e:#}"))),
    };
    if let Some(p) = &history.pypi {
        registry("pypi", p, versions::pypi(p, &opts.cache, opts.refresh));
    }
    if let Some(n) = &history.npm {
        registry("npm", n, versions::npm(n, &opts.cache, opts.refresh));
    }
    let Some(g) = &history.git else { return };
    let Some(mirror) = opts.git_mirrors.get(&g.repository) else {
        let mut r = unjudged(name, &format!("git:{}", g.repository), "", "git", "", String::new());
        r.status = Status::NotRun { reason: format!("no --git-mirror {}=DIR", g.repository) };
        records.push(r);
        return;
    };
    match versions::git_tags(mirror, &g.tags) {
        Ok(tags) => {
            notes.push(format!("{name}: {} tags of {} match `{}` in {}", tags.len(), g.repository, g.tags, mirror.display()));
            for tag in tags {
                match manifest::parse_extra(&format!("{name}=git:{}@{tag}", g.repository)) {
                    Ok((_, mut release)) => {
                        if let manifest::Source::Git(source) = &mut release.source {
                            source.paths = g.paths.clone();
                        }
                        tasks.push(Task { plan, release, version: tag, source: "git" });
                    }
                    Err(e) => records.push(unjudged(name, &tag, &tag, "git", "list", format!("{e:#}"))),
                }
            }
        }
        Err(e) => records.push(unjudged(name, &format!("git:{}", g.repository), "", "git", "list", format!("{e:#}"))),
    }
}

fn unjudged(profile: &str, release: &str, version: &str, source: &str, stage: &str, message: String) -> Record {
    Record {
        profile: profile.to_owned(),
        release: release.to_owned(),
        version: version.to_owned(),
        source: source.to_owned(),
        artifact_sha256: None,
        provenance: String::new(),
        downloaded: false,
        root: String::new(),
        status: Status::Failed { stage: stage.to_owned(), message },
        seconds: 0.0,
        materialize_seconds: 0.0,
        oracle: None,
        oracle_problems: Vec::new(),
    }
}

/// Judges every task on `jobs` threads; the records come back in task order.
fn judge_all(plans: &[Plan], tasks: Vec<Task>, cache: &Path, mirrors: &BTreeMap<String, PathBuf>, jobs: usize, oracle: bool) -> Vec<Record> {
    let next = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<Record>>> = Mutex::new(vec![None; tasks.len()]);
    let progress = Mutex::new(crate::progress::Progress::new(tasks.len() as u64));
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(tasks.len().max(1)) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(task) = tasks.get(i) else { break };
                    let plan = &plans[task.plan];
                    // A panic in a frontend is a failed release, not a failed job.
                    let record = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| judge(plan, task, cache, mirrors, oracle))).unwrap_or_else(|panic| {
                        let what = panic.downcast_ref::<&str>().map(|s| (*s).to_owned()).or_else(|| panic.downcast_ref::<String>().cloned());
                        unjudged(&plan.name, &task.release.id, &task.version, task.source, "register", format!("panicked: {}", what.unwrap_or_default()))
                    });
                    let line = format!("{}/{}: {}", plan.name, record.release, status_word(&record.status));
                    progress.lock().unwrap_or_else(|e| e.into_inner()).done(&line);
                    slots.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(record);
                }
            });
        }
    });
    progress.lock().unwrap_or_else(|e| e.into_inner()).finish();
    slots.into_inner().unwrap_or_else(|e| e.into_inner()).into_iter().flatten().collect()
}

fn status_word(s: &Status) -> String {
    match s {
        Status::Automatic { regime, .. } => format!("automatic ({regime})"),
        Status::Escalated { code, .. } => format!("escalated {code}"),
        Status::Failed { stage, .. } => format!("FAILED ({stage})"),
        Status::NotRun { .. } => "not run".to_owned(),
    }
}

/// Materialize, register, register again, decide (and, with `oracle`, judge
/// the same calls with the independent oracle).
fn judge(plan: &Plan, task: &Task, cache: &Path, mirrors: &BTreeMap<String, PathBuf>, oracle: bool) -> Record {
    let start = Instant::now();
    let release = &task.release;
    let mut record = unjudged(&plan.name, &release.id, &task.version, task.source, "", String::new());
    let archive_existed = ["tar.gz", "tgz"].iter().any(|ext| cache.join(format!("{}.{ext}", release.id)).is_file());
    let fetched = fetch::materialize_reusing(release, cache, mirrors);
    record.materialize_seconds = start.elapsed().as_secs_f64();
    let art = match fetched {
        Ok(Some(art)) => art,
        Ok(None) => {
            record.status = Status::NotRun { reason: format!("no --git-mirror for {}", release.source.describe()) };
            return record;
        }
        Err(e) => {
            let stage = if task.source != "git" && !archive_existed { "download" } else { "materialize" };
            record.status = Status::Failed { stage: stage.into(), message: format!("{e:#}") };
            record.seconds = start.elapsed().as_secs_f64();
            return record;
        }
    };
    record.artifact_sha256 = art.artifact_digest.clone();
    record.provenance = art.provenance.clone();
    record.downloaded = art.downloaded;
    record.root = art.root.display().to_string();
    let request =
        Request { source: art.root.clone(), release: Some(release.id.clone()), artifact_digest: art.artifact_digest.clone(), config: plan.config.clone() };
    record.status = match register(&plan.profile, &request) {
        Err(e) => Status::Failed { stage: "register".into(), message: e.to_string() },
        Ok(Registration::Escalated(e)) => Status::Escalated {
            code: e.code.as_str().to_owned(),
            detail: e.detail.clone(),
            file: e.anchor.as_ref().map(|a| a.file.clone()),
            line: e.anchor.as_ref().map(|a| u64::from(a.line)),
        },
        Ok(Registration::Registered(summary)) => match register(&plan.profile, &request) {
            Ok(Registration::Registered(again)) if again.summary_digest == summary.summary_digest => {
                let decisions = decisions(&plan.canonical, &summary);
                let regime = regime(&plan.canonical, &decisions);
                Status::Automatic { summary_digest: summary.summary_digest.clone(), regime, decisions }
            }
            Ok(Registration::Registered(again)) => Status::Failed {
                stage: "regeneration".into(),
                message: format!("the second registration gave summary {}, the first {}", again.summary_digest, summary.summary_digest),
            },
            Ok(Registration::Escalated(e)) => Status::Failed { stage: "regeneration".into(), message: format!("the second registration escalated: {e}") },
            Err(e) => Status::Failed { stage: "regeneration".into(), message: e.to_string() },
        },
    };
    if let (true, Status::Automatic { decisions, .. }) = (oracle, &record.status) {
        let calls: Vec<(String, String, String)> = decisions.iter().map(|(call, d)| (call.clone(), d.clone(), String::new())).collect();
        match crate::oracle_check::run(&plan.name, &plan.dir, &art.root, &calls) {
            Ok(report) => {
                record.oracle = Some(report.summary);
                record.oracle_problems = report.problems;
            }
            Err(e) => record.oracle = Some(format!("oracle failed: {e:#}")),
        }
    }
    record.seconds = start.elapsed().as_secs_f64();
    record
}

/// Every canonical call decided under the canonical env and contract; a call
/// the summary's schema refuses is `invalid`.
fn decisions(canonical: &Canonical, summary: &fcd_model::summary::Summary) -> BTreeMap<String, String> {
    canonical
        .calls
        .keys()
        .map(|name| {
            let decision = match canonical.input(name) {
                Some(input) => match check_call(summary, &input) {
                    Ok(checked) => decide(&checked, &canonical.env, &canonical.contract).decision.as_str().to_owned(),
                    Err(_) => "invalid".to_owned(),
                },
                None => "invalid".to_owned(),
            };
            (name.clone(), decision)
        })
        .collect()
}

/// The regime whose `expect` every decision matches, else `no regime (A=…, B=…)`.
fn regime(canonical: &Canonical, decisions: &BTreeMap<String, String>) -> String {
    let matches =
        |regime: &String| canonical.calls.iter().all(|(name, call)| call.expect.get(regime).map(|v| v.as_str()) == decisions.get(name).map(String::as_str));
    match canonical.regimes.iter().find(|r| matches(r)) {
        Some(r) => r.clone(),
        None => format!("no regime ({})", decisions.iter().map(|(c, d)| format!("{c}={d}")).collect::<Vec<_>>().join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(args: &[&str], dir: &Path) {
        let out = std::process::Command::new("git")
            .args([
                "-c",
                "user.name=fcd test",
                "-c",
                "user.email=test@fcd.invalid",
                "-c",
                "init.defaultBranch=main",
                "-c",
                "tag.gpgSign=false",
                "-c",
                "commit.gpgSign=false",
            ])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }

    fn copy_tree(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let path = entry.unwrap().path();
            let target = to.join(path.file_name().unwrap());
            if path.is_dir() { copy_tree(&path, &target) } else { std::fs::copy(&path, &target).map(drop).unwrap() }
        }
    }

    /// A bare repository with three tags of the project's own hand-written
    /// git-diff fixtures (unguarded, guarded, then the handler's file gone),
    /// triaged through a temporary profile directory; no network.
    #[test]
    fn the_tags_of_a_local_mirror_are_triaged() {
        let root = crate::workspace_root();
        let tmp = tempfile::tempdir().unwrap();
        let profile = tmp.path().join("profiles/git-diff");
        std::fs::create_dir_all(&profile).unwrap();
        for file in ["profile.toml", "canonical.json"] {
            std::fs::copy(root.join("profiles/git-diff").join(file), profile.join(file)).unwrap();
        }
        std::fs::write(profile.join(manifest::FILE), "[history.git]\nrepository = \"fixture/git-diff\"\ntags = '^v[0-9]'\n").unwrap();
        let other = tmp.path().join("profiles/unmirrored");
        std::fs::create_dir_all(&other).unwrap();
        // The same profile under another id: the directory names the profile.
        let text = std::fs::read_to_string(root.join("profiles/git-diff/profile.toml")).unwrap();
        std::fs::write(other.join("profile.toml"), text.replacen("id = \"git-diff\"", "id = \"unmirrored\"", 1)).unwrap();
        std::fs::copy(root.join("profiles/git-diff/canonical.json"), other.join("canonical.json")).unwrap();
        std::fs::write(other.join(manifest::FILE), "[history.git]\nrepository = \"fixture/elsewhere\"\ntags = '.'\n").unwrap();

        let mirror = tmp.path().join("mirror.git");
        let work = tmp.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        git(&["init", "-q", "--bare", mirror.to_str().unwrap()], tmp.path());
        let tree = ["--git-dir", mirror.to_str().unwrap(), "--work-tree", work.to_str().unwrap()];
        for (fixture, tag) in [("unguarded", "v0.9.0"), ("guarded", "v0.10.0"), ("", "v0.10.1"), ("", "not-a-version")] {
            if !fixture.is_empty() {
                let _ = std::fs::remove_dir_all(&work);
                copy_tree(&root.join("fixtures/git-diff").join(fixture), &work.join("pkg"));
            } else {
                std::fs::remove_file(work.join("pkg/mcp_server_git/server.py")).ok();
            }
            git(&[&tree[..], &["add", "-A"]].concat(), tmp.path());
            git(&[&tree[..], &["commit", "-q", "--allow-empty", "-m", tag]].concat(), tmp.path());
            git(&[&tree[..2], &["tag", tag]].concat(), tmp.path());
        }

        let opts = Options {
            profiles: Vec::new(),
            git_mirrors: [("fixture/git-diff".to_owned(), mirror.clone())].into_iter().collect(),
            cache: tmp.path().join("cache"),
            format: Format::Json,
            jobs: Some(2),
            refresh: false,
            profiles_dir: tmp.path().join("profiles"),
            oracle: true,
        };
        let (records, notes) = collect(&opts).unwrap();
        assert!(notes.iter().any(|n| n.contains("3 tags of fixture/git-diff")), "{notes:?}");
        let groups = triage::group(&records);
        let seen: Vec<(&str, &str, &str, &str, usize)> =
            groups.iter().map(|g| (g.profile.as_str(), g.kind.as_str(), g.what.as_str(), g.first.as_str(), g.size)).collect();
        assert_eq!(
            seen,
            [
                ("git-diff", "automatic", "guarded", "fixture-git-diff-v0.10.0", 1),
                ("git-diff", "automatic", "unguarded", "fixture-git-diff-v0.9.0", 1),
                ("git-diff", "escalated", "region_missing", "fixture-git-diff-v0.10.1", 1),
                ("unmirrored", "not_run", "no --git-mirror fixture/elsewhere=DIR", "git:fixture/elsewhere", 1),
            ]
        );
        let automatic = records.iter().find(|r| r.release == "fixture-git-diff-v0.9.0").unwrap();
        match &automatic.status {
            Status::Automatic { decisions, .. } => assert_eq!(decisions["B"], "unsafe"),
            other => panic!("{other:?}"),
        }
        assert!(automatic.provenance.contains("commit"), "{}", automatic.provenance);
        // The oracle judged both automatic registrations and agrees; an escalation it never sees.
        for r in &records {
            let expected = matches!(r.status, Status::Automatic { .. }).then_some("agrees (3/3)");
            assert_eq!(r.oracle.as_deref(), expected, "{}: {:?}", r.release, r.oracle_problems);
        }

        // A warm run reuses the unpacked trees and judges the same; a moved tag is unpacked afresh.
        let (again, _) = collect(&opts).unwrap();
        let reused = again.iter().find(|r| r.release == "fixture-git-diff-v0.9.0").unwrap();
        assert!(reused.provenance.ends_with("(tree unpacked before)"), "{}", reused.provenance);
        assert_eq!(triage::group(&again).len(), groups.len());
        git(&[&tree[..2], &["tag", "-f", "v0.9.0", "v0.10.0"]].concat(), tmp.path());
        let (moved, _) = collect(&opts).unwrap();
        let moved = moved.iter().find(|r| r.release == "fixture-git-diff-v0.9.0").unwrap();
        assert!(!moved.provenance.contains("unpacked before"), "{}", moved.provenance);
        assert!(matches!(&moved.status, Status::Automatic { regime, .. } if regime == "guarded"), "{:?}", moved.status);
    }

    #[test]
    fn decisions_that_fit_no_regime_are_named() {
        let canonical = Canonical::load(&crate::workspace_root().join("profiles/git-diff").join(canonical_calls::FILE)).unwrap();
        let decisions: BTreeMap<String, String> =
            [("A", "safe"), ("B", "unsafe"), ("C", "reject")].iter().map(|(c, d)| ((*c).to_owned(), (*d).to_owned())).collect();
        assert_eq!(regime(&canonical, &decisions), "no regime (A=safe, B=unsafe, C=reject)");
        let guarded: BTreeMap<String, String> =
            [("A", "safe"), ("B", "reject"), ("C", "reject")].iter().map(|(c, d)| ((*c).to_owned(), (*d).to_owned())).collect();
        assert_eq!(regime(&canonical, &guarded), "guarded");
    }
}
