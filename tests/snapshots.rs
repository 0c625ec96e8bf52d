//! Insta snapshots of real outputs: the git-diff summaries, the facts and
//! canonical decisions of both regimes of every profile, and the registration
//! outcome of every mutation fixture. Read a snapshot before accepting it.

use std::path::{Path, PathBuf};

use fcd::canonical::Canonical;
use fcd::certify::{check_call, decide};
use fcd::profile::Profile;
use fcd::register::{Registration, Request, register, registration_json};
use fcd::summary::Summary;

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
        let input = fcd::certify::CallInput::new(call, &path);
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

/// (profile, fixture, facts snapshot, decisions snapshot) of every regime fixture.
const REGIMES: &[(&str, &str, Option<&str>, &str)] = &[
    ("git-diff", "unguarded", None, "decisions_unguarded"),
    ("git-diff", "guarded", None, "decisions_guarded"),
    ("github-create-repository", "default-false", Some("github_facts_default-false"), "github_decisions_default-false"),
    ("github-create-repository", "default-true", Some("github_facts_default-true"), "github_decisions_default-true"),
    ("github-create-gist", "secret-default", Some("gist_facts_secret-default"), "gist_decisions_secret-default"),
    ("azure-redis-create", "legacy-enabled", Some("azure_facts_legacy-enabled"), "azure_decisions_legacy-enabled"),
    ("azure-redis-create", "wired-default-false", Some("azure_facts_wired-default-false"), "azure_decisions_wired-default-false"),
    ("dbhub-execute-sql", "bundle-assignment-allowed", Some("dbhub_facts_bundle-assignment-allowed"), "dbhub_decisions_bundle-assignment-allowed"),
    ("dbhub-execute-sql", "ts-assignment-refused", Some("dbhub_facts_ts-assignment-refused"), "dbhub_decisions_ts-assignment-refused"),
];

#[test]
fn facts_and_canonical_decisions_of_every_regime() {
    for (profile, fixture, facts, decided) in REGIMES {
        let summary = registered(profile, fixture);
        if let Some(name) = facts {
            insta::assert_json_snapshot!(name.to_string(), summary.facts);
        }
        insta::assert_json_snapshot!(decided.to_string(), decisions(profile, &summary));
    }
}

/// The registration outcome of every case declared in a profile's
/// `tests/mutations.toml` (a base fixture and its declared edits); every
/// profile under profiles/ must declare some.
#[test]
fn every_mutation() {
    let mut profiles: Vec<String> = std::fs::read_dir(root().join("profiles"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("profile.toml").exists())
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    profiles.sort();
    assert!(profiles.len() >= 4, "the profiles directory holds the reviewed profiles: {profiles:?}");
    for profile in &profiles {
        let cases = fcd::profile_test::load_cases(&root().join("profiles").join(profile)).unwrap();
        let mutations: Vec<_> = cases.iter().filter(|c| c.file.ends_with("mutations.toml")).collect();
        assert!(!mutations.is_empty(), "{profile} declares no mutation");
        for case in mutations {
            let tree = case.root().unwrap_or_else(|e| panic!("{e}"));
            insta::assert_json_snapshot!(format!("mutation@{profile}__{}", case.name), registration_json(&registration(profile, &tree.path, "mutation")));
        }
    }
}
