//! Several reviewed shapes in one profile (`[shapes.NAME]`): registration
//! picks the one shape a release has, says which, escalates with the closest
//! shape's reason when none matches and as ambiguous when two do.

use std::path::{Path, PathBuf};

use fcd_compiler::profile::Profile;
use fcd_compiler::register::{Registration, Request, register};
use fcd_model::summary::Summary;
use fcd_verify::canonical_calls::Canonical;
use fcd_verify::verdict::{check_call, decide};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The git-diff profile's top-level shape alone (its own `[shapes]` cut off)
/// with `extra` appended, written into `dir`.
fn profile_with(dir: &Path, extra: &str) -> Result<Profile, fcd_model::InputError> {
    let text = std::fs::read_to_string(root().join("profiles/git-diff/profile.toml")).unwrap();
    let text = text.split("# ---- further reviewed shapes").next().unwrap();
    // The directory names the profile.
    let dir = dir.join("git-diff");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("profile.toml");
    std::fs::write(&path, format!("{text}\n{extra}")).unwrap();
    Profile::load(&path)
}

/// A shape in which the handler is called `diff_against`.
const RENAMED: &str = r#"
[shapes.renamed]
description = "test shape: the handler function is named diff_against"
regions.handler = { function = "diff_against" }
inventory.route = { callees = ["@mcp.server.Server().call_tool()", "pathlib.Path", "git.Repo", "server.validate_repo_path", "server.diff_against", "dict.get", "mcp.types.TextContent"] }
facts.routed = { kind = "call", region = "route", callee = "server.diff_against", args = ["any", "arg:target", "any?"], required = true }
"#;

/// The guarded fixture with `from` replaced by `to` everywhere in its server.
fn fixture(dir: &Path, replacements: &[(&str, &str)]) -> PathBuf {
    let tree = dir.join("release");
    let source = root().join("fixtures/git-diff/guarded");
    for entry in walkdir::WalkDir::new(&source) {
        let entry = entry.unwrap();
        let target = tree.join(entry.path().strip_prefix(&source).unwrap());
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else {
            let mut text = std::fs::read_to_string(entry.path()).unwrap();
            for (from, to) in replacements {
                text = text.replace(from, to);
            }
            std::fs::write(&target, text).unwrap();
        }
    }
    tree
}

fn registration(profile: &Profile, source: &Path) -> Registration {
    let canonical = Canonical::load(&root().join("profiles/git-diff/canonical.json")).unwrap();
    let request =
        Request { source: source.to_owned(), release: Some("shapes".into()), config: canonical.env.config.as_object().cloned(), ..Request::default() };
    register(profile, &request).unwrap()
}

fn decisions(summary: &Summary) -> Vec<String> {
    let canonical = Canonical::load(&root().join("profiles/git-diff/canonical.json")).unwrap();
    canonical
        .calls
        .keys()
        .map(|name| {
            let input = canonical.input(name).unwrap();
            let call = check_call(summary, &input).unwrap();
            format!("{name}={}", decide(&call, &canonical.env, &canonical.contract).decision.as_str())
        })
        .collect()
}

#[test]
fn registration_picks_the_one_shape_the_release_has() {
    let tmp = tempfile::tempdir().unwrap();
    let profile = profile_with(tmp.path(), RENAMED).unwrap();
    assert_eq!(profile.shape.as_deref(), Some("default"));
    assert_eq!(profile.alternatives.len(), 1);

    // The top-level shape: the same rules and decisions as the one-shape profile.
    let single = profile_with(&tmp.path().join("single"), "").unwrap();
    assert!(single.alternatives.is_empty() && single.shape.is_none());
    let guarded = root().join("fixtures/git-diff/guarded");
    let Registration::Registered(alone) = registration(&single, &guarded) else { panic!("the guarded fixture registers") };
    assert!(alone.shape.is_none(), "a one-shape profile's summary names no shape (its digests are unchanged)");
    let Registration::Registered(default) = registration(&profile, &guarded) else { panic!("the guarded fixture registers") };
    assert_eq!(default.shape.as_deref(), Some("default"));
    assert_eq!(default.rules_digest, alone.rules_digest);
    assert_eq!(decisions(&default), ["A=safe", "B=reject", "C=reject"]);

    // The renamed release has the other shape, and keeps its meaning.
    let renamed = fixture(tmp.path(), &[("def git_diff(", "def diff_against("), ("= git_diff(", "= diff_against(")]);
    let Registration::Registered(summary) = registration(&profile, &renamed) else { panic!("the renamed release registers") };
    assert_eq!(summary.shape.as_deref(), Some("renamed"));
    assert_eq!(decisions(&summary), ["A=safe", "B=reject", "C=reject"]);
    // The one-shape profile escalates on it.
    assert!(matches!(registration(&single, &renamed), Registration::Escalated(_)));
}

