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
//! truth `safe` when it did; nor certifies a call that changed another entry
//! than the one its path names (the tree holds names spelled with U+212A
//! KELVIN SIGN, which 2026.8.31's walk takes for `K`). A registered callback
//! is run as registered; a dispatcher's tool-call request handler is asked
//! for write_file.
//!
//! The official 2025.3.28 release (regime prefix) is run as well, fetched
//! with `npm pack` and checked against releases.toml: canonical call B, a
//! sibling `srv/data2` of the allowed directory, is written outside it (the
//! truth of its `unsafe`), and a file link inside whose target lies outside
//! is written through (why a path inside is `unknown` there).
//!
//! A third test generates paths (the directory, its parent, a sibling that
//! starts like it, `.`, `..`, repeated separators, links inside that lead
//! out, Unicode, relative and `~`) and runs each through the official
//! releases of both regimes, fetched with npm and pinned by releases.toml.
//! Needs node (and npm for the releases); without them the tests say so and skip.

use fcd_testkit::tools;

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::fcd_cli::copy_tree;
use fcd_compiler::profile::Profile;
use fcd_compiler::register::{Registration, Request, register};
use fcd_verify::canonical_calls::Canonical;
use fcd_verify::verdict::{Verdict, check_call, decide};
use serde_json::{Value, json};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Calls beside the canonical ones, each aimed at one way out.
const PROBES: &[(&str, &str)] = &[
    ("probe-link-out", "/srv/data/link/cron.d/job"),
    ("probe-file-link-out", "/srv/data/passwd-link"),
    ("probe-sibling", "/srv/data2/x"),
    ("probe-directory", "/srv/data"),
    ("probe-existing", "/srv/data/existing.txt"),
    ("probe-deeper", "/srv/data/sub/new.txt"),
    // Names with no exact entry whose NFC twin exists (spelled with U+212A KELVIN SIGN).
    ("probe-kelvin-folder", "/srv/data/KPI/new.txt"),
    ("probe-kelvin-file", "/srv/data/Kelvin.txt"),
];

/// Whether a run changed an entry other than the ones `ends` name (an entry
/// itself or anything below it; paths as the driver reports them, relative
/// to the scratch root): the effect landed elsewhere than the call says.
pub(crate) fn changed_elsewhere(result: &Value, ends: &[&str]) -> bool {
    let named: Vec<String> = ends.iter().map(|e| e.trim_start_matches('/').trim_end_matches('/').to_owned()).collect();
    let changed = result["changed"].as_array().map(Vec::as_slice).unwrap_or_default();
    changed.iter().filter_map(Value::as_str).any(|c| !named.iter().any(|n| c == n || c.strip_prefix(n.as_str()).is_some_and(|rest| rest.starts_with('/'))))
}

/// The canonical calls, then the probes (canonical call A aimed elsewhere).
fn calls_with_probes(canonical: &Canonical) -> Vec<(String, fcd_verify::verdict::Call)> {
    let template = canonical.call("A").unwrap();
    let mut calls: Vec<(String, fcd_verify::verdict::Call)> = canonical.calls.keys().map(|n| (n.clone(), canonical.call(n).unwrap())).collect();
    for (name, path) in PROBES {
        let mut call = template.clone();
        call.arguments.insert("path".into(), json!(path));
        calls.push((name.to_string(), call));
    }
    calls
}

/// Runs `arguments` (call name -> arguments) through a scratch copy of the
/// release at `source` (tests/support/run_filesystem.mjs); the driver's report.
fn drive(source: &Path, arguments: &serde_json::Map<String, Value>, what: &str) -> Value {
    let scratch = tempfile::tempdir().unwrap();
    let release = scratch.path().join("release");
    let work = scratch.path().join("root");
    copy_tree(source, &release);
    std::fs::create_dir(&work).unwrap();
    let mut command = Command::new("node");
    command.arg(root().join("tests/support/run_filesystem.mjs")).arg(&release).arg(&work);
    tools::drive(command, &Value::Object(arguments.clone()), what)
}

