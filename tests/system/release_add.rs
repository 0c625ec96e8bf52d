//! `fcd release add` end to end through the real binary: a git tag of a
//! repository built here from a hand-written fixture is fetched, verified,
//! registered, regenerated in a second process and admitted; a wrong digest,
//! an escalating tree and a bad SPEC are refused with their exit codes; and
//! the official mcp-server-git 2026.1.14 from PyPI is admitted against the
//! sha256 profiles/git-diff/releases.toml records (skipped, saying so,
//! without pip or the network).

use crate::fcd_cli;
use fcd_testkit::tools;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use fcd_cli::{fcd, root, s};
use sha2::{Digest, Sha256};

fn git(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=fcd test", "-c", "user.email=test@fcd.invalid", "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"])
        .args(args)
        .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// A git repository at `dir` whose one commit holds a copy of `tree`, tagged `tag`.
fn repository(tree: &Path, dir: &Path, tag: &str) {
    fcd_cli::copy_tree(tree, dir);
    git(dir, &["init", "--quiet"]);
    git(dir, &["add", "--all"]);
    git(dir, &["commit", "--quiet", "--message", "release"]);
    git(dir, &["tag", tag]);
}

/// The digest the README documents for `git:DIR@TAG`: sha256 of `git archive --format=tar --prefix=TAG/ TAG`.
fn documented_digest(dir: &Path, tag: &str) -> String {
    let tar = git(dir, &["archive", "--format=tar", &format!("--prefix={tag}/"), tag]);
    Sha256::digest(&tar).iter().map(|b| format!("{b:02x}")).collect()
}

fn epochs(registry: &Path) -> Vec<Value> {
    let r = fcd(&["registry", "list", "--db", s(registry), "--format", "json"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    r.json().as_array().unwrap().clone()
}

fn git_available() -> Result<(), String> {
    match Command::new("git").arg("--version").output() {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(format!("git --version: {}", String::from_utf8_lossy(&o.stderr))),
        Err(e) => Err(format!("git: {e}")),
    }
}

/// For `test`, when git runs: a scratch directory with a repository `name`
/// holding the fixture `fixture` of git-diff at `tag`, and the registry's path there.
fn tagged(test: &str, fixture: &str, name: &str, tag: &str) -> Option<(tempfile::TempDir, PathBuf, PathBuf)> {
    if !tools::tools_or_skip(test, git_available()) {
        return None;
    }
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join(name);
    repository(&root().join("fixtures/git-diff").join(fixture), &repo, tag);
    let registry = tmp.path().join("registry.sqlite");
    Some((tmp, repo, registry))
}

#[test]
fn a_git_tag_of_a_fixture_is_admitted_and_the_registry_verifies() {
    let Some((tmp, repo, registry)) = tagged("a_git_tag_of_a_fixture_is_admitted_and_the_registry_verifies", "guarded", "guarded-server", "v1.0") else {
        return;
    };
    let cache = tmp.path().join("cache");
    let digest = documented_digest(&repo, "v1.0");
    let spec = format!("git:{}@v1.0", repo.display());
    let args = ["release", "add", "--profile", "profiles/git-diff", "--registry", s(&registry), "--cache", s(&cache)];

    let r = fcd(&[&args[..], &["--sha256", &digest, "--format", "json", &spec]].concat());
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let v = r.json();
    assert_eq!(v["status"], "admitted");
    assert_eq!(v["profile"], "git-diff");
    assert_eq!(v["release"], "guarded-server-v1.0");
    assert_eq!(v["verified_by"], "--sha256");
    assert_eq!(v["artifact_digest"], format!("sha256:{digest}"));
    assert_eq!(v["regeneration"]["status"], "match");
    assert_ne!(v["regeneration"]["process"].as_u64(), Some(u64::from(std::process::id())));
    let epoch = v["epoch_id"].as_str().unwrap().to_owned();
    assert!(epoch.starts_with("sha256:"), "{epoch}");
    let listed = epochs(&registry);
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["epoch_id"], epoch.as_str());
    assert_eq!(listed[0]["summary_digest"], v["summary_digest"]);
    let verify = fcd(&["registry", "verify", "--db", s(&registry)]);
    assert_eq!(verify.code, 0, "{}{}", verify.stdout, verify.stderr);
    assert!(verify.stdout.contains("1 epochs, 0 problems"), "{}", verify.stdout);
    let shown = fcd(&["registry", "show", "--db", s(&registry), &epoch]);
    assert_eq!(shown.json()["manifest"]["artifact_digest"], format!("sha256:{digest}"));
    // The summary was only the second process's input: the registry holds it, the cache does not.
    assert!(walkdir::WalkDir::new(&cache).into_iter().filter_map(Result::ok).all(|e| !e.file_name().to_string_lossy().ends_with(".summary.json")));

    // Without a digest to check, nothing is registered unless the repository's tag is trusted.
    let r = fcd(&[&args[..], &[&spec]].concat());
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("no digest to verify tag v1.0") && r.stderr.contains("--trust-registry-digest"), "{}", r.stderr);
    // Trusted, in text: the same epoch (the same bytes, the same manifest) is printed.
    let r = fcd(&[&args[..], &["--trust-registry-digest", &spec]].concat());
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.starts_with(&format!("admitted epoch {epoch}\n")), "{}", r.stdout);
    assert!(r.stdout.contains("verified against the commit the tag names"), "{}", r.stdout);
    assert_eq!(epochs(&registry).len(), 1);
    let outcome = fcd_runtime::registry::Registry::open(&registry).unwrap().previous_outcome("git-diff", "guarded-server-v1.0").unwrap();
    assert_eq!(outcome.map(|o| o.status).as_deref(), Some("automatic"));
}

