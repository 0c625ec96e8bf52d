//! The checks made when a profile loads, each shown on a bad profile with
//! its exact message (insta snapshots): keys and kinds the language does not
//! read, a fact's callee outside its region's inventory, a test that can
//! never hold on its argument's declared type, a regex that does not compile,
//! a rule an earlier one shadows, an id that is not the directory's name,
//! and misspelled names with a suggestion. Every message names file, line
//! and column of the key itself and shows the line with a caret.

use std::path::Path;

use super::Profile;

/// The committed profile `id`'s text, with each `(from, to)` replaced once.
fn edited(id: &str, edits: &[(&str, &str)]) -> String {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../profiles").join(id).join("profile.toml");
    let mut text = std::fs::read_to_string(&file).expect("a committed profile");
    for (from, to) in edits {
        assert!(text.contains(from), "`{from}` is in {id}");
        text = text.replacen(from, to, 1);
    }
    text
}

/// The load error of profile `id` edited so, read as `profiles/ID/profile.toml`.
fn error_of(id: &str, edits: &[(&str, &str)]) -> String {
    let path = Path::new("profiles").join(id).join("profile.toml");
    Profile::parse(&path, &edited(id, edits)).expect_err("the profile is refused").to_string()
}

#[test]
fn a_key_the_language_does_not_read() {
    // `conjuncts` is read by the JavaScript frontend only (the one with a spelling of a value).
    insta::assert_snapshot!(error_of("git-diff", &[("before = \"sink\"\n", "before = \"sink\"\nconjuncts = [\"x\"]\n")]));
}

#[test]
fn a_kind_the_language_does_not_extract() {
    // A data table is a JavaScript shape.
    let fact = "\n[facts.omitted]\nkind = \"table\"\nregion = \"handler\"\nrow = \"r\"\nmember = \"m\"\n";
    insta::assert_snapshot!(error_of("git-diff", &[("[[rules]]", &format!("{}\n[[rules]]", fact.trim_start()))]));
}

#[test]
fn a_go_default_names_no_definition() {
    let helpers = "helpers = { \"OptionalParam[bool]\" = \"zero:false\", \"OptionalBoolParamWithDefault\" = \"arg:2\" }\n";
    insta::assert_snapshot!(error_of("github-create-repository", &[(helpers, &format!("{helpers}definition = \"Private\"\n"))]));
}

#[test]
fn a_go_field_needs_its_sink() {
    insta::assert_snapshot!(error_of("github-create-repository", &[("sink = \"create\"\narg = 2\nfield = \"Private\"", "field = \"Private\"")]));
}

#[test]
fn a_csharp_field_names_no_sink() {
    // The C# frontend finds the member initializer anywhere in the region: a `sink` would be ignored.
    let field = "field = \"PublicNetworkAccess\"\nwrap = \"Value\"\nfrom = \"mapped\"\n";
    insta::assert_snapshot!(error_of("azure-redis-create", &[(field, &format!("{field}sink = \"deployment\"\narg = 0\n"))]));
}

#[test]
fn a_key_of_another_kind() {
    insta::assert_snapshot!(error_of("git-diff", &[("before = \"sink\"\n", "before = \"sink\"\nmember = \"x\"\n")]));
}

#[test]
fn a_callee_outside_its_inventory() {
    insta::assert_snapshot!(error_of("git-diff", &[("callee = \"git.Repo.git.diff\"", "callee = \"git.Repo.git.dif\"")]));
}

#[test]
fn a_guard_callee_outside_its_inventory() {
    insta::assert_snapshot!(error_of("git-diff", &[("test = { callee = \"str.startswith\"", "test = { callee = \"str.endswith\"")]));
}

#[test]
fn a_string_test_on_an_integer_argument() {
    insta::assert_snapshot!(error_of("git-diff", &[("when = { arg = \"target\", type = \"string\" }", "when = { arg = \"context_lines\", matches = '^3$' }")]));
}

#[test]
fn a_type_test_that_never_holds() {
    insta::assert_snapshot!(error_of("git-diff", &[("when = { arg = \"target\", type = \"string\" }", "when = { arg = \"target\", type = \"array\" }")]));
}

#[test]
fn an_equals_of_another_type() {
    insta::assert_snapshot!(error_of("git-diff", &[("when = { arg = \"target\", type = \"string\" }", "when = { arg = \"context_lines\", equals = \"3\" }")]));
}

#[test]
fn a_regex_that_does_not_compile() {
    insta::assert_snapshot!(error_of("git-diff", &[("'^--output=(?P<path>.+)$'", "'^--output=(?P<path>.+$'")]));
}

#[test]
fn a_rule_shadowed_by_an_earlier_one() {
    // The catch-all now comes before the `--output` rule.
    let catch_all = "[[rules]]\nwhen = { arg = \"target\", type = \"string\" }\nthen = { effect = { op = \"git:diff\", resource = \"{arg.repo_path}\" } }\n";
    insta::assert_snapshot!(error_of(
        "git-diff",
        &[(catch_all, ""), ("[[rules]]\nwhen = { arg = \"target\", matches", &format!("{catch_all}\n[[rules]]\nwhen = {{ arg = \"target\", matches"))]
    ));
}

