//! Every profile under profiles/ passes its own `profile test` cases.
//! (That a profile's canonical.json is byte for byte the shared one, where
//! `../shared/canonical/` has one, is checked by `.ci/run`, which has
//! `../shared` beside the clone.)

use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn profile_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> =
        std::fs::read_dir(root().join("profiles")).unwrap().filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.join("profile.toml").exists()).collect();
    dirs.sort();
    dirs
}

#[test]
fn every_profile_passes_its_cases() {
    let dirs = profile_dirs();
    assert!(!dirs.is_empty());
    for dir in dirs {
        let report = fcd::profile_test::run(&dir).unwrap_or_else(|e| panic!("{e}"));
        assert!(report.passed(), "{}", report.to_text());
    }
}

#[test]
fn a_failing_case_is_reported_with_expected_and_actual() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("git-diff");
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    for f in ["profile.toml", "canonical.json"] {
        std::fs::copy(root().join("profiles/git-diff").join(f), dir.join(f)).unwrap();
    }
    let fixture = root().join("fixtures/git-diff/unguarded");
    std::fs::write(dir.join("tests/wrong.toml"), format!("[[case]]\nname = \"wrong\"\nsource = {:?}\nregime = \"guarded\"\n", fixture.display().to_string()))
        .unwrap();
    let report = fcd::profile_test::run(&dir).unwrap();
    assert!(!report.passed());
    let text = report.to_text();
    assert!(text.contains("canonical call B:") && text.contains("expected reject") && text.contains("got      unsafe"), "{text}");
}

/// `--case` runs the named cases (and the ones they compare rules with),
/// `--failures` shows only what failed, and every decision names the
/// author's rule by its place in profile.toml.
#[test]
fn one_case_runs_alone_failures_show_alone_and_decisions_name_the_authors_rule() {
    let dir = root().join("profiles/fetch");
    let report = fcd::profile_test::run_cases(&dir, &["10_open_without_redirects".to_owned()]).unwrap();
    let names: Vec<&str> = report.cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["open", "10_open_without_redirects"], "the case it compares rules with runs first");
    let text = report.text(false);
    assert!(text.contains("unsafe (rule 0 (profile.toml rules[2], line "), "{text}");
    assert!(text.contains("(profile.toml rules[3], line "), "{text}");
    assert!(report.text(true).lines().count() == 1, "nothing failed: only the counts");
    let err = fcd::profile_test::run_cases(&dir, &["hookd".to_owned()]).unwrap_err().to_string();
    assert!(err.contains("no case `hookd`; did you mean `hooked`?"), "{err}");

    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("git-diff");
    std::fs::create_dir_all(copy.join("tests")).unwrap();
    for f in ["profile.toml", "canonical.json"] {
        std::fs::copy(root().join("profiles/git-diff").join(f), copy.join(f)).unwrap();
    }
    let case = |name: &str, fixture: &str, regime: &str| {
        format!("[[case]]\nname = \"{name}\"\nsource = {:?}\nregime = \"{regime}\"\n", root().join("fixtures/git-diff").join(fixture).display().to_string())
    };
    std::fs::write(copy.join("tests/cases.toml"), case("right", "unguarded", "unguarded") + "\n" + &case("wrong", "unguarded", "guarded")).unwrap();
    let report = fcd::profile_test::run(&copy).unwrap();
    let failures = report.text(true);
    assert!(failures.contains("FAIL  wrong") && !failures.contains("ok    right"), "{failures}");
    assert!(report.text(false).contains("ok    right"));
}