#[test]
fn no_certificate_for_a_call_that_writes_outside_the_allowed_directory_when_run() {
    let node = Command::new("node").arg("--version").output().map_err(|e| format!("node: {e}")).map(|_| ());
    if !tools::tools_or_skip("no_certificate_for_a_call_that_writes_outside_the_allowed_directory_when_run", node) {
        return;
    }
    let dir = root().join("profiles/filesystem-write-file");
    let profile = Profile::load(&dir).unwrap();
    let canonical = Canonical::load(&dir.join("canonical.json")).unwrap();

    let calls = calls_with_probes(&canonical);
    let (mut cases_run, mut left, mut certified, mut refused, mut elsewhere) = (0, 0, 0, 0, 0);
    for case in fcd::profile_test::load_cases(&dir).unwrap() {
        let tree = case.root().unwrap();
        // The calls are decided under the canonical configuration, registered as such.
        let config = canonical.env.config.as_object().cloned();
        let request = Request { source: tree.path.clone(), release: Some(case.name.clone()), config, ..Request::default() };
        let summary = match register(&profile, &request).unwrap() {
            Registration::Registered(s) => Some(s),
            Registration::Escalated(_) => None,
        };
        let run: Vec<&(String, fcd_verify::verdict::Call)> = calls.iter().filter(|(n, _)| summary.is_some() || case.truth.contains_key(n)).collect();
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
            let astray = changed_elsewhere(result, &[call.arguments["path"].as_str().unwrap_or_default()]);
            elsewhere += usize::from(astray);
            if outside && let Some(truth) = case.truth.get(name) {
                assert_ne!(*truth, Verdict::Safe, "case {}: call {name} writes {} when run, but its declared truth is safe", case.name, result["changed"]);
            }
            let Some(summary) = &summary else { continue };
            let input = fcd_verify::verdict::CallInput::new(call.clone(), &dir);
            let d = decide(&check_call(summary, &input).unwrap(), &canonical.env, &canonical.contract);
            if d.decision == Verdict::Safe {
                certified += 1;
                assert!(!outside, "case {}: fcd certifies call {name}, which writes {} when run", case.name, result["changed"]);
                assert!(!astray, "case {}: fcd certifies call {name}, which changes {} when run, not the file its path names", case.name, result["changed"]);
                // A certified call the handler refuses (a link inside that leads out) writes nothing: sound.
                refused += usize::from(!result["error"].is_null());
            }
        }
    }
    eprintln!(
        "filesystem-write-file cases run: {cases_run}; calls that wrote outside: {left}; calls that changed another entry than the one named: {elsewhere}; certificates checked against a run: {certified} ({refused} of them refused by the handler)"
    );
    // The unchecked mutations write through the link, the walked shape into a Kelvin-sign twin: the probes must see both.
    assert!(
        cases_run > 15 && left > 0 && elsewhere > 0 && certified > 10,
        "the run covers too little: {cases_run} cases, {left} leaks, {elsewhere} astray, {certified} certificates"
    );
}

/// Whether node and npm run here (the official releases are fetched with npm); why not, if not.
pub(crate) fn node_and_npm() -> Result<(), String> {
    for tool in ["node", "npm"] {
        Command::new(tool).arg("--version").output().map_err(|e| format!("{tool}: {e}"))?;
    }
    Ok(())
}

/// The official 2025.3.28 tarball (the prefix regime).
fn prefix_release() -> Result<PathBuf, String> {
    npm_release(PREFIX_RELEASE)
}

/// An official tarball releases.toml lists (`id`, its npm version and
/// sha256), fetched with `npm pack` into target/stock (kept between runs),
/// its digest checked, unpacked.
pub(crate) fn npm_release(id: &str) -> Result<PathBuf, String> {
    let text = std::fs::read_to_string(root().join("profiles/filesystem-write-file/releases.toml")).map_err(|e| e.to_string())?;
    let value: toml::Value = toml::from_str(&text).map_err(|e| e.to_string())?;
    let entry = value["release"]
        .as_array()
        .and_then(|rs| rs.iter().find(|r| r.get("id").and_then(|i| i.as_str()) == Some(id)))
        .ok_or_else(|| format!("releases.toml lists no {id}"))?;
    let pinned = entry["npm"]["sha256"].as_str().map(str::to_owned).ok_or_else(|| format!("releases.toml pins no sha256 for {id}"))?;
    let version = entry["npm"]["version"].as_str().ok_or_else(|| format!("releases.toml names no npm version for {id}"))?;
    let dir = root().join("target/stock").join(id);
    let tarball = dir.join(format!("modelcontextprotocol-server-filesystem-{version}.tgz"));
    if !tarball.is_file() {
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let out = Command::new("npm")
            .args(["pack", &format!("@modelcontextprotocol/server-filesystem@{version}"), "--silent", "--pack-destination"])
            .arg(&dir)
            .output()
            .map_err(|e| format!("npm: {e}"))?;
        if !out.status.success() {
            return Err(format!("npm pack failed: {}", String::from_utf8_lossy(&out.stderr)));
        }
    }
    let digest = fcd_model::canon::sha256(&std::fs::read(&tarball).map_err(|e| e.to_string())?);
    if digest != format!("sha256:{pinned}") {
        return Err(format!("{} is {digest}, releases.toml pins sha256:{pinned}", tarball.display()));
    }
    let unpacked = dir.join("unpacked");
    if !unpacked.join("package/package.json").is_file() {
        let _ = std::fs::remove_dir_all(&unpacked);
        std::fs::create_dir_all(&unpacked).map_err(|e| e.to_string())?;
        let status = Command::new("tar").arg("xzf").arg(&tarball).arg("-C").arg(&unpacked).status().map_err(|e| format!("tar: {e}"))?;
        if !status.success() {
            return Err("tar xzf failed".into());
        }
    }
    Ok(unpacked.join("package"))
}