#[test]
fn a_wrong_sha256_exits_2_naming_both_digests_and_admits_nothing() {
    let Some((tmp, repo, registry)) = tagged("a_wrong_sha256_exits_2_naming_both_digests_and_admits_nothing", "unguarded", "server", "v2") else {
        return;
    };
    let wrong = "ab".repeat(32);
    let spec = format!("git:{}@v2", repo.display());
    let r =
        fcd(&["release", "add", "--profile", "profiles/git-diff", "--registry", s(&registry), "--cache", s(&tmp.path().join("c")), "--sha256", &wrong, &spec]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    let actual = documented_digest(&repo, "v2");
    assert!(r.stderr.contains("digest mismatch") && r.stderr.contains(&wrong) && r.stderr.contains(&actual), "{}", r.stderr);
    assert!(epochs(&registry).is_empty());
    assert_eq!(fcd_runtime::registry::Registry::open(&registry).unwrap().previous_outcome("git-diff", "server-v2").unwrap(), None, "nothing was registered");
    // A malformed digest is an input error too.
    let r = fcd(&["release", "add", "--profile", "profiles/git-diff", "--registry", s(&registry), "--sha256", "abc", &spec]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("--sha256") && r.stderr.contains("not a sha256"), "{}", r.stderr);
}

#[test]
fn an_escalating_tree_exits_3_records_the_outcome_and_writes_no_summary() {
    if !tools::tools_or_skip("an_escalating_tree_exits_3_records_the_outcome_and_writes_no_summary", git_available()) {
        return;
    }
    // A declared mutation of the hand-written fixture: the handler gained a filesystem call.
    let cases = fcd::profile_test::load_cases(&root().join("profiles/git-diff")).unwrap();
    let case = cases.iter().find(|c| c.name == "04_added_filesystem_call").expect("git-diff declares the mutation");
    let tree = case.root().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("mutated.git-work");
    repository(&tree.path, &repo, "v3");
    // A bare clone: DIR may be either kind of repository.
    let bare = tmp.path().join("mutated.git");
    let out = Command::new("git").args(["clone", "--quiet", "--bare"]).arg(&repo).arg(&bare).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let registry = tmp.path().join("registry.sqlite");
    let cache = tmp.path().join("cache");
    let spec = format!("git:{}@v3", bare.display());
    let r = fcd(&[
        "release",
        "add",
        "--profile",
        "profiles/git-diff",
        "--registry",
        s(&registry),
        "--cache",
        s(&cache),
        "--trust-registry-digest",
        "--format",
        "json",
        &spec,
    ]);
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    let v = r.json();
    assert_eq!(v["status"], "escalated");
    assert_eq!(v["release"], "mutated-v3");
    assert_eq!(v["reason"]["code"], "inventory_violation");
    assert!(v["reason"]["anchor"]["file"].as_str().is_some_and(|f| f.ends_with(".py")), "{v}");
    assert!(v["reason"]["anchor"]["line"].as_u64().is_some(), "{v}");
    assert!(epochs(&registry).is_empty());
    let outcome =
        fcd_runtime::registry::Registry::open(&registry).unwrap().previous_outcome("git-diff", "mutated-v3").unwrap().expect("the outcome is recorded");
    assert_eq!((outcome.status.as_str(), outcome.code.as_deref()), ("escalated", Some("inventory_violation")));
    assert!(walkdir::WalkDir::new(&cache).into_iter().filter_map(Result::ok).all(|e| !e.file_name().to_string_lossy().ends_with(".summary.json")));
    // In text: the code and its anchor.
    let r = fcd(&["release", "add", "--profile", "profiles/git-diff", "--registry", s(&registry), "--cache", s(&cache), "--trust-registry-digest", &spec]);
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.starts_with("escalated: inventory_violation\n") && r.stdout.contains("  at mcp_server_git/"), "{}", r.stdout);
}

