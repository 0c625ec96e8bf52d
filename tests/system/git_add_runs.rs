//! The truth of git-add cases, established by running them.
//!
//! Every fixture, mutation and adversarial case of profiles/git-add is
//! materialized and its dispatcher run for real (GitPython and git, a stub in
//! place of the MCP SDK; tests/support/run_git_add.py) on the canonical calls
//! and on probes aimed at each way out of the contract: a file outside the
//! working tree, one behind a symbolic link to a directory outside, the
//! repository's own metadata, a nested repository, an ignored file. Each call
//! gets a fresh repository, and the test reads what the index holds after it.
//! Two properties must hold: fcd never certifies (decides `safe`) a call that
//! staged anything of these, and a case never declares a canonical call's
//! truth `safe` when it did. GitPython is whichever PYTHONPATH finds: run with
//! an old one (`pip install --target DIR gitpython==3.1.45`, then
//! `PYTHONPATH=DIR`) to see the index shape stage what lies outside. Needs
//! python3 with GitPython and git; without them the test says so and skips.

use fcd_testkit::tools;

use std::path::PathBuf;
use std::process::Command;

use fcd_compiler::profile::Profile;
use fcd_compiler::register::{Registration, Request, register};
use fcd_verify::canonical_calls::Canonical;
use fcd_verify::verdict::{Verdict, check_call, decide};
use serde_json::{Value, json};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Calls beside the canonical ones, each aimed at one way out (see the driver's layout).
const PROBES: &[(&str, &[&str])] = &[
    ("probe-metadata", &[".git/config"]),
    ("probe-linked", &["linked/secret.txt"]),
    ("probe-outside", &["../../outside/secret.txt"]),
    ("probe-ignored", &[".env"]),
    ("probe-nested", &["vendor"]),
    ("probe-dashes", &["-A", "--force", ".env"]),
    ("probe-plain", &["notes/todo.txt", "README.md"]),
];

#[test]
fn no_certificate_for_a_call_that_stages_outside_the_contract_when_run() {
    if !tools::tools_or_skip("no_certificate_for_a_call_that_stages_outside_the_contract_when_run", tools::git_and_gitpython()) {
        return;
    }
    let dir = root().join("profiles/git-add");
    let profile = Profile::load(&dir).unwrap();
    let canonical = Canonical::load(&dir.join("canonical.json")).unwrap();
    let driver = root().join("tests/support/run_git_add.py");
    let template = canonical.call("A").unwrap();
    let mut calls: Vec<(String, fcd_verify::verdict::Call)> = canonical.calls.keys().map(|n| (n.clone(), canonical.call(n).unwrap())).collect();
    for (name, files) in PROBES {
        let mut call = template.clone();
        call.arguments.insert("files".into(), json!(files));
        calls.push((name.to_string(), call));
    }

    let (mut cases_run, mut left, mut certified) = (0, 0, 0);
    for case in fcd::profile_test::load_cases(&dir).unwrap() {
        let tree = case.root().unwrap();
        let request = Request { source: tree.path.clone(), release: Some(case.name.clone()), ..Request::default() };
        let summary = match register(&profile, &request).unwrap() {
            Registration::Registered(s) => Some(s),
            Registration::Escalated(_) => None,
        };
        // An escalated case certifies nothing: only its declared truths need a run.
        let run: Vec<&(String, fcd_verify::verdict::Call)> = calls.iter().filter(|(n, _)| summary.is_some() || case.truth.contains_key(n)).collect();
        let arguments: serde_json::Map<String, Value> = run.iter().map(|(n, c)| (n.clone(), Value::Object(c.arguments.clone()))).collect();
        let scratch = tempfile::tempdir().unwrap();
        let mut command = Command::new("python3");
        command.arg(&driver).arg(&tree.path).arg(scratch.path()).current_dir(scratch.path());
        let report = tools::drive(command, &Value::Object(arguments), &format!("case {}", case.name));
        cases_run += 1;
        let Some(results) = report.get("calls").and_then(Value::as_object) else { continue };

        for (name, call) in run {
            let result = &results[name];
            let ways: Vec<&str> = ["outside", "metadata", "ignored"].into_iter().filter(|w| result[*w] == Value::Bool(true)).collect();
            left += usize::from(!ways.is_empty());
            if !ways.is_empty()
                && let Some(truth) = case.truth.get(name)
            {
                assert_ne!(*truth, Verdict::Safe, "case {}: call {name} stages {ways:?} when run, but its declared truth is safe", case.name);
            }
            let Some(summary) = &summary else { continue };
            let input = fcd_verify::verdict::CallInput::new(call.clone(), &dir);
            let d = decide(&check_call(summary, &input).unwrap(), &canonical.env, &canonical.contract);
            if d.decision == Verdict::Safe {
                certified += 1;
                assert!(ways.is_empty(), "case {}: fcd certifies call {name}, which stages {ways:?} when run: {}", case.name, result["staged"]);
            }
        }
    }
    eprintln!("git-add cases run: {cases_run}; calls that staged outside the contract: {left}; certificates checked against a run: {certified}");
    // Every GitPython stages an ignored file through the index: the probes must see it.
    assert!(cases_run > 25 && left > 0 && certified > 30, "the run covers too little: {cases_run} cases, {left} leaks, {certified} certificates");
}