#[test]
fn no_shape_matching_escalates_with_the_closest_shapes_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let profile = profile_with(tmp.path(), RENAMED).unwrap();
    // Renamed, but the handler also writes a file: the renamed shape gets
    // furthest (its regions are found) and its inventory refuses the write.
    let release = fixture(
        tmp.path(),
        &[
            ("def git_diff(", "def diff_against("),
            ("= git_diff(", "= diff_against("),
            ("    repo.rev_parse(target)\n", "    repo.rev_parse(target)\n    open('/tmp/x', 'w').write(target)\n"),
        ],
    );
    let Registration::Escalated(e) = registration(&profile, &release) else { panic!("no shape matches") };
    assert_eq!(e.code, fcd_frontends::EscalationCode::InventoryViolation, "{e}");
    assert!(e.detail.starts_with("no reviewed shape matches; the closest, `renamed`:"), "{e}");
}

#[test]
fn shapes_that_escalate_for_one_reason_are_named_together_once() {
    let tmp = tempfile::tempdir().unwrap();
    let twins = "[shapes.same]\ndescription = \"test shape: as the top level\"\n[shapes.also]\ndescription = \"test shape: as the top level too\"\n";
    let profile = profile_with(tmp.path(), &format!("{RENAMED}{twins}")).unwrap();
    // The handler writes a file: three shapes stop at the same callee, the renamed one earlier.
    let release = fixture(tmp.path(), &[("    repo.rev_parse(target)\n", "    repo.rev_parse(target)\n    open('/tmp/x', 'w').write(target)\n")]);
    let Registration::Escalated(e) = registration(&profile, &release) else { panic!("no shape matches") };
    assert_eq!(e.code, fcd_frontends::EscalationCode::InventoryViolation, "{e}");
    let (closest, others) = e.detail.split_once(" (other shapes: ").expect("the other shapes follow");
    assert!(closest.starts_with("no reviewed shape matches; the closest, `default`: ") && closest.contains("open"), "{e}");
    // The twins' reason is the closest's: named once, as the same; the renamed shape's is its own.
    assert!(others.starts_with("`renamed`: ") || others.contains("; `renamed`: "), "{e}");
    assert!(others.contains("`also`, `same`: the same") || others.contains("`same`, `also`: the same"), "{e}");
    assert_eq!(e.detail.matches("open").count(), 1, "the reason is written once: {e}");
}

#[test]
fn two_shapes_matching_is_ambiguous() {
    let tmp = tempfile::tempdir().unwrap();
    let same = "[shapes.same]\ndescription = \"test shape: identical to the top-level one\"\n";
    let profile = profile_with(tmp.path(), same).unwrap();
    let Registration::Escalated(e) = registration(&profile, &root().join("fixtures/git-diff/guarded")) else { panic!("ambiguous") };
    assert_eq!(e.code, fcd_frontends::EscalationCode::ShapeMismatch);
    assert!(e.detail.contains("matches 2 reviewed shapes (default, same)"), "{e}");
}

