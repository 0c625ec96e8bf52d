//! The truth of filesystem-move-file cases, established by running them.
//!
//! Every fixture, mutation and adversarial case of profiles/filesystem-move-file
//! is materialized and its move_file callback (or the dispatcher's tool-call
//! handler, asked for move_file) run for real by node, with the driver of
//! filesystem_runs.rs (tests/support/run_filesystem.mjs in its move_file mode:
//! stand-ins for the MCP SDK and zod) in a scratch directory standing for the
//! root, with srv/data as the one allowed directory: on the canonical calls
//! and on probes aimed at each way out at either end (a folder link inside
//! that leads out, a file link inside that leads out, a link inside into the
//! sibling srv/data2, a sibling end, the directory itself, an existing entry
//! replaced). After each call the test reads what changed anywhere in the
//! tree: a move out of or into the allowed directory changes something
//! outside it. Two properties must hold: fcd never certifies (decides
//! `safe`) a call that changed anything outside srv/data, or anything but the
//! entries its two ends name (the tree holds names spelled with U+212A
//! KELVIN SIGN, which 2026.8.31's walk takes for `K`), and a case never
//! declares a canonical call's truth `safe` when it changed something outside.
//!
//! The official releases of both regimes (2025.3.28, a string-prefix check;
//! 2025.11.25, the boundary check) are run as well, fetched with `npm pack`
//! and pinned by releases.toml: on the string-prefix release, canonical calls
//! B and C move data out of and into the directory through a sibling named
//! like it, and a link inside into that sibling moves data in, which is why
//! both ends inside is `unknown` there. Needs node (and npm for the
//! releases); without them the tests say so and skip.

use fcd_testkit::tools;

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::fcd_cli::copy_tree;
use crate::filesystem_runs::{changed_elsewhere, node_and_npm, npm_release, run_alike};
use fcd_compiler::profile::Profile;
use fcd_compiler::register::{Registration, Request, register};
use fcd_verify::canonical_calls::Canonical;
use fcd_verify::verdict::{Call, CallInput, Verdict, check_call, decide};
use serde_json::{Value, json};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn profile_dir() -> PathBuf {
    root().join("profiles/filesystem-move-file")
}

/// Calls beside the canonical ones, each aimed at one way out: (name, source, destination).
const PROBES: &[(&str, &str, &str)] = &[
    ("probe-destination-through-link-out", "/srv/data/report.txt", "/srv/data/link/stolen.txt"),
    ("probe-source-file-link-out", "/srv/data/passwd-link", "/srv/data/inbox/passwd"),
    ("probe-source-through-link-out", "/srv/data/link/passwd", "/srv/data/inbox/passwd"),
    ("probe-source-through-sibling-link", "/srv/data/sib-link/secret.txt", "/srv/data/inbox/secret.txt"),
    ("probe-destination-through-sibling-link", "/srv/data/report.txt", "/srv/data/sib-link/report.txt"),
    ("probe-destination-sibling", "/srv/data/report.txt", "/srv/data2/report.txt"),
    ("probe-source-sibling", "/srv/data-evil/payload.sh", "/srv/data/inbox/payload.sh"),
    ("probe-directory-itself", "/srv/data", "/srv/data2/whole"),
    ("probe-replace-existing", "/srv/data/report.txt", "/srv/data/inbox/report.txt"),
    ("probe-folder-moved", "/srv/data/inbox", "/srv/data/archive/inbox"),
    ("probe-deeper", "/srv/data/inbox/report.txt", "/srv/data/archive/report.txt"),
    // Names with no exact entry whose NFC twin exists (spelled with U+212A KELVIN SIGN).
    ("probe-kelvin-source", "/srv/data/Kelvin.txt", "/srv/data/archive/kelvin.txt"),
    ("probe-kelvin-destination", "/srv/data/report.txt", "/srv/data/KPI/report.txt"),
];

/// The canonical calls, then the probes (canonical call A aimed elsewhere).
fn calls_with_probes(canonical: &Canonical) -> Vec<(String, Call)> {
    let template = canonical.call("A").unwrap();
    let mut calls: Vec<(String, Call)> = canonical.calls.keys().map(|n| (n.clone(), canonical.call(n).unwrap())).collect();
    for (name, source, destination) in PROBES {
        let mut call = template.clone();
        call.arguments.insert("source".into(), json!(source));
        call.arguments.insert("destination".into(), json!(destination));
        calls.push((name.to_string(), call));
    }
    calls
}

