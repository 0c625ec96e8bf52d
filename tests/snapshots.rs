//! Insta snapshots of real outputs: both git-diff summaries, the canonical
//! decisions on each, and the registration outcome of every mutation fixture.
//! Read a snapshot before accepting it.

use std::path::{Path, PathBuf};

use fcd::canonical::Canonical;
use fcd::certify::{check_call, decide};
use fcd::profile::Profile;
use fcd::register::{Registration, Request, register, registration_json};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn profile() -> Profile {
    Profile::load(&root().join("profiles/git-diff")).expect("the git-diff profile loads")
}

fn registered(source: &Path) -> fcd::summary::Summary {
    let request = Request { source: source.to_owned(), release: Some("fixture".into()), ..Request::default() };
    match register(&profile(), &request).unwrap() {
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
