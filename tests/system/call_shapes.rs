//! Several reviewed shapes of calls to one callee, told apart by their
//! arguments (`matching`) and made to account for every call (`exhaustive`),
//! with splat arguments and element tests, through the public pipeline:
//! profile text in, registration and decisions out.

use fcd_compiler::profile::Profile;
use fcd_compiler::register::{Registration, Request, register};
use fcd_verify::verdict::{CallInput, Contract, Env, check_call, decide};

/// A stand-in for a staging tool: `stage` hands its `paths` to git, all of
/// them at once for `["."]`, else after a `--` separator.
const PROFILE: &str = r#"
[profile]
id = "stage"
version = 1
language = "python"
tool = "stage"

[envelope]
structure = "one stage function whose calls of repo.git.add are each one of the reviewed shapes"
arguments = "paths, an array of strings"
effects = "git:add of the repository (mutation)"
assumptions = ["GitPython passes positional strings to git unchanged", "git reads arguments after `--` as paths"]
unknown = "a leading-dash path without the separator"
completeness = "the effect ends at the git process"

[arguments]
paths = { type = "array", required = true }

[source]
files = ["app.py"]

[regions.handler]
function = "stage"

[inventory.handler]
callees = ["git.Repo.git.add"]

[facts.everything]
kind = "call"
region = "handler"
callee = "git.Repo.git.add"
args = ["str:."]
matching = true
exhaustive = true

[facts.separated]
kind = "call"
region = "handler"
callee = "git.Repo.git.add"
args = ["str:--", "*param:paths"]
matching = true
exhaustive = true

[facts.bare]
kind = "call"
region = "handler"
callee = "git.Repo.git.add"
args = ["*param:paths"]
matching = true
exhaustive = true

[[rules]]
unless = ["bare"]
when = { arg = "paths", every-element = { type = "string" } }
then = { effect = { op = "git:add", resource = "/srv/repo", mutation = true } }

[[rules]]
when = { arg = "paths", any-element = { starts-with = "-" } }
then = { unknown = "a git option" }

[[rules]]
when = { arg = "paths", every-element = { type = "string" } }
then = { effect = { op = "git:add", resource = "/srv/repo", mutation = true } }
"#;

const SEPARATED: &str = "import git\n\ndef stage(repo: git.Repo, paths: list[str]) -> str:\n    if paths == ['.']:\n        repo.git.add('.')\n    else:\n        repo.git.add('--', *paths)\n    return 'ok'\n";

/// Registers `source` (the file `app.py`) under the profile.
fn registered(source: &str) -> Registration {
    let dir = tempfile::tempdir().unwrap();
    // A profile's directory is named after its id.
    let profile_dir = dir.path().join("stage");
    std::fs::create_dir(&profile_dir).unwrap();
    std::fs::write(profile_dir.join("profile.toml"), PROFILE).unwrap();
    let release = dir.path().join("release");
    std::fs::create_dir(&release).unwrap();
    std::fs::write(release.join("app.py"), source).unwrap();
    let profile = Profile::load(&profile_dir.join("profile.toml")).expect("the profile loads");
    register(&profile, &Request { source: release, release: Some("r".into()), artifact_digest: None, config: None }).expect("registers or escalates")
}

/// The decision for `{"paths": PATHS}` on `source`'s summary, under a contract allowing git:add.
fn decision(source: &str, paths: &str) -> String {
    let Registration::Registered(summary) = registered(source) else { panic!("escalated") };
    let call = serde_json::from_str(&format!(r#"{{"tool":"stage","arguments":{{"paths":{paths}}}}}"#)).unwrap();
    let input = CallInput::new(call, "call.json");
    let env: Env = serde_json::from_str(r#"{"principal":"user:a","destination":"local"}"#).unwrap();
    let contract: Contract = serde_json::from_str(
        r#"{"principal":"user:a","allow":["git:add"],"destinations":["local"],"resources":["/srv/repo"],"max_exposure":"none","mutation":true,"write_scopes":[]}"#,
    )
    .unwrap();
    let checked = check_call(&summary, &input).unwrap();
    format!("{:?}", decide(&checked, &env, &contract).decision)
}

#[test]
fn every_call_of_the_callee_has_a_reviewed_shape() {
    assert!(matches!(registered(SEPARATED), Registration::Registered(_)));
    for extra in ["repo.git.add('-f', *paths)", "repo.git.add(paths[0])", "repo.git.add('--', *paths, 'x')"] {
        let source = SEPARATED.replace("    return 'ok'", &format!("    {extra}\n    return 'ok'"));
        let Registration::Escalated(e) = registered(&source) else { panic!("{extra}: registered") };
        assert!(e.detail.contains("has none of the reviewed shapes (bare, everything, separated)"), "{extra}: {}", e.detail);
    }
}

#[test]
fn a_splat_after_the_separator_is_paths_and_without_it_a_dash_is_unknown() {
    assert_eq!(decision(SEPARATED, r#"["README.md"]"#), "Safe");
    assert_eq!(decision(SEPARATED, r#"["--force", "secret.env"]"#), "Safe");
    let bare = SEPARATED.replace("repo.git.add('--', *paths)", "repo.git.add(*paths)");
    assert_eq!(decision(&bare, r#"["README.md"]"#), "Safe");
    assert_eq!(decision(&bare, r#"["--force", "secret.env"]"#), "Unknown");
    // An element the tests cannot judge is never read as a path.
    assert_eq!(decision(&bare, r#"["a", 3]"#), "Unknown");
}