/// Runs `arguments` (call name -> arguments) through a scratch copy of the
/// release at `source` (run_filesystem.mjs, move_file mode); the driver's report.
fn drive(source: &Path, arguments: &serde_json::Map<String, Value>, what: &str) -> Value {
    let scratch = tempfile::tempdir().unwrap();
    let release = scratch.path().join("release");
    let work = scratch.path().join("root");
    copy_tree(source, &release);
    std::fs::create_dir(&work).unwrap();
    let mut command = Command::new("node");
    command.arg(root().join("tests/support/run_filesystem.mjs")).arg(&release).arg(&work).arg("move_file");
    tools::drive(command, &Value::Object(arguments.clone()), what)
}

fn decided(summary: &fcd_model::summary::Summary, call: &Call, canonical: &Canonical) -> Verdict {
    let input = CallInput::new(call.clone(), profile_dir());
    decide(&check_call(summary, &input).unwrap(), &canonical.env, &canonical.contract).decision
}

#[test]
fn no_certificate_for_a_move_out_of_or_into_the_allowed_directory_when_run() {
    let node = Command::new("node").arg("--version").output().map_err(|e| format!("node: {e}")).map(|_| ());
    if !tools::tools_or_skip("no_certificate_for_a_move_out_of_or_into_the_allowed_directory_when_run", node) {
        return;
    }
    let dir = profile_dir();
    let profile = Profile::load(&dir).unwrap();
    let canonical = Canonical::load(&dir.join("canonical.json")).unwrap();
    let calls = calls_with_probes(&canonical);
    let (mut cases_run, mut left, mut certified, mut moved_inside, mut elsewhere) = (0, 0, 0, 0, 0);
    for case in fcd::profile_test::load_cases(&dir).unwrap() {
        let tree = case.root().unwrap();
        let config = canonical.env.config.as_object().cloned();
        let request = Request { source: tree.path.clone(), release: Some(case.name.clone()), config, ..Request::default() };
        let summary = match register(&profile, &request).unwrap() {
            Registration::Registered(s) => Some(s),
            Registration::Escalated(_) => None,
        };
        let run: Vec<&(String, Call)> = calls.iter().filter(|(n, _)| summary.is_some() || case.truth.contains_key(n)).collect();
        if run.is_empty() {
            continue;
        }
        let arguments: serde_json::Map<String, Value> = run.iter().map(|(n, c)| (n.clone(), Value::Object(c.arguments.clone()))).collect();
        let report = drive(&tree.path, &arguments, &case.name);
        cases_run += 1;
        let Some(results) = report.get("calls").and_then(Value::as_object) else {
            assert!(summary.is_none(), "case {} registers, but its release does not run: {report}", case.name);
            continue;
        };
        for (name, call) in run {
            let result = &results[name];
            let outside = result["outside"] == Value::Bool(true);
            left += usize::from(outside);
            let ends = ["source", "destination"].map(|end| call.arguments[end].as_str().unwrap_or_default());
            let astray = changed_elsewhere(result, &ends);
            elsewhere += usize::from(astray);
            if outside && let Some(truth) = case.truth.get(name) {
                assert_ne!(*truth, Verdict::Safe, "case {}: call {name} changes {} when run, but its declared truth is safe", case.name, result["changed"]);
            }
            let Some(summary) = &summary else { continue };
            if decided(summary, call, &canonical) == Verdict::Safe {
                certified += 1;
                assert!(!outside, "case {}: fcd certifies call {name}, which changes {} when run", case.name, result["changed"]);
                assert!(!astray, "case {}: fcd certifies call {name}, which changes {} when run, not the entries its ends name", case.name, result["changed"]);
                moved_inside += usize::from(result["error"].is_null() && result["changed"].as_array().is_some_and(|c| !c.is_empty()));
            }
        }
    }
    eprintln!(
        "filesystem-move-file cases run: {cases_run}; calls that changed something outside: {left}; calls that changed other entries than their ends: {elsewhere}; certificates checked against a run: {certified} ({moved_inside} of them moved something inside)"
    );
    assert!(
        cases_run > 20 && left > 20 && elsewhere > 0 && certified > 20 && moved_inside > 10,
        "the run covers too little: {cases_run} cases, {left} leaks, {elsewhere} astray, {certified} certificates, {moved_inside} moves"
    );
}