#[test]
fn a_narrower_prefix_is_shadowed_by_a_wider_one() {
    let rule = "[[rules]]\nwhen = { arg = \"target\", starts-with = \"--\" }\nthen = { unknown = \"a long option\" }\n\n";
    insta::assert_snapshot!(error_of(
        "git-diff",
        &[("[[rules]]\nwhen = { arg = \"target\", type = \"string\" }", &format!("{rule}[[rules]]\nwhen = {{ arg = \"target\", type = \"string\" }}"))]
    ));
}

#[test]
fn an_id_that_is_not_the_directory_name() {
    insta::assert_snapshot!(error_of("git-diff", &[("id = \"git-diff\"", "id = \"git-dif\"")]));
}

#[test]
fn misspelled_names_get_a_suggestion() {
    insta::assert_snapshot!(error_of(
        "git-diff",
        &[
            ("region = \"handler\"\ncallee", "region = \"handlr\"\ncallee"),
            ("before = \"sink\"", "befor = \"sink\""),
            ("when = { arg = \"target\", type = \"string\" }", "when = { arg = \"targt\", type = \"string\" }"),
            ("language = \"python\"", "language = \"pyton\""),
        ]
    ));
}

#[test]
fn a_misspelled_table_key_is_a_syntax_level_error_with_a_snippet() {
    insta::assert_snapshot!(error_of("git-diff", &[("[regions.handler]\nfunction", "[regions.handler]\nfuncton")]));
}

#[test]
fn every_error_is_shown_at_once() {
    insta::assert_snapshot!(error_of(
        "git-diff",
        &[
            ("callee = \"git.Repo.git.diff\"", "callee = \"git.Repo.git.dif\""),
            ("before = \"sink\"\n", "before = \"sink\"\nconjuncts = [\"ok\"]\n"),
            ("'^--output=(?P<path>.+)$'", "'^--output=(?P<path>.+$'"),
            ("id = \"git-diff\"", "id = \"diff\""),
        ]
    ));
}

#[test]
fn the_committed_profiles_pass_every_check() {
    for id in ["git-diff", "dbhub-execute-sql", "github-create-repository", "azure-redis-create"] {
        let path = Path::new("profiles").join(id).join("profile.toml");
        if let Err(e) = Profile::parse(&path, &edited(id, &[])) {
            panic!("{e}");
        }
    }
}

/// A region kind the language's frontend never finds is a load error, not a
/// release's `region_missing`.
#[test]
fn a_variable_region_in_go_is_a_load_error() {
    let err = error_of("github-create-repository", &[("[regions.handler]\n", "[regions.table]\nvariable = \"Table\"\n\n[regions.handler]\n")]);
    assert!(err.contains("key `regions.table.variable`: the go frontend does not find module-level variables (python and javascript do)"), "{err}");
}

/// `str(…)` is a Python argument form: another language's profile asking
/// for it is a load error.
#[test]
fn a_str_pattern_outside_python_is_a_load_error() {
    let err = error_of(
        "github-create-repository",
        &[("args = [\"param:ctx\", \"var:organization\", \"var:repo\"]", "args = [\"param:ctx\", \"var:organization\", \"str(var:repo)\"]")],
    );
    assert!(err.contains("the go frontend matches no `str(…)` argument"), "{err}");
}

#[test]
fn a_pinned_function_lists_sha256_digests() {
    let pin = "\"normalizePath\" = [\n  \"sha256:aba90f53eac6a9f6ead526436ef4b6a21ec64075b70449cb09f35d971d8a9f8c\",";
    insta::assert_snapshot!(error_of("filesystem-write-file", &[(pin, "\"normalizePath\" = [\n  \"sha256:ABA90F\",")]));
}

#[test]
fn a_function_is_pinned_or_trusted_by_name_not_both() {
    let pinned = "[source.pinned-functions]\n";
    insta::assert_snapshot!(error_of("filesystem-write-file", &[(pinned, &format!("unread-functions = [\"parseRootUri\"]\n\n{pinned}"))]));
}

#[test]
fn a_go_pinned_name_is_a_package_directory_and_a_name() {
    // A Go profile pins the release's other packages by `DIR.Name`; a path out of the module is no such name.
    let pin = "\"pkg/utils.NewToolResultText\" = [";
    insta::assert_snapshot!(error_of("github-create-repository", &[(pin, "\"../utils.NewToolResultText\" = [")]));
    // The function literals one function installs around requests are pinned as `DIR.FUNC#API`
    // (the committed profile holds such keys); the API is one identifier.
    let hooks = "\"internal/ghmcp.NewMCPServer#OnBeforeAny\" = [";
    for bad in ["internal/ghmcp.NewMCPServer#", "internal/ghmcp.NewMCPServer#On-Before", "internal/ghmcp#OnBeforeAny", "internal/ghmcp.NewMCPServer#A#B"] {
        let err = error_of("github-create-repository", &[(hooks, &format!("\"{bad}\" = ["))]);
        assert!(err.contains(&format!("`{bad}` is not a name of a package of the release")), "{bad}: {err}");
    }
}