const PREFIX_RELEASE: &str = "server-filesystem-2025.3.28-npm";

/// The official release of the prefix regime, run for real: canonical call
/// B (a sibling of the allowed directory whose name starts like it) is
/// written outside the directory, so `unsafe` is its truth; C is refused
/// before any write; a file link inside whose target lies outside is
/// written through (why A, inside, is `unknown`); fcd certifies none of them.
#[test]
fn the_string_prefix_release_writes_outside_the_allowed_directory_when_run() {
    let tools = node_and_npm();
    if !tools::tools_or_skip("the_string_prefix_release_writes_outside_the_allowed_directory_when_run", tools.and_then(|()| prefix_release().map(drop))) {
        return;
    }
    let source = prefix_release().unwrap();
    let dir = root().join("profiles/filesystem-write-file");
    let profile = Profile::load(&dir).unwrap();
    let canonical = Canonical::load(&dir.join("canonical.json")).unwrap();
    let request =
        Request { source: source.clone(), release: Some(PREFIX_RELEASE.into()), config: canonical.env.config.as_object().cloned(), ..Request::default() };
    let Registration::Registered(summary) = register(&profile, &request).unwrap() else { panic!("{PREFIX_RELEASE} does not register") };
    let calls = calls_with_probes(&canonical);
    let arguments = calls.iter().map(|(n, c)| (n.clone(), Value::Object(c.arguments.clone()))).collect();
    let report = drive(&source, &arguments, PREFIX_RELEASE);
    let results = report["calls"].as_object().unwrap_or_else(|| panic!("{PREFIX_RELEASE} does not run: {report}"));
    let mut decided = std::collections::BTreeMap::new();
    for (name, call) in &calls {
        let input = fcd_verify::verdict::CallInput::new(call.clone(), &dir);
        let d = decide(&check_call(&summary, &input).unwrap(), &canonical.env, &canonical.contract);
        let outside = results[name]["outside"] == Value::Bool(true);
        assert!(!(outside && d.decision == Verdict::Safe), "fcd certifies {name}, which writes {} when run", results[name]["changed"]);
        decided.insert(name.as_str(), (d.decision, outside, results[name].clone()));
    }
    let (b, b_outside, b_run) = &decided["B"];
    assert!(*b == Verdict::Unsafe && *b_outside && b_run["changed"] == json!(["srv/data2/notes.txt"]), "B: {b:?} {b_run}");
    let (c, c_outside, c_run) = &decided["C"];
    assert!(*c == Verdict::Reject && !*c_outside && c_run["changed"] == json!([]) && !c_run["error"].is_null(), "C: {c:?} {c_run}");
    let (a, _, a_run) = &decided["A"];
    assert!(*a == Verdict::Unknown && a_run["changed"] == json!(["srv/data/notes.txt"]), "A: {a:?} {a_run}");
    let (link, link_outside, link_run) = &decided["probe-file-link-out"];
    assert!(*link == Verdict::Unknown && *link_outside && link_run["changed"] == json!(["etc/passwd"]), "a file link inside: {link:?} {link_run}");
}

