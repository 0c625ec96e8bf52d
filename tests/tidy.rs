//! Tidy rules as ordinary tests: module docs everywhere, no stray snapshots.

use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn files_with_ext(ext: &str) -> Vec<PathBuf> {
    walkdir::WalkDir::new(root())
        .into_iter()
        .filter_entry(|e| !matches!(e.file_name().to_str(), Some("target" | ".git" | ".cache")))
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == ext))
        .map(|e| e.into_path())
        .collect()
}

#[test]
fn every_rust_file_starts_with_a_module_doc() {
    for path in files_with_ext("rs") {
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("//!"), "{} does not start with a `//!` line saying why it exists", path.display());
    }
}

#[test]
fn every_snapshot_belongs_to_an_existing_test_file() {
    for snap in files_with_ext("snap") {
        let text = std::fs::read_to_string(&snap).unwrap();
        let source = text.lines().find_map(|l| l.strip_prefix("source: ")).unwrap_or_default();
        assert!(root().join(source).exists(), "{} names a missing test file `{source}`", snap.display());
        let test_file = std::fs::read_to_string(root().join(source)).unwrap();
        let name = snap.file_stem().unwrap().to_string_lossy();
        let stem = name.split_once("__").map_or(&*name, |(_, n)| n);
        let test_name = stem.split('@').next().unwrap();
        let base = test_name.trim_end_matches(|c: char| c != '_').trim_end_matches('_');
        assert!(test_file.contains(test_name) || test_file.contains(base), "{} is not produced by any test of {source}", snap.display());
    }
}

#[test]
fn no_pending_snapshots() {
    for ext in ["new", "pending-snap"] {
        let stray = files_with_ext(ext);
        assert!(stray.is_empty(), "unreviewed snapshots: {stray:?}");
    }
}

#[test]
fn frontends_know_no_profiles_digests_or_runtime() {
    // ARCHITECTURE.md: the frontends never read TOML, never sign and never touch the runtime.
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args(["tree", "--offline", "-p", "fcd-frontends", "-e", "normal", "--prefix", "none"])
        .current_dir(root())
        .output()
        .expect("cargo tree runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let tree = String::from_utf8_lossy(&out.stdout);
    for forbidden in ["toml ", "fcd v", "ed25519", "rusqlite", "serde_json "] {
        assert!(!tree.lines().any(|l| l.starts_with(forbidden)), "fcd-frontends depends on `{forbidden}`:\n{tree}");
    }
    assert!(tree.lines().any(|l| l.starts_with("tree-sitter ")), "the check reads the real tree:\n{tree}");
}
