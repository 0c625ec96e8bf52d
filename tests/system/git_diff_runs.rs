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
//!
//! The second test generates targets from git's option grammar and from
//! revision syntax and runs each through the official releases (from PyPI,
//! with the official MCP client), every value naming its call so a written
//! file is blamed on it: no certified call writes, and nothing is written
//! that no call names.

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

/// Targets generated from git's option grammar and from revision syntax:
/// option prefixes (one, two or three dashes, a Unicode minus, leading
/// space), long options whole and abbreviated (git accepts any unambiguous
/// prefix of a long option), with `=`, glued or no value, values absolute,
/// relative and climbing; and plain revisions, ranges, paths, Unicode and
/// empty strings. Every value names its call (`m{index}`), so a file a call
/// wrote is found by its name.
fn generated_targets(out: &Path) -> Vec<String> {
    let mut targets = Vec::new();
    let prefixes = ["-", "--", "---", "\u{2212}\u{2212}", " --", "+"];
    let options = ["output", "outpu", "outp", "out", "o", "output-indicator-new", "ext-diff", "textconv", "stat", "no-index", "relative", "color-moved"];
    for prefix in prefixes {
        for option in options {
            for form in ["=", "", " "] {
                // Absolute, relative to the repository (git runs there) and climbing out of it.
                for kind in 0..3 {
                    let i = targets.len();
                    let value = match kind {
                        0 => format!("{}/m{i}.txt", out.display()),
                        1 => format!("m{i}.txt"),
                        _ => format!("../m{i}.txt"),
                    };
                    targets.push(format!("{prefix}{option}{form}{value}"));
                }
            }
        }
    }
    let plain = [
        "main",
        "HEAD",
        "HEAD~1",
        "main..work",
        "work...main",
        ":/second",
        "@{-1}",
        "main:notes.txt",
        "notes.txt",
        "nonexistent",
        "\u{fc}n\u{ef}c\u{f6}d\u{e9}",
        "a b",
        "",
        "main -- notes.txt",
        "HEAD^{tree}",
        "refs/heads/main",
        "./notes.txt",
        "/etc/passwd",
    ];
    targets.extend(plain.iter().map(|p| (*p).to_owned()));
    targets
}

/// Every file under `dir`, by path, with its bytes.
fn files_under(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file() && !e.path().components().any(|c| c.as_os_str() == ".git"))
        .map(|e| (e.path().to_owned(), std::fs::read(e.path()).unwrap_or_default()))
        .collect()
}

/// Issue 26, point 6: generated git_diff calls run through the official
/// releases themselves (mcp-server-git 2025.9.25, unguarded, and 2026.1.14,
/// guarded, from PyPI, driven by the official MCP client), each decided by
/// fcd on the release's own summary. A call fcd certifies (safe) must have
/// written nothing, and nothing may be written that no call can be blamed for.
#[test]
fn generated_targets_on_the_official_releases_never_certify_a_write() {
    use fcd_testkit::stock;
    let tools = stock::available().and_then(|()| stock::client_python().map(drop));
    if !tools::tools_or_skip("generated_targets_on_the_official_releases_never_certify_a_write", tools) {
        return;
    }
    let dir = root().join("profiles/git-diff");
    let profile = Profile::load(&dir).unwrap();
    let (mut run, mut wrote, mut certified) = (0, 0, 0);
    for version in ["2025.9.25", "2026.1.14"] {
        let release = stock::git_release(version).unwrap();
        let request = Request { source: release.source.clone(), release: Some(format!("mcp-server-git-{version}")), ..Request::default() };
        let Registration::Registered(summary) = register(&profile, &request).unwrap() else { panic!("{version} registers") };
        let scratch = tempfile::tempdir().unwrap();
        let repo = stock::scratch_repo(scratch.path());
        let out = scratch.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let repo_text = repo.to_string_lossy().into_owned();
        let env: fcd_verify::verdict::Env =
            serde_json::from_value(serde_json::json!({"principal": "user:alice", "destination": format!("local:{repo_text}"), "config": {}})).unwrap();
        let contract: fcd_verify::verdict::Contract = serde_json::from_value(serde_json::json!({"principal": "user:alice", "allow": ["git:diff"],
            "destinations": [format!("local:{repo_text}")], "resources": [repo_text], "max_exposure": "private", "mutation": false, "write_scopes": []}))
        .unwrap();
        let targets = generated_targets(&out);
        let before = files_under(scratch.path());
        let calls: Vec<Value> = targets.iter().map(|t| serde_json::json!({"tool": "git_diff", "arguments": {"repo_path": repo_text, "target": t}})).collect();
        let command = [release.program.to_string_lossy().into_owned(), "--repository".into(), repo_text.clone()];
        let report = stock::drive(&serde_json::json!({"command": command, "calls": calls})).unwrap();
        assert_eq!(report["results"].as_array().map(Vec::len), Some(targets.len()), "{version}: every call answered");
        let after = files_under(scratch.path());
        let changed: Vec<&PathBuf> = after.iter().filter(|(p, bytes)| before.get(*p) != Some(*bytes)).map(|(p, _)| p).collect();
        for (i, target) in targets.iter().enumerate() {
            let marker = format!("m{i}.txt");
            let hit = changed.iter().any(|p| p.file_name().is_some_and(|n| n.to_string_lossy() == marker));
            let call: fcd_verify::verdict::Call = serde_json::from_value(calls[i].clone()).unwrap();
            let input = fcd_verify::verdict::CallInput::new(call, &dir);
            let d = decide(&check_call(&summary, &input).unwrap(), &env, &contract);
            run += 1;
            wrote += usize::from(hit);
            if d.decision == Verdict::Safe {
                certified += 1;
                assert!(!hit, "{version}: fcd certifies target {target:?}, which wrote {marker} when run");
            }
        }
        for path in &changed {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            let blamed = name.starts_with('m') && name.ends_with(".txt") && name[1..name.len() - 4].parse::<usize>().is_ok_and(|i| i < targets.len());
            assert!(blamed, "{version}: {} changed, and no generated call names it", path.display());
        }
    }
    eprintln!("git-diff generated targets: {run} calls run on the official releases; {wrote} wrote a file; {certified} certified, none of them wrote");
    // git's diff options take no abbreviation and no detached value: only `--output=PATH` writes, in
    // each of its three value forms, on the unguarded release.
    assert!(run > 1000 && wrote >= 3 && certified > 20, "the run covers too little: {run} calls, {wrote} writes, {certified} certificates");
}