/// The official 2026.8.31 (reviewed as shape unicode, escalated until the
/// frontend reads three of its call sites) and the hand-written fixture of
/// that shape, run on the canonical calls and the probes: both change the
/// same entries and refuse the same calls; nothing is written outside the
/// allowed directory; a new file under `KPI` lands in the existing folder
/// spelled with the Kelvin sign, and `Kelvin.txt` overwrites its twin (why a
/// path with `K` is UNKNOWN in that shape), while A writes only the file it names.
#[test]
fn the_unicode_release_walks_a_k_to_its_kelvin_twin_when_run() {
    const UNICODE_RELEASE: &str = "server-filesystem-2026.8.31-npm";
    let fetched = node_and_npm().and_then(|()| npm_release(UNICODE_RELEASE).map(drop));
    if !tools::tools_or_skip("the_unicode_release_walks_a_k_to_its_kelvin_twin_when_run", fetched) {
        return;
    }
    let dir = root().join("profiles/filesystem-write-file");
    let canonical = Canonical::load(&dir.join("canonical.json")).unwrap();
    let calls = calls_with_probes(&canonical);
    let arguments: serde_json::Map<String, Value> = calls.iter().map(|(n, c)| (n.clone(), Value::Object(c.arguments.clone()))).collect();
    let official = run_alike(drive, UNICODE_RELEASE, &root().join("fixtures/filesystem-write-file/unicode"), &arguments);
    for (name, run) in &official {
        assert_eq!(run["outside"], json!(false), "{name}: {run}");
    }
    assert!(official["A"]["changed"] == json!(["srv/data/notes.txt"]) && official["A"]["error"].is_null(), "A: {}", official["A"]);
    assert_eq!(official["probe-kelvin-folder"]["changed"], json!(["srv/data/\u{212a}PI/new.txt"]), "{}", official["probe-kelvin-folder"]);
    assert_eq!(official["probe-kelvin-file"]["changed"], json!(["srv/data/\u{212a}elvin.txt"]), "{}", official["probe-kelvin-file"]);
}

/// The official 2.0.1 (shape factory: a server per connection, the allowed
/// list in the factory, the write anchored by chdir) and its hand-written
/// stand-in, run on the canonical calls and the probes: both change the same
/// entries and refuse the same calls; nothing is written outside the allowed
/// directory; an existing file is replaced in place, and a `K` is walked to
/// its Kelvin-sign twin (why a path with `K` is UNKNOWN in this shape too).
#[test]
fn the_factory_release_runs_like_its_fixture() {
    const FACTORY_RELEASE: &str = "server-filesystem-2.0.1-npm";
    let fetched = node_and_npm().and_then(|()| npm_release(FACTORY_RELEASE).map(drop));
    if !tools::tools_or_skip("the_factory_release_runs_like_its_fixture", fetched) {
        return;
    }
    let dir = root().join("profiles/filesystem-write-file");
    let canonical = Canonical::load(&dir.join("canonical.json")).unwrap();
    let calls = calls_with_probes(&canonical);
    let arguments: serde_json::Map<String, Value> = calls.iter().map(|(n, c)| (n.clone(), Value::Object(c.arguments.clone()))).collect();
    let official = run_alike(drive, FACTORY_RELEASE, &root().join("fixtures/filesystem-write-file/factory"), &arguments);
    for (name, run) in &official {
        assert_eq!(run["outside"], json!(false), "{name}: {run}");
    }
    assert!(official["A"]["changed"] == json!(["srv/data/notes.txt"]) && official["A"]["error"].is_null(), "A: {}", official["A"]);
    assert_eq!(official["probe-existing"]["changed"], json!(["srv/data/existing.txt"]), "{}", official["probe-existing"]);
    assert_eq!(official["probe-kelvin-file"]["changed"], json!(["srv/data/\u{212a}elvin.txt"]), "{}", official["probe-kelvin-file"]);
}

/// Runs `arguments` with `drive` through the official release `id` and
/// through `fixture`, its hand-written stand-in: every call must change the
/// same entries in both and be refused by both or by neither. The official
/// release's results, by call.
pub(crate) fn run_alike(
    drive: impl Fn(&Path, &serde_json::Map<String, Value>, &str) -> Value,
    id: &str,
    fixture: &Path,
    arguments: &serde_json::Map<String, Value>,
) -> serde_json::Map<String, Value> {
    let official = drive(&npm_release(id).unwrap(), arguments, id);
    let stand_in = drive(fixture, arguments, "the fixture");
    let (official, stand_in) = (official["calls"].as_object().unwrap(), stand_in["calls"].as_object().unwrap());
    for name in arguments.keys() {
        let (o, f) = (&official[name], &stand_in[name]);
        assert!(o["changed"] == f["changed"] && o["error"].is_null() == f["error"].is_null(), "{name}: the official release {o}, the fixture {f}");
    }
    official.clone()
}

