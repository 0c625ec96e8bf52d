//! `fcd profile check-releases DIR`: a profile's releases checked with the
//! binary alone. The releases here are on disk (cases of the fetch
//! profile's own tests, and a fixture tree), so no registry is reached; the
//! same command downloads the PyPI, npm and git releases a profile lists
//! (`.ci/run` runs it on profiles/fetch).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::fcd_cli::{copy_tree, fcd, root, s};

/// The fetch profile in a scratch directory, its fixtures where its tests
/// expect them, with `releases` as its releases.toml.
fn profile(scratch: &Path, releases: &str) -> PathBuf {
    let dir = scratch.join("profiles/fetch");
    copy_tree(&root().join("profiles/fetch"), &dir);
    std::os::unix::fs::symlink(root().join("fixtures"), scratch.join("fixtures")).unwrap();
    std::fs::write(dir.join("releases.toml"), releases).unwrap();
    dir
}

fn release(id: &str, expect: &str, source: &str) -> String {
    format!("[[release]]\nid = \"{id}\"\n{expect}\n{source}\n\n")
}

#[test]
fn every_release_is_registered_regenerated_and_certified_as_expected() {
    let scratch = tempfile::tempdir().unwrap();
    let tree = root().join("fixtures/fetch/hooked");
    let releases = [
        release("open-case", "regime = \"open\"", "[release.case]\nname = \"open\""),
        release("open-text-case", "regime = \"open-text\"", "[release.case]\nname = \"open-text\""),
        release("hooked-tree", "regime = \"hooked\"", &format!("[release.dir]\npath = \"{}\"", s(&tree))),
        release(
            "a-named-decision",
            "expect = { A = \"safe\", B = \"reject\", C = \"reject\", D = \"unknown\", E = \"unknown\" }",
            "[release.case]\nname = \"hooked\"",
        ),
    ]
    .concat();
    let dir = profile(scratch.path(), &releases);
    let run = fcd(&["profile", "check-releases", s(&dir), "--format", "json"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let outcomes = run.json()["outcomes"].as_array().unwrap().clone();
    assert_eq!(outcomes.len(), 4);
    for o in &outcomes {
        assert_eq!((&o["ok"], &o["registration"]["status"], &o["regeneration"]["status"]), (&Value::Bool(true), &"registered".into(), &"match".into()), "{o}");
        assert!(o["epoch"].as_str().is_some_and(|e| e.starts_with("sha256:")), "admitted: {o}");
        // The second process is another process.
        assert_ne!(o["regeneration"]["pid"].as_u64(), Some(u64::from(std::process::id())));
    }
    let decisions = |i: usize| {
        outcomes[i]["decisions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| format!("{}={}", d["call"].as_str().unwrap(), d["decision"].as_str().unwrap()))
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(decisions(0), "A=unknown B=unsafe C=unsafe D=unknown E=unknown");
    assert_eq!(decisions(2), "A=safe B=reject C=reject D=unknown E=unknown");
    // The text table says the same, one row per release.
    let text = fcd(&["profile", "check-releases", s(&dir)]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert!(text.stdout.contains("4 releases: 4 automatic + 0 escalated; every outcome matches its expectation"), "{}", text.stdout);
    assert!(!text.stdout.contains("oracle"), "no oracle column without an oracle: {}", text.stdout);
}

#[test]
fn a_release_that_differs_from_its_expectation_fails_and_says_how() {
    let scratch = tempfile::tempdir().unwrap();
    let releases = [
        // The open shape reaches private addresses: it is not the hooked regime.
        release("mislabelled", "regime = \"hooked\"", "[release.case]\nname = \"open\""),
        // The hooked shape registers: an escalation was not what it gives.
        release("expected-to-escalate", "escalate = \"shape_mismatch\"", "[release.case]\nname = \"hooked\""),
    ]
    .concat();
    let dir = profile(scratch.path(), &releases);
    let run = fcd(&["profile", "check-releases", s(&dir)]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("call B: decision unsafe, canonical.json expects reject for regime hooked"), "{}", run.stdout);
    assert!(run.stdout.contains("expected escalation shape_mismatch, but the release was registered"), "{}", run.stdout);
    assert!(run.stdout.contains("2 DIFFER from their expectations"), "{}", run.stdout);
}

#[test]
fn a_bad_releases_toml_or_mirror_is_an_input_error_before_any_work() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = profile(scratch.path(), "[[release]]\nid = \"x\"\nregime = \"no-such-regime\"\n[release.case]\nname = \"open\"\n");
    let run = fcd(&["profile", "check-releases", s(&dir)]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("releases.toml") && run.stderr.contains("regime `no-such-regime`"), "{}", run.stderr);
    let run = fcd(&["profile", "check-releases", s(&dir), "--git-mirror", "no-equals-sign"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("OWNER/REPO=PATH"), "{}", run.stderr);
    let run = fcd(&["profile", "check-releases", s(&scratch.path().join("nowhere"))]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("nowhere"), "{}", run.stderr);
}
