//! Insta snapshots of real outputs: the git-diff summaries, the facts and
//! canonical decisions of every regime fixture of every profile, and the registration
//! outcome of every mutation fixture. Read a snapshot before accepting it.

use std::path::{Path, PathBuf};

use fcd_compiler::profile::Profile;
use fcd_compiler::register::{Registration, Request, register, registration_json};
use fcd_model::summary::Summary;
use fcd_verify::canonical_calls::Canonical;
use fcd_verify::verdict::{check_call, decide};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Registers a fixture under the profile's canonical configuration.
fn registration(profile_id: &str, source: &Path, release: &str) -> Registration {
    let dir = root().join("profiles").join(profile_id);
    let profile = Profile::load(&dir).expect("the profile loads");
    let canonical = Canonical::load(&dir.join("canonical.json")).unwrap();
    let config = canonical.env.config.as_object().cloned();
    let request = Request { source: source.to_owned(), release: Some(release.into()), config, ..Request::default() };
    register(&profile, &request).unwrap()
}

fn registered(profile_id: &str, fixture: &str) -> Summary {
    match registration(profile_id, &root().join("fixtures").join(profile_id).join(fixture), "fixture") {
        Registration::Registered(s) => *s,
        Registration::Escalated(e) => panic!("{profile_id}/{fixture} escalated: {e}"),
    }
}

/// Every canonical call decided on a summary.
fn decisions(profile_id: &str, summary: &Summary) -> serde_json::Map<String, serde_json::Value> {
    let path = root().join("profiles").join(profile_id).join("canonical.json");
    let canonical = Canonical::load(&path).unwrap();
    let mut out = serde_json::Map::new();
    for name in canonical.calls.keys() {
        let call = canonical.call(name).unwrap();
        let input = fcd_verify::verdict::CallInput::new(call, &path);
        let checked = check_call(summary, &input).unwrap();
        out.insert(name.clone(), serde_json::to_value(decide(&checked, &canonical.env, &canonical.contract)).unwrap());
    }
    out
}

#[test]
fn git_diff_summaries() {
    for regime in ["unguarded", "guarded"] {
        insta::assert_json_snapshot!(format!("summary_{regime}"), registered("git-diff", regime));
    }
}

/// Every profile of the workspace (a directory of profiles/ with a profile.toml), by id.
fn profile_ids() -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(root().join("profiles"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("profile.toml").exists())
        .filter_map(|p| p.file_name().and_then(|n| n.to_str()).map(str::to_owned))
        .collect();
    ids.sort();
    ids
}

/// The facts and canonical decisions of every regime case a profile's
/// `tests/fixtures.toml` declares (its hand-written fixture of each shape).
#[test]
fn facts_and_canonical_decisions_of_every_regime() {
    for profile in &profile_ids() {
        let cases = fcd::profile_test::load_cases(&root().join("profiles").join(profile)).unwrap();
        let regimes: Vec<_> = cases.iter().filter(|c| c.file.ends_with("fixtures.toml") && c.regime().is_some()).collect();
        assert!(!regimes.is_empty(), "{profile} declares no regime fixture");
        for case in regimes {
            let tree = case.root().unwrap_or_else(|e| panic!("{e}"));
            let summary = match registration(profile, &tree.path, "fixture") {
                Registration::Registered(s) => *s,
                Registration::Escalated(e) => panic!("{profile}/{} escalated: {e}", case.name),
            };
            let snapshot = serde_json::json!({ "facts": summary.facts, "decisions": decisions(profile, &summary) });
            insta::assert_json_snapshot!(format!("regime@{profile}__{}", case.name), snapshot);
        }
    }
}

/// The registration outcome of every case declared in a profile's
/// `tests/mutations.toml` (a base fixture and its declared edits).
#[test]
fn every_mutation() {
    for profile in &profile_ids() {
        let cases = fcd::profile_test::load_cases(&root().join("profiles").join(profile)).unwrap();
        let mutations: Vec<_> = cases.iter().filter(|c| c.file.ends_with("mutations.toml")).collect();
        assert!(!mutations.is_empty(), "{profile} declares no mutation");
        for case in mutations {
            let tree = case.root().unwrap_or_else(|e| panic!("{e}"));
            insta::assert_json_snapshot!(format!("mutation@{profile}__{}", case.name), registration_json(&registration(profile, &tree.path, "mutation")));
        }
    }
}