/// Paths generated from what a path check can get wrong: the allowed
/// directory, its parent, a sibling that starts like it, a directory
/// outside; `.`, `..`, empty and repeated separators, a link inside that
/// leads out (a directory and a file), Unicode, spaces, `~`; absolute and
/// relative.
fn generated_paths() -> Vec<String> {
    let dirs = ["/srv/data", "/srv/data2", "/srv/dat", "/srv", "/srv/data/sub", "/srv/data/link", "/etc", "/srv/data/..", "/srv/data/.", "srv/data", "~", ""];
    let names = ["new.txt", "existing.txt", "passwd-link", "cron.d/job", "..", ".", "../data2/x", "sub/../../x", "\u{fc}n\u{ef}.txt", "a b.txt", "x/", "..."];
    let mut paths = Vec::new();
    for dir in dirs {
        for separator in ["/", "//", "/./"] {
            for name in names {
                paths.push(format!("{dir}{separator}{name}"));
            }
        }
    }
    paths.sort();
    paths.dedup();
    paths
}

/// Issue 26, point 6: generated paths run through the official releases of
/// both regimes (2025.3.28, a string-prefix check; 2025.11.25, 2026.7.10 and
/// 2.0.1 (the factory: its entry started as the main module), the boundary check), fetched with npm, each decided by fcd on the
/// release's own summary: no call fcd certifies writes outside the allowed
/// directory when run.
#[test]
fn generated_paths_on_the_official_releases_never_certify_a_write_outside() {
    let tools = node_and_npm();
    let releases = ["server-filesystem-2025.3.28-npm", "server-filesystem-2025.11.25-npm", "server-filesystem-2026.7.10-npm", "server-filesystem-2.0.1-npm"];
    let fetched = tools.and_then(|()| releases.iter().try_for_each(|id| npm_release(id).map(drop)));
    if !tools::tools_or_skip("generated_paths_on_the_official_releases_never_certify_a_write_outside", fetched) {
        return;
    }
    let dir = root().join("profiles/filesystem-write-file");
    let profile = Profile::load(&dir).unwrap();
    let canonical = Canonical::load(&dir.join("canonical.json")).unwrap();
    let template = canonical.call("A").unwrap();
    let paths = generated_paths();
    let (mut run, mut outside, mut certified) = (0, 0, 0);
    for id in releases {
        let source = npm_release(id).unwrap();
        let request = Request { source: source.clone(), release: Some(id.into()), config: canonical.env.config.as_object().cloned(), ..Request::default() };
        let Registration::Registered(summary) = register(&profile, &request).unwrap() else { panic!("{id} does not register") };
        let calls: Vec<(String, fcd_verify::verdict::Call)> = paths
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let mut call = template.clone();
                call.arguments.insert("path".into(), json!(p));
                (format!("g{i}"), call)
            })
            .collect();
        let arguments = calls.iter().map(|(n, c)| (n.clone(), Value::Object(c.arguments.clone()))).collect();
        let report = drive(&source, &arguments, id);
        let results = report["calls"].as_object().unwrap_or_else(|| panic!("{id} does not run: {report}"));
        for (name, call) in &calls {
            let left = results[name]["outside"] == Value::Bool(true);
            let input = fcd_verify::verdict::CallInput::new(call.clone(), &dir);
            let d = decide(&check_call(&summary, &input).unwrap(), &canonical.env, &canonical.contract);
            run += 1;
            outside += usize::from(left);
            if d.decision == Verdict::Safe {
                certified += 1;
                assert!(!left, "{id}: fcd certifies {:?}, which writes {} when run", call.arguments["path"], results[name]["changed"]);
            }
        }
    }
    eprintln!(
        "filesystem-write-file generated paths: {run} calls run on the official releases; {outside} wrote outside the allowed directory; {certified} certified, none of them outside"
    );
    assert!(run > 600 && outside > 5 && certified > 20, "the run covers too little: {run} calls, {outside} outside, {certified} certificates");
}
