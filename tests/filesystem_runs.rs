//! The truth of filesystem-write-file cases, established by running them.
//!
//! Every fixture, mutation and adversarial case of
//! profiles/filesystem-write-file is materialized and its write_file
//! callback run for real by node (stand-ins for the MCP SDK and zod;
//! tests/support/run_filesystem.mjs) in a scratch directory standing for the
//! root, with srv/data as the one allowed directory: on the canonical calls
//! and on probes aimed at each way out (a link inside that leads out, a
//! sibling named like the directory, the directory itself, an existing file
//! replaced). After each call the test reads what changed. Two properties
//! must hold: fcd never certifies (decides `safe`) a call that changed
//! anything outside srv/data, and a case never declares a canonical call's
//! truth `safe` when it did. Needs node; without it the test says so and skips.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use fcd::canonical::Canonical;
use fcd::certify::{Verdict, check_call, decide};
use fcd::profile::Profile;
use fcd::register::{Registration, Request, register};
use serde_json::{Value, json};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Calls beside the canonical ones, each aimed at one way out.
const PROBES: &[(&str, &str)] = &[
    ("probe-link-out", "/srv/data/link/cron.d/job"),
    ("probe-sibling", "/srv/data2/x"),
    ("probe-directory", "/srv/data"),
    ("probe-existing", "/srv/data/existing.txt"),
    ("probe-deeper", "/srv/data/sub/new.txt"),
];

#[test]
fn no_certificate_for_a_call_that_writes_outside_the_allowed_directory_when_run() {
    let node = Command::new("node").arg("--version").output().map_err(|e| format!("node: {e}")).map(|_| ());
    if !support::tools_or_skip("no_certificate_for_a_call_that_writes_outside_the_allowed_directory_when_run", node) {
        return;
    }
    let dir = root().join("profiles/filesystem-write-file");
    let profile = Profile::load(&dir).unwrap();
    let canonical = Canonical::load(&dir.join("canonical.json")).unwrap();
    let driver = root().join("tests/support/run_filesystem.mjs");
    let template = canonical.call("A").unwrap();
    let mut calls: Vec<(String, fcd::certify::Call)> = canonical.calls.keys().map(|n| (n.clone(), canonical.call(n).unwrap())).collect();
    for (name, path) in PROBES {
        let mut call = template.clone();
        call.arguments.insert("path".into(), json!(path));
        calls.push((name.to_string(), call));
    }

    let (mut cases_run, mut left, mut certified, mut refused) = (0, 0, 0, 0);
    for case in fcd::profile_test::load_cases(&dir).unwrap() {
        let tree = case.root().unwrap();
        // The calls are decided under the canonical configuration, registered as such.
        let config = canonical.env.config.as_object().cloned();
        let request = Request { source: tree.path.clone(), release: Some(case.name.clone()), config, ..Request::default() };
        let summary = match register(&profile, &request).unwrap() {
            Registration::Registered(s) => Some(s),
            Registration::Escalated(_) => None,
        };
        let run: Vec<&(String, fcd::certify::Call)> = calls.iter().filter(|(n, _)| summary.is_some() || case.truth.contains_key(n)).collect();
        if run.is_empty() {
            continue;
        }
        let arguments: serde_json::Map<String, Value> = run.iter().map(|(n, c)| (n.clone(), Value::Object(c.arguments.clone()))).collect();
        let scratch = tempfile::tempdir().unwrap();
        let release = scratch.path().join("release");
        let work = scratch.path().join("root");
        copy_tree(&tree.path, &release);
        std::fs::create_dir(&work).unwrap();
        let mut child = Command::new("node")
            .arg(&driver)
            .arg(&release)
            .arg(&work)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("node runs");
        use std::io::Write as _;
        child.stdin.take().unwrap().write_all(Value::Object(arguments).to_string().as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        let last = String::from_utf8_lossy(&out.stdout).lines().last().unwrap_or_default().to_owned();
        let report: Value =
            serde_json::from_str(&last).unwrap_or_else(|e| panic!("case {}: driver output ({e}): {last}{}", case.name, String::from_utf8_lossy(&out.stderr)));
        cases_run += 1;
        let Some(results) = report.get("calls").and_then(Value::as_object) else {
            assert!(summary.is_none(), "case {} registers, but its release does not run: {report}", case.name);
            continue;
        };
        for (name, call) in run {
            let result = &results[name];
            let outside = result["outside"] == Value::Bool(true);
            left += usize::from(outside);
            if outside && let Some(truth) = case.truth.get(name) {
                assert_ne!(*truth, Verdict::Safe, "case {}: call {name} writes {} when run, but its declared truth is safe", case.name, result["changed"]);
            }
            let Some(summary) = &summary else { continue };
            let input = fcd::certify::CallInput::new(call.clone(), &dir);
            let d = decide(&check_call(summary, &input).unwrap(), &canonical.env, &canonical.contract);
            if d.decision == Verdict::Safe {
                certified += 1;
                assert!(!outside, "case {}: fcd certifies call {name}, which writes {} when run", case.name, result["changed"]);
                // A certified call the handler refuses (a link inside that leads out) writes nothing: sound.
                refused += usize::from(!result["error"].is_null());
            }
        }
    }
    eprintln!(
        "filesystem-write-file cases run: {cases_run}; calls that wrote outside: {left}; certificates checked against a run: {certified} ({refused} of them refused by the handler)"
    );
    // The unchecked mutations write through the link: the probes must see it.
    assert!(cases_run > 15 && left > 0 && certified > 10, "the run covers too little: {cases_run} cases, {left} leaks, {certified} certificates");
}
