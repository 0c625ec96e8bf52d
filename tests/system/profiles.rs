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
