//! The truth of dbhub-execute-sql cases, established by running them.
//!
//! Every fixture, mutation and adversarial case of profiles/dbhub-execute-sql
//! is materialized and its `execute_sql` handler is run for real on each
//! canonical call (tests/support/run_dbhub.mjs: Node, better-sqlite3 on a
//! scratch database, the release's undefined helpers supplied as the profile
//! assumes them). Two properties must hold: fcd never certifies (decides
//! `safe`) a call whose run changed the database, and a case never declares a
//! call's truth `safe` when its run changed the database. A certificate the
//! run could not check (the handler did not load, or the call's SQL never
//! reached the database) fails too: that is a hole in the test, not a pass.
//! Needs node and `npm ci` in tests/support/node; without them the test says
//! so and skips (CI installs both).

mod support;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fcd::canonical::Canonical;
use fcd::certify::{Verdict, check_call, decide};
use fcd::profile::Profile;
use fcd::register::{Registration, Request, register};
use serde_json::Value;

/// A hostile case may hang its run; the driver bounds each step, this the whole.
const CASE_TIMEOUT: Duration = Duration::from_secs(20);

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn tools_present() -> Result<(), String> {
    let node = Command::new("node").arg("--version").output().map_err(|e| format!("node: {e}"))?;
    if !node.status.success() {
        return Err("node does not run".into());
    }
    for package in ["better-sqlite3", "typescript", "zod"] {
        if !root().join("tests/support/node/node_modules").join(package).is_dir() {
            return Err(format!("{package} is not installed (cd tests/support/node && npm ci)"));
        }
    }
    Ok(())
}

/// Runs the driver on `release`; `None` when it had to be killed.
fn run(release: &std::path::Path, scratch: &std::path::Path, built: &str, calls: &Value) -> Option<Value> {
    let (stdout, stderr) = (scratch.join("stdout"), scratch.join("stderr"));
    let mut child = Command::new("node")
        .arg(root().join("tests/support/run_dbhub.mjs"))
        .arg(release)
        .arg(scratch.join("work"))
        .arg(built)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .current_dir(scratch)
        .stdin(Stdio::piped())
        .stdout(std::fs::File::create(&stdout).unwrap())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .expect("node runs");
    use std::io::Write as _;
    child.stdin.take().unwrap().write_all(calls.to_string().as_bytes()).unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > CASE_TIMEOUT {
            child.kill().unwrap();
            child.wait().unwrap();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = std::fs::read_to_string(&stdout).unwrap();
    let last = out.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or_default();
    Some(
        serde_json::from_str(last)
            .unwrap_or_else(|e| panic!("{}: driver output ({e}): {out}{}", release.display(), std::fs::read_to_string(&stderr).unwrap_or_default())),
    )
}

#[test]
fn no_certificate_for_a_call_that_mutates_the_database_when_run() {
    if !support::tools_or_skip("no_certificate_for_a_call_that_mutates_the_database_when_run", tools_present()) {
        return;
    }
    let dir = root().join("profiles/dbhub-execute-sql");
    let profile = Profile::load(&dir).unwrap();
    let canonical = Canonical::load(&dir.join("canonical.json")).unwrap();
    let built = Value::from(profile.entry.as_ref().map(|e| e.built.iter().map(|(b, s)| vec![b.clone(), s.clone()]).collect::<Vec<_>>()).unwrap_or_default());
    let calls: serde_json::Map<String, Value> = canonical.calls.iter().map(|(n, c)| (n.clone(), Value::Object(c.arguments.clone()))).collect();
    let (mut cases_run, mut calls_run, mut mutated, mut certified, mut holes) = (0, 0, 0, 0, Vec::new());
    for case in fcd::profile_test::load_cases(&dir).unwrap() {
        let tree = case.root().unwrap();
        let scratch = tempfile::tempdir().unwrap();
        // The driver writes into its copy of the release (a TypeScript build, a node_modules link).
        let release = scratch.path().join("release");
        std::fs::create_dir(&release).unwrap();
        fcd_edits::materialize(&tree.path, &[], &release).unwrap();
        let report = run(&release, scratch.path(), &built.to_string(), &Value::Object(calls.clone()));
        cases_run += 1;
        let results = report.as_ref().and_then(|r| r.get("calls")).and_then(Value::as_object);
        let why_not_run = match &report {
            None => format!("the run was killed after {CASE_TIMEOUT:?}"),
            Some(r) => r.get("load_error").map(Value::to_string).unwrap_or_default(),
        };

        // The canonical calls are decided under the canonical configuration, registered as such.
        let config = canonical.env.config.as_object().cloned();
        let request = Request { source: tree.path.clone(), release: Some(case.name.clone()), config, ..Request::default() };
        let summary = match register(&profile, &request).unwrap() {
            Registration::Registered(s) => Some(s),
            Registration::Escalated(_) => None,
        };
        for name in canonical.calls.keys() {
            let result = results.and_then(|r| r.get(name));
            let changed = result.is_some_and(|r| r["mutated"] == Value::Bool(true));
            calls_run += usize::from(result.is_some());
            mutated += usize::from(changed);
            if changed && let Some(truth) = case.truth.get(name) {
                assert_ne!(
                    *truth,
                    Verdict::Safe,
                    "case {}: call {name} changes the database when run ({}), but its declared truth is safe",
                    case.name,
                    result.unwrap()["changes"]
                );
            }
            let Some(summary) = &summary else { continue };
            let call = canonical.call(name).unwrap();
            let input = fcd::certify::CallInput::new(call, &dir);
            if decide(&check_call(summary, &input).unwrap(), &canonical.env, &canonical.contract).decision != Verdict::Safe {
                continue;
            }
            certified += 1;
            assert!(!changed, "case {}: fcd certifies call {name}, which changes the database when run: {}", case.name, result.unwrap());
            // A certificate for a call whose SQL never reached the database was not checked by this run.
            if result.is_none_or(|r| r["executed"].as_array().is_none_or(|e| e.is_empty())) {
                holes.push(format!(
                    "case {}: call {name} is certified, but its run did not reach the database: {}",
                    case.name,
                    result.map_or(why_not_run.clone(), Value::to_string)
                ));
            }
        }
    }
    eprintln!(
        "dbhub-execute-sql cases run: {cases_run}; calls run: {calls_run}; calls that mutated the database: {mutated}; certificates checked against a run: {certified}"
    );
    assert!(holes.is_empty(), "certificates the runs could not check:\n{}", holes.join("\n"));
    assert!(
        cases_run > 50 && mutated > 10 && certified > 10,
        "the run covers too little: {cases_run} cases, {mutated} mutating calls, {certified} certificates"
    );
}
