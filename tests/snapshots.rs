//! Insta snapshots of real outputs: the summaries of both regimes of each
//! profile, the canonical decisions on each, and the registration outcome of
//! every mutation fixture. Read a snapshot before accepting it.

use std::path::{Path, PathBuf};

use fcd::canonical::Canonical;
use fcd::certify::{check_call, decide};
use fcd::profile::Profile;
use fcd::register::{Registration, Request, register, registration_json};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn profile() -> Profile {
    load("git-diff")
}

fn load(id: &str) -> Profile {
    Profile::load(&root().join("profiles").join(id)).expect("the profile loads")
}

fn registered(source: &Path) -> fcd::summary::Summary {
    registered_with(&profile(), source)
}

fn registered_with(profile: &Profile, source: &Path) -> fcd::summary::Summary {
    let request = Request { source: source.to_owned(), release: Some("fixture".into()), ..Request::default() };
    match register(profile, &request).unwrap() {
        Registration::Registered(s) => *s,
        Registration::Escalated(e) => panic!("{} escalated: {e}", source.display()),
    }
}

#[test]
fn git_diff_summaries() {
    for regime in ["unguarded", "guarded"] {
        let summary = registered(&root().join("fixtures/git-diff").join(regime));
        insta::assert_json_snapshot!(format!("summary_{regime}"), summary);
    }
}

#[test]
fn git_diff_canonical_decisions() {
    let canonical_path = root().join("profiles/git-diff/canonical.json");
    let canonical = Canonical::load(&canonical_path).unwrap();
    for regime in ["unguarded", "guarded"] {
        let summary = registered(&root().join("fixtures/git-diff").join(regime));
        let mut decisions = serde_json::Map::new();
        for name in canonical.calls.keys() {
            let call = canonical.call(name).unwrap();
            check_call(&summary, &call, &canonical_path).unwrap();
            let d = decide(&summary, &call, &canonical.env, &canonical.contract);
            decisions.insert(name.clone(), serde_json::to_value(d).unwrap());
        }
        insta::assert_json_snapshot!(format!("decisions_{regime}"), decisions);
    }
}

#[test]
fn git_diff_mutations() {
    let profile = profile();
    insta::glob!("../fixtures/git-diff", "mutations/*", |dir| {
        let request = Request { source: dir.to_owned(), release: Some("mutation".into()), ..Request::default() };
        let outcome = register(&profile, &request).unwrap();
        insta::assert_json_snapshot!(registration_json(&outcome));
    });
}

#[test]
fn github_summaries_and_decisions() {
    let profile = load("github-create-repository");
    let canonical_path = root().join("profiles/github-create-repository/canonical.json");
    let canonical = Canonical::load(&canonical_path).unwrap();
    for regime in ["default-false", "default-true"] {
        let summary = registered_with(&profile, &root().join("fixtures/github-create-repository").join(regime));
        let mut decisions = serde_json::Map::new();
        for name in canonical.calls.keys() {
            let call = canonical.call(name).unwrap();
            check_call(&summary, &call, &canonical_path).unwrap();
            let d = decide(&summary, &call, &canonical.env, &canonical.contract);
            decisions.insert(name.clone(), serde_json::to_value(d).unwrap());
        }
        insta::assert_json_snapshot!(format!("github_facts_{regime}"), summary.facts);
        insta::assert_json_snapshot!(format!("github_decisions_{regime}"), decisions);
    }
}

#[test]
fn github_mutations() {
    let profile = load("github-create-repository");
    insta::glob!("../fixtures/github-create-repository", "mutations/*", |dir| {
        let request = Request { source: dir.to_owned(), release: Some("mutation".into()), ..Request::default() };
        let outcome = register(&profile, &request).unwrap();
        insta::assert_json_snapshot!(registration_json(&outcome));
    });
}

#[test]
fn azure_summaries_and_decisions() {
    let profile = load("azure-redis-create");
    let canonical_path = root().join("profiles/azure-redis-create/canonical.json");
    let canonical = Canonical::load(&canonical_path).unwrap();
    for regime in ["legacy-enabled", "wired-default-false"] {
        let summary = registered_with(&profile, &root().join("fixtures/azure-redis-create").join(regime));
        let mut decisions = serde_json::Map::new();
        for name in canonical.calls.keys() {
            let call = canonical.call(name).unwrap();
            check_call(&summary, &call, &canonical_path).unwrap();
            let d = decide(&summary, &call, &canonical.env, &canonical.contract);
            decisions.insert(name.clone(), serde_json::to_value(d).unwrap());
        }
        insta::assert_json_snapshot!(format!("azure_facts_{regime}"), summary.facts);
        insta::assert_json_snapshot!(format!("azure_decisions_{regime}"), decisions);
    }
}

#[test]
fn azure_mutations() {
    let profile = load("azure-redis-create");
    insta::glob!("../fixtures/azure-redis-create", "mutations/*", |dir| {
        let request = Request { source: dir.to_owned(), release: Some("mutation".into()), ..Request::default() };
        let outcome = register(&profile, &request).unwrap();
        insta::assert_json_snapshot!(registration_json(&outcome));
    });
}

#[test]
fn dbhub_facts_and_decisions() {
    let profile = load("dbhub-execute-sql");
    let canonical_path = root().join("profiles/dbhub-execute-sql/canonical.json");
    let canonical = Canonical::load(&canonical_path).unwrap();
    let config = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(config.path(), canonical.env.config.to_string()).unwrap();
    for fixture in ["bundle-assignment-allowed", "ts-assignment-refused"] {
        let request = Request {
            source: root().join("fixtures/dbhub-execute-sql").join(fixture),
            release: Some("fixture".into()),
            config: Some(config.path().to_owned()),
            ..Request::default()
        };
        let Registration::Registered(summary) = register(&profile, &request).unwrap() else { panic!("{fixture} escalated") };
        let mut decisions = serde_json::Map::new();
        for name in canonical.calls.keys() {
            let call = canonical.call(name).unwrap();
            check_call(&summary, &call, &canonical_path).unwrap();
            let d = decide(&summary, &call, &canonical.env, &canonical.contract);
            decisions.insert(name.clone(), serde_json::to_value(d).unwrap());
        }
        insta::assert_json_snapshot!(format!("dbhub_facts_{fixture}"), summary.facts);
        insta::assert_json_snapshot!(format!("dbhub_decisions_{fixture}"), decisions);
    }
}

#[test]
fn dbhub_mutations() {
    let profile = load("dbhub-execute-sql");
    insta::glob!("../fixtures/dbhub-execute-sql", "mutations/*", |dir| {
        let request = Request { source: dir.to_owned(), release: Some("mutation".into()), ..Request::default() };
        let outcome = register(&profile, &request).unwrap();
        insta::assert_json_snapshot!(registration_json(&outcome));
    });
}