#[test]
fn a_bad_spec_exits_2_with_a_clear_message() {
    let tmp = tempfile::tempdir().unwrap();
    let registry = tmp.path().join("registry.sqlite");
    let missing = tmp.path().join("no-such-repo");
    let not_a_repo = format!("git:{}@v1", missing.display());
    for (spec, says) in [
        ("mcp-server-git==2026.1.14", "is not a release: give pypi:NAME==VERSION, npm:NAME@VERSION or git:DIR@TAG"),
        ("pypi:mcp-server-git", "a PyPI release is pypi:NAME==VERSION"),
        ("pypi:mcp-server-git==latest", "`latest` is not a pinned version"),
        ("npm:@bytebase/dbhub", "an npm release is npm:NAME@VERSION"),
        ("npm:DBHub@0.22.3", "`DBHub` is not an npm package name"),
        ("git:/srv/repo", "a git release is git:DIR@TAG"),
        ("git:/srv/repo@-x", "is not a tag name"),
        (not_a_repo.as_str(), "not a git repository"),
    ] {
        let r = fcd(&["release", "add", "--profile", "profiles/git-diff", "--registry", s(&registry), "--cache", s(&tmp.path().join("c")), spec]);
        assert_eq!(r.code, 2, "{spec}: {}{}", r.stdout, r.stderr);
        assert!(r.stderr.contains(says), "{spec}: {}", r.stderr);
        assert!(r.stdout.is_empty(), "{spec}: {}", r.stdout);
    }
    // A tag the repository does not have.
    if git_available().is_ok() {
        let repo = tmp.path().join("repo");
        repository(&root().join("fixtures/git-diff/guarded"), &repo, "v1");
        let r = fcd(&["release", "add", "--profile", "profiles/git-diff", "--registry", s(&registry), &format!("git:{}@v9", repo.display())]);
        assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
        assert!(r.stderr.contains("no tag `v9`"), "{}", r.stderr);
    }
    // Both ways of choosing a digest at once is a usage error.
    let r = fcd(&[
        "release",
        "add",
        "--profile",
        "profiles/git-diff",
        "--registry",
        s(&registry),
        "--sha256",
        &"0".repeat(64),
        "--trust-registry-digest",
        "pypi:x==1",
    ]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
}

/// pip, and PyPI reachable through it.
fn pip_and_pypi() -> Result<(), String> {
    let out = Command::new("pip").args(["--version"]).output().map_err(|e| format!("pip: {e}"))?;
    if !out.status.success() {
        return Err("pip does not run".into());
    }
    let out =
        Command::new("pip").args(["index", "versions", "mcp-server-git", "--disable-pip-version-check"]).output().map_err(|e| format!("pip index: {e}"))?;
    if !out.status.success() || !String::from_utf8_lossy(&out.stdout).contains("2026.1.14") {
        return Err(format!("PyPI is not reachable through pip (pip index versions mcp-server-git: {})", String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(())
}

#[test]
fn the_official_pypi_release_is_admitted_against_releases_toml() {
    if !tools::tools_or_skip("the_official_pypi_release_is_admitted_against_releases_toml", pip_and_pypi()) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let registry = tmp.path().join("registry.sqlite");
    let r = fcd(&[
        "release",
        "add",
        "--profile",
        "profiles/git-diff",
        "--registry",
        s(&registry),
        "--cache",
        s(&tmp.path().join("cache")),
        "--format",
        "json",
        "pypi:mcp-server-git==2026.1.14",
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let v = r.json();
    assert_eq!(v["status"], "admitted");
    assert_eq!(v["release"], "mcp-server-git-2026.1.14", "the id releases.toml gives it");
    assert_eq!(v["verified_by"], "releases.toml");
    assert_eq!(v["artifact_digest"], "sha256:2cd74704c7b271ab1ed7be266120c20ae8ae7cc01e52dc6c549790402bad2b44");
    let epoch = v["epoch_id"].as_str().unwrap();
    assert_eq!(epochs(&registry)[0]["epoch_id"], epoch);
    let verify = fcd(&["registry", "verify", "--db", s(&registry)]);
    assert_eq!(verify.code, 0, "{}{}", verify.stdout, verify.stderr);
}