/// The official releases of both regimes, run for real: on the string-prefix
/// release (2025.3.28) canonical calls B and C move data out of and into the
/// directory through a sibling named like it (their `unsafe` is true), D and
/// E are refused before any change, and a link inside into that sibling moves
/// data in (why both ends inside is `unknown` there); on the boundary releases
/// (2025.11.25, and 2.0.1's anchored rename) A moves inside and every way out is refused. fcd certifies no
/// call that changes anything outside.
#[test]
fn the_official_releases_never_certify_a_move_across_the_boundary_when_run() {
    let releases = ["server-filesystem-2025.3.28-npm", "server-filesystem-2025.11.25-npm", "server-filesystem-2.0.1-npm"];
    let fetched = node_and_npm().and_then(|()| releases.iter().try_for_each(|id| npm_release(id).map(drop)));
    if !tools::tools_or_skip("the_official_releases_never_certify_a_move_across_the_boundary_when_run", fetched) {
        return;
    }
    let dir = profile_dir();
    let profile = Profile::load(&dir).unwrap();
    let canonical = Canonical::load(&dir.join("canonical.json")).unwrap();
    let calls = calls_with_probes(&canonical);
    for id in releases {
        let source = npm_release(id).unwrap();
        let request = Request { source: source.clone(), release: Some(id.into()), config: canonical.env.config.as_object().cloned(), ..Request::default() };
        let Registration::Registered(summary) = register(&profile, &request).unwrap() else { panic!("{id} does not register") };
        let arguments = calls.iter().map(|(n, c)| (n.clone(), Value::Object(c.arguments.clone()))).collect();
        let report = drive(&source, &arguments, id);
        let results = report["calls"].as_object().unwrap_or_else(|| panic!("{id} does not run: {report}"));
        let mut seen = std::collections::BTreeMap::new();
        for (name, call) in &calls {
            let d = decided(&summary, call, &canonical);
            let outside = results[name]["outside"] == Value::Bool(true);
            assert!(!(outside && d == Verdict::Safe), "{id}: fcd certifies {name}, which changes {} when run", results[name]["changed"]);
            seen.insert(name.as_str(), (d, outside, results[name].clone()));
        }
        let run = |name: &str| seen[name].clone();
        if id.contains("2025.3.28") {
            for name in ["B", "C", "probe-source-through-sibling-link", "probe-destination-through-sibling-link"] {
                let (d, outside, result) = run(name);
                assert!(d != Verdict::Safe && outside, "{id} {name}: {d:?} {result}");
            }
            for name in ["B", "C"] {
                assert_eq!(run(name).0, Verdict::Unsafe, "{id} {name}");
            }
            let (a, _, a_run) = run("A");
            assert!(a == Verdict::Unknown && a_run["error"].is_null(), "{id} A: {a:?} {a_run}");
        } else {
            let (a, a_outside, a_run) = run("A");
            assert!(a == Verdict::Safe && !a_outside && a_run["error"].is_null(), "{id} A: {a:?} {a_run}");
            for (name, (d, outside, result)) in &seen {
                assert!(!*outside, "{id}: {name} changes {} on the boundary release ({d:?})", result["changed"]);
            }
        }
        for name in ["D", "E"] {
            let (d, outside, result) = run(name);
            assert!(d == Verdict::Reject && !outside && result["changed"] == json!([]) && !result["error"].is_null(), "{id} {name}: {d:?} {result}");
        }
    }
}

/// The official 2026.8.31 (reviewed as shape unicode, escalated until the
/// frontend reads three of its call sites) and the hand-written fixture of
/// that shape, run on the canonical calls and the probes: both change the
/// same entries and refuse the same calls; nothing outside the directory
/// changes; an existing destination is refused, not replaced; a source
/// `Kelvin.txt` moves its Kelvin-sign twin, and a destination under `KPI`
/// lands in the twin folder (why `K` at either end is UNKNOWN in that shape).
#[test]
fn the_unicode_release_moves_a_kelvin_twin_and_never_replaces_when_run() {
    const UNICODE_RELEASE: &str = "server-filesystem-2026.8.31-npm";
    let fetched = node_and_npm().and_then(|()| npm_release(UNICODE_RELEASE).map(drop));
    if !tools::tools_or_skip("the_unicode_release_moves_a_kelvin_twin_and_never_replaces_when_run", fetched) {
        return;
    }
    let canonical = Canonical::load(&profile_dir().join("canonical.json")).unwrap();
    let calls = calls_with_probes(&canonical);
    let arguments: serde_json::Map<String, Value> = calls.iter().map(|(n, c)| (n.clone(), Value::Object(c.arguments.clone()))).collect();
    let official = run_alike(drive, UNICODE_RELEASE, &root().join("fixtures/filesystem-move-file/unicode"), &arguments);
    for (name, run) in &official {
        assert_eq!(run["outside"], json!(false), "{name}: {run}");
    }
    let a = &official["A"];
    assert!(a["error"].is_null() && a["changed"] == json!(["srv/data/archive/report.txt", "srv/data/inbox/report.txt"]), "A: {a}");
    let replace = &official["probe-replace-existing"];
    assert!(!replace["error"].is_null() && replace["changed"] == json!([]), "an existing destination: {replace}");
    let source = &official["probe-kelvin-source"];
    assert_eq!(source["changed"], json!(["srv/data/archive/kelvin.txt", "srv/data/\u{212a}elvin.txt"]), "{source}");
    let destination = &official["probe-kelvin-destination"];
    assert_eq!(destination["changed"], json!(["srv/data/report.txt", "srv/data/\u{212a}PI/report.txt"]), "{destination}");
}