#[test]
fn a_bad_shape_is_a_load_error_naming_its_line() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = [
        ("[shapes.x]\ndescription = \"d\"\ndrop = [\"facts.nope\"]\n", "`facts.nope` is not in the shape this one starts from"),
        ("[shapes.x]\ndescription = \"d\"\ndrop = [\"rules.0\"]\n", "is not `regions.NAME`"),
        ("[shapes.default]\ndescription = \"d\"\n", "already the top-level shape's name"),
        ("[shapes.x]\ndescription = \" \"\n", "must say what the shape is"),
        (
            "[shapes.x]\ndescription = \"d\"\nregions.handler = { function = \"f\" }\nfacts.extra = { kind = \"call\", region = \"nowhere\", callee = \"x\" }\n",
            "nowhere",
        ),
        // Only the JavaScript closed call path follows calls per file.
        ("[shapes.x]\ndescription = \"d\"\nregions.handler = { function = \"f\", file = \"src/server.py\" }\n", "`file` is for JavaScript profiles"),
    ];
    for (extra, expected) in cases {
        let err = profile_with(tmp.path(), extra).expect_err(extra).to_string();
        assert!(err.contains(expected), "{extra}: {err}");
        assert!(err.contains("profile.toml:"), "the error names the file and line: {err}");
    }
}

#[test]
fn a_region_file_is_a_path_from_the_release_root() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("filesystem-write-file");
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(root().join("profiles/filesystem-write-file/profile.toml")).unwrap();
    let load = |file: &str| {
        let shape =
            format!("\n[shapes.x]\ndescription = \"d\"\nextends = \"dispatch-roots\"\nregions.expand = {{ function = \"expandHome\", file = \"{file}\" }}\n");
        std::fs::write(dir.join("profile.toml"), format!("{text}{shape}")).unwrap();
        Profile::load(&dir.join("profile.toml"))
    };
    assert!(load("dist/path-utils.js").is_ok());
    for bad in ["../dist/index.js", "/dist/index.js", "dist//index.js", "./dist/index.js", "dist\\\\index.js", ""] {
        let err = load(bad).expect_err(bad).to_string();
        assert!(err.contains("regions.expand.file") && err.contains("is not a file of the release"), "{bad}: {err}");
        assert!(err.contains("profile.toml:"), "the error names the file and line: {err}");
    }
}

/// filesystem-write-file's shape factory (2.x): validatePath respells a path
/// the plain check refused onto an allowed directory whose names match under
/// NFC (space separators as a space). For a directory outside plain ASCII (a
/// U+212A KELVIN SIGN in it) a path that looks outside may be written inside:
/// every call is UNKNOWN there, before the rule that rejects a path outside;
/// for a plain directory the same paths are refused.
#[test]
fn a_directory_outside_plain_ascii_is_never_decided_where_a_refused_path_is_respelled() {
    let profile = Profile::load(&root().join("profiles/filesystem-write-file/profile.toml")).unwrap();
    let canonical = Canonical::load(&root().join("profiles/filesystem-write-file/canonical.json")).unwrap();
    let decide_with = |directory: &str, path: &str| {
        let mut env = canonical.env.clone();
        env.config["allowed_directories"] = serde_json::json!(directory);
        let request = Request {
            source: root().join("fixtures/filesystem-write-file/factory"),
            release: Some("factory".into()),
            config: env.config.as_object().cloned(),
            ..Request::default()
        };
        let Registration::Registered(summary) = register(&profile, &request).unwrap() else { panic!("the factory fixture does not register") };
        assert_eq!(summary.shape.as_deref(), Some("factory"));
        let mut call = canonical.call("A").unwrap();
        call.arguments.insert("path".into(), serde_json::json!(path));
        let input = fcd_verify::verdict::CallInput::new(call, root());
        decide(&check_call(&summary, &input).unwrap(), &env, &canonical.contract).decision.as_str().to_owned()
    };
    let kelvin = "/srv/\u{212A}elvin";
    assert_eq!(decide_with(kelvin, "/srv/Kelvin/notes.txt"), "unknown", "respelled into the Kelvin-sign directory");
    assert_eq!(decide_with(kelvin, "/srv/other/notes.txt"), "unknown", "no rule decides under such a directory");
    assert_eq!(decide_with("/srv/Kelvin", "/srv/kelvin/notes.txt"), "reject", "plain ASCII: names are their own keys");
    assert_eq!(decide_with("/srv/data", "/srv/data2/notes.txt"), "reject");
}
