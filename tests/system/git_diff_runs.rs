//! The truth of git-diff cases, established by running them.
//!
//! Every fixture, mutation and adversarial case of profiles/git-diff is
//! materialized, its dispatcher is run for real (GitPython and git against a
//! scratch repository, a stub in place of the MCP SDK) on each canonical call,
//! and the test watches the canary file the calls and the edits aim at. Two
//! properties must hold: fcd never certifies (decides `safe`) a call that
//! wrote the file, and a case never declares a call's truth `safe` when it
//! wrote the file. Needs python3 with GitPython and git; without them the test
//! says so and skips (CI installs both).

use fcd_testkit::tools;

use std::path::{Path, PathBuf};
use std::process::Command;

use fcd_compiler::profile::Profile;
use fcd_compiler::register::{Registration, Request, register};
use fcd_verify::canonical_calls::Canonical;
use fcd_verify::verdict::{Verdict, check_call, decide};
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git").args(args).current_dir(dir).output().expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// A repository with a `main` branch and a change in the working tree.
fn scratch_repo(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.email", "fcd@example.invalid"]);
    git(dir, &["config", "user.name", "fcd"]);
    std::fs::write(dir.join("notes.txt"), "first\n").unwrap();
    git(dir, &["add", "notes.txt"]);
    git(dir, &["commit", "-q", "-m", "first"]);
    std::fs::write(dir.join("notes.txt"), "first\nsecond\n").unwrap();
}

/// Replaces `from` by `to` in every file under `dir`.
fn retarget(dir: &Path, from: &str, to: &str) {
    for entry in walkdir::WalkDir::new(dir).follow_links(false) {
        let entry = entry.unwrap();
        if !entry.file_type().is_file() {
            continue;
        }
        if let Ok(text) = std::fs::read_to_string(entry.path())
            && text.contains(from)
        {
            std::fs::write(entry.path(), text.replace(from, to)).unwrap();
        }
    }
}

#[test]
fn no_certificate_for_a_call_that_writes_when_run() {
    if !tools::tools_or_skip("no_certificate_for_a_call_that_writes_when_run", tools::git_and_gitpython()) {
        return;
    }
    let dir = root().join("profiles/git-diff");
    let profile = Profile::load(&dir).unwrap();
    let canonical = Canonical::load(&dir.join("canonical.json")).unwrap();
    let driver = root().join("tests/support/run_git_diff.py");
    let (mut cases_run, mut writes, mut certified) = (0, 0, 0);
    for case in fcd::profile_test::load_cases(&dir).unwrap() {
        let tree = case.root().unwrap();
        let scratch = tempfile::tempdir().unwrap();
        let canary = scratch.path().join("canary");
        let repo = scratch.path().join("repo");
        scratch_repo(&repo);
        // A copy of the release whose writes aim at this test's own canary.
        let release = scratch.path().join("release");
        std::fs::create_dir(&release).unwrap();
        fcd_edits::materialize(&tree.path, &[], &release).unwrap();
        retarget(&release, "/tmp/canary", canary.to_str().unwrap());

        let mut calls = serde_json::Map::new();
        for name in canonical.calls.keys() {
            let mut args = canonical.call(name).unwrap().arguments;
            args.insert("repo_path".into(), Value::String(repo.to_string_lossy().into_owned()));
            if let Some(Value::String(t)) = args.get_mut("target") {
                *t = t.replace("/tmp/canary", canary.to_str().unwrap());
            }
            calls.insert(name.clone(), Value::Object(args));
        }
        let mut command = Command::new("python3");
        command.arg(&driver).arg(&release).arg(&canary).current_dir(scratch.path());
        let report = tools::drive(command, &Value::Object(calls), &format!("case {}", case.name));
        cases_run += 1;
        let Some(results) = report.get("calls").and_then(Value::as_object) else { continue };

        let request = Request { source: tree.path.clone(), release: Some(case.name.clone()), ..Request::default() };
        let summary = match register(&profile, &request).unwrap() {
            Registration::Registered(s) => Some(s),
            Registration::Escalated(_) => None,
        };
        for (name, result) in results {
            let wrote = result["wrote"] == Value::Bool(true);
            writes += usize::from(wrote);
            if wrote && let Some(truth) = case.truth.get(name) {
                assert_ne!(*truth, Verdict::Safe, "case {}: call {name} writes when run, but its declared truth is safe", case.name);
            }
            let Some(summary) = &summary else { continue };
            let call = canonical.call(name).unwrap();
            let input = fcd_verify::verdict::CallInput::new(call, &dir);
            let d = decide(&check_call(summary, &input).unwrap(), &canonical.env, &canonical.contract);
            if d.decision == Verdict::Safe {
                certified += 1;
                assert!(!wrote, "case {}: fcd certifies call {name}, which writes {} when run", case.name, canary.display());
            }
        }
    }
    eprintln!("git-diff cases run: {cases_run}; calls that wrote: {writes}; certificates checked against a run: {certified}");
    assert!(cases_run > 50 && writes > 10 && certified > 10, "the run covers too little: {cases_run} cases, {writes} writes, {certified} certificates");
}
