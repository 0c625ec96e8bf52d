//! Profile loading: errors name file, line, column and key, and a profile
//! with several mistakes reports every one of them.

use std::path::{Path, PathBuf};

use fcd_frontends::FactKind;

use super::Profile;
use super::facts::{is_tag, keys_of};

fn git_diff() -> (PathBuf, String) {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../profiles/git-diff/profile.toml");
    let text = std::fs::read_to_string(&file).expect("the git-diff profile");
    (file, text)
}

/// The error text for `text` with each `(from, to)` replaced once.
fn error_of(edits: &[(&str, &str)]) -> String {
    let (_, mut text) = git_diff();
    for (from, to) in edits {
        assert!(text.contains(from), "`{from}` is in the profile");
        text = text.replacen(from, to, 1);
    }
    Profile::parse(Path::new("bad.toml"), &text).expect_err("the profile is refused").to_string()
}

/// The 1-based line of the first occurrence of `needle` in the git-diff profile.
fn line_of(needle: &str) -> usize {
    let (_, text) = git_diff();
    text[..text.find(needle).expect("the needle")].matches('\n').count() + 1
}

#[test]
fn the_committed_profiles_load() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../profiles");
    for dir in ["git-diff", "dbhub-execute-sql", "github-create-repository", "azure-redis-create"] {
        let profile = Profile::load(&root.join(dir)).unwrap_or_else(|e| panic!("{dir}: {e}"));
        assert!(!profile.facts.is_empty() && !profile.rules.is_empty(), "{dir}");
    }
}

#[test]
fn three_independent_mistakes_are_all_reported() {
    let err = error_of(&[
        ("region = \"handler\"\ncallee", "region = \"handlr\"\ncallee"),
        ("before = \"sink\"", "before = \"sink\"\nmatching = true"),
        ("requires = [\"dash_guard\"]", "requires = [\"dash_guard\"]\nfact-equals = { \"sink.exit\" = \"x\" }"),
    ]);
    // Each error is one `file:line:column:` line and its source snippet.
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("bad.toml:")).collect();
    assert_eq!(lines.len(), 3, "{err}");
    // The second edit adds a line before the rule.
    let (sink, guard, rule) = (line_of("[facts.sink]"), line_of("[facts.dash_guard]"), line_of("[[rules]]") + 1);
    assert!(lines[0].starts_with(&format!("bad.toml:{}:1: key `facts.sink.region`: region `handlr` is not defined", sink + 2)), "{err}");
    assert!(
        lines[1].starts_with(&format!(
            "bad.toml:{}:1: key `facts.dash_guard.matching`: `matching` does not apply to kind `guard` (it is a key of kind `call`)",
            guard + 5
        )),
        "{err}"
    );
    assert!(
        lines[2].starts_with(&format!("bad.toml:{}:17: key `rules[0].fact-equals`: `sink.exit`: a `call` fact never has the value `exit`", rule + 2)),
        "{err}"
    );
}

#[test]
fn a_fact_key_of_another_kind_or_of_none_is_named() {
    // Each stray key is named at its own line (the guard's keys end five lines below its header).
    let guard = line_of("[facts.dash_guard]");
    let err = error_of(&[("before = \"sink\"", "before = \"sink\"\ncallee = \"f\"")]);
    assert!(err.contains(&format!(":{}:1: key `facts.dash_guard.callee`: `callee` and `args` of a guard go inside its `test`", guard + 5)), "{err}");
    let err = error_of(&[("before = \"sink\"", "before = \"sink\"\nrow = \"r\"\nbogus = 1")]);
    assert!(
        err.contains(&format!(":{}:1: key `facts.dash_guard.row`: `row` does not apply to kind `guard` (it is a key of kind `table`)", guard + 5)),
        "{err}"
    );
    assert!(err.contains(&format!(":{}:1: key `facts.dash_guard.bogus`: unknown field `bogus`, expected one of `kind`, `region`", guard + 6)), "{err}");
}

#[test]
fn an_unknown_kind_and_a_missing_key_are_named() {
    let err = error_of(&[("kind = \"guard\"", "kind = \"gaurd\"")]);
    assert!(err.contains("key `facts.dash_guard.kind`: `gaurd` is not a fact kind (known: call, guard,"), "{err}");
    let err = error_of(&[("before = \"sink\"\n", "")]);
    assert!(err.contains("key `facts.dash_guard`: kind `guard` needs `before`"), "{err}");
}

#[test]
fn fact_equals_takes_only_what_the_kind_emits() {
    let ok = error_of(&[
        ("requires = [\"dash_guard\"]", "requires = [\"dash_guard\"]\nfact-equals = { \"sink.callee\" = \"x\" }"),
        ("version = 1", "version = \"one\""),
    ]);
    assert!(!ok.contains("fact-equals"), "`callee` is a value of a call fact: {ok}");
    let err = error_of(&[("requires = [\"dash_guard\"]", "requires = [\"dash_guard\"]\nfact-equals = { \"nope.callee\" = 1 }")]);
    assert!(err.contains("`nope.callee` is not FACT.KEY of a fact of this profile"), "{err}");
}

#[test]
fn every_kind_has_its_keys_from_serde() {
    assert_eq!(keys_of("call"), Some(&["callee", "args", "keywords", "matching", "exhaustive"][..]));
    assert_eq!(keys_of("body"), Some(&["digests"][..]));
    for (kind, _) in FactKind::EMITS {
        assert!(keys_of(kind).is_some_and(|k| !k.is_empty()), "{kind}");
        assert!(is_tag(kind), "{kind} is a serde tag of the fact enum");
    }
    assert_eq!(keys_of("nope"), None);
    assert!(!is_tag("nope"));
}

#[test]
fn handoff_keys_belong_to_a_handler_literal_and_go_together() {
    let region = "[regions.handler]\nfunction = \"git_diff\"\n";
    for (added, key) in [
        ("beside = [\"mcp.NewTool\"]\n", "regions.handler.beside"),
        ("literal = true\nconverted-by = [\"mcp.ToolHandlerFor\"]\n", "regions.handler.converted-by"),
        ("literal = true\nwrapped-by = [\"toolsets.NewServerTool\"]\n", "regions.handler.wrapped-by"),
        ("literal = true\nvia = [\"NewTool\"]\nbeside = [\"mcp.NewTool\"]\n", "regions.handler.beside"),
        ("literal = true\nfactory = [\"mcp.ToolHandlerFor\"]\n", "regions.handler.factory"),
        ("factory = [\"mcp.ToolHandlerFor\"]\nvia = [\"NewTool\"]\n", "regions.handler.via"),
    ] {
        let err = error_of(&[(region, &format!("{region}{added}"))]);
        assert!(err.contains(&format!("key `{key}`")), "{added}: {err}");
    }
}

#[test]
fn inert_attributes_are_for_csharp_and_simple_names() {
    let files = "files = [\"**/mcp_server_git/server.py\"]\n";
    let err = error_of(&[(files, &format!("{files}inert-attributes = [\"JsonSourceGenerationOptions\"]\n"))]);
    assert!(err.contains("key `source.inert-attributes`") && err.contains("csharp"), "{err}");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../profiles/azure-redis-create/profile.toml");
    let text = std::fs::read_to_string(&root).expect("the azure profile");
    for bad in ["System.Text.Json.Serialization.JsonSourceGenerationOptions", "JsonSourceGenerationOptionsAttribute", ""] {
        let edited = text.replacen("inert-attributes = [\"JsonSourceGenerationOptions\"]", &format!("inert-attributes = [\"{bad}\"]"), 1);
        let err = Profile::parse(Path::new("bad.toml"), &edited).expect_err("refused").to_string();
        assert!(err.contains("key `source.inert-attributes`"), "{bad}: {err}");
    }
}

/// profiles/filesystem-write-file/profile.toml as committed: a JavaScript profile to patch.
fn filesystem_profile() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../profiles/filesystem-write-file/profile.toml")).expect("the filesystem profile")
}

#[test]
fn registration_wrappers_are_for_javascript_and_digests() {
    let files = "files = [\"**/mcp_server_git/server.py\"]\n";
    let digest = format!("sha256:{}", "a".repeat(64));
    let err = error_of(&[(files, &format!("{files}registration-wrappers = [\"{digest}\"]\n"))]);
    assert!(err.contains("key `source.registration-wrappers`") && err.contains("javascript"), "{err}");
    // The profile as committed lists 2.0.1's wrapper: take that list out, then put one in.
    let committed = filesystem_profile();
    let start = committed.find("registration-wrappers = [").expect("the profile lists a wrapper");
    let end = start + committed[start..].find("]\n").expect("the list closes") + 2;
    let text = format!("{}{}", &committed[..start], &committed[end..]);
    let listed = "read-only-callees = [";
    assert!(text.contains(listed));
    let with = |list: &str| text.replacen(listed, &format!("registration-wrappers = [{list}]\n{listed}"), 1);
    let profile = Profile::parse(Path::new("ok.toml"), &with(&format!("\"{digest}\""))).expect("a listed digest loads");
    assert_eq!(profile.registration_wrappers, vec![digest.clone()]);
    for bad in ["\"sha256:abc\"", "\"beef\"", &format!("\"{}\"", digest.to_uppercase())] {
        let err = Profile::parse(Path::new("bad.toml"), &with(bad)).expect_err("refused").to_string();
        assert!(err.contains("key `source.registration-wrappers`"), "{bad}: {err}");
    }
}

#[test]
fn read_only_callees_are_for_javascript_and_callee_identities() {
    let files = "files = [\"**/mcp_server_git/server.py\"]\n";
    let err = error_of(&[(files, &format!("{files}read-only-callees = [\"console.error\"]\n"))]);
    assert!(err.contains("key `source.read-only-callees`") && err.contains("javascript"), "{err}");
    let text = filesystem_profile();
    let listed = "read-only-callees = [\"console.error\", \"zod-to-json-schema:zodToJsonSchema\"]";
    assert!(text.contains(listed));
    Profile::parse(Path::new("ok.toml"), &text).expect("the profile as committed loads");
    for bad in ["", "console.", "./lib.js:f", "f()", "a b"] {
        let err =
            Profile::parse(Path::new("bad.toml"), &text.replacen(listed, &format!("read-only-callees = [\"{bad}\"]"), 1)).expect_err("refused").to_string();
        assert!(err.contains("key `source.read-only-callees`"), "{bad}: {err}");
    }
}

#[test]
fn element_and_path_tests_load_and_are_checked_against_declared_types() {
    use fcd_model::rules::{Predicate, Test};
    let rule = "[[rules]]\nwhen = { arg = \"target\", type = \"string\" }";
    let ok = |when: &str, args: &str| {
        let (_, text) = git_diff();
        let text = text.replacen("context_lines = { type = \"integer\" }", &format!("context_lines = {{ type = \"integer\" }}\n{args}"), 1);
        let text = text.replacen(rule, &format!("[[rules]]\nwhen = {when}\nthen = {{ unknown = \"x\" }}\n\n{rule}"), 1);
        Profile::parse(Path::new("bad.toml"), &text)
    };
    let files = "files = { type = \"array\" }";
    let p = ok("{ arg = \"files\", any-element = { starts-with = \"-\" } }", files).expect("loads");
    let found = p.rules.iter().any(|r| r.rule.when == Predicate::Arg { name: "files".into(), test: Test::AnyElement(Box::new(Test::StartsWith("-".into()))) });
    assert!(found);
    let p = ok("{ arg = \"target\", inside = \"config.allowed\" }", "").expect("loads");
    assert!(p.rules.iter().any(|r| r.rule.when == Predicate::Arg { name: "target".into(), test: Test::Inside("config.allowed".into()) }));
    let p = ok("{ arg = \"target\", below = \"config.allowed\" }", "").expect("loads");
    assert!(p.rules.iter().any(|r| r.rule.when == Predicate::Arg { name: "target".into(), test: Test::Below("config.allowed".into()) }));
    let refused = |when: &str, args: &str| ok(when, args).expect_err("refused").to_string();
    assert!(
        refused("{ arg = \"target\", any-element = { starts-with = \"-\" } }", "")
            .contains("argument `target` is declared string: an element test never holds on it")
    );
    assert!(refused("{ arg = \"files\", starts-with = \"-\" }", files).contains("argument `files` is declared array: a string test never holds on it"));
    assert!(refused("{ arg = \"files\", every-element = { arg = \"x\", starts-with = \"-\" } }", files).contains("one test"));
    assert!(refused("{ arg = \"files\", every-element = { } }", files).contains("one test"));
    assert!(refused("{ arg = \"target\", inside = \"principal\" }", "").contains("is not `config.KEY`"));
    assert!(refused("{ arg = \"context_lines\", inside = \"config.d\" }", "").contains("declared integer"));
    assert!(refused("{ arg = \"target\", below = \"env.x\" }", "").contains("is not `config.KEY`"));
    assert!(refused("{ arg = \"context_lines\", below = \"config.d\" }", "").contains("a path test (`inside`, `below`, `prefixed-by`) never holds on it"));
    let p = ok("{ arg = \"target\", prefixed-by = \"config.allowed\" }", "").expect("loads");
    assert!(p.rules.iter().any(|r| r.rule.when == Predicate::Arg { name: "target".into(), test: Test::PrefixedBy("config.allowed".into()) }));
    assert!(refused("{ arg = \"target\", prefixed-by = \"destination\" }", "").contains("is not `config.KEY`"));
    assert!(
        refused("{ arg = \"context_lines\", prefixed-by = \"config.d\" }", "").contains("a path test (`inside`, `below`, `prefixed-by`) never holds on it")
    );
    assert!(refused("{ arg = \"files\", any-element = { matches = \"(\" } }", files).contains("any-element.matches"));
}

/// `sql-read` names a dialect whose `[interpreters.DIALECT]` lists what
/// only reads; the compiled test carries the dialect and the lists.
#[test]
fn a_sql_read_test_needs_a_known_dialect_and_its_lists() {
    use fcd_model::rules::{Predicate, Test};
    let rule = "[[rules]]\nwhen = { arg = \"target\", type = \"string\" }";
    let with = |when: &str, interpreters: &str| {
        let (_, text) = git_diff();
        let text = text.replacen(rule, &format!("{interpreters}\n\n[[rules]]\nwhen = {when}\nthen = {{ unknown = \"x\" }}\n\n{rule}"), 1);
        Profile::parse(Path::new("bad.toml"), &text)
    };
    let lists = "[interpreters.sqlite]\nfunctions = [\"count\"]\ntable-functions = [\"pragma_table_info\"]\npragmas = [\"user_version\"]";
    let p = with("{ arg = \"target\", sql-read = \"sqlite\" }", lists).expect("loads");
    let grammar = p.rules.iter().find_map(|r| match &r.rule.when {
        Predicate::Arg { test: Test::SqlRead(g), .. } => Some(g.clone()),
        _ => None,
    });
    let grammar = grammar.expect("a sql-read rule");
    assert_eq!(
        (grammar.dialect.as_str(), grammar.functions.as_slice(), grammar.pragmas.as_slice()),
        ("sqlite", &["count".to_owned()][..], &["user_version".to_owned()][..])
    );
    let refused = |when: &str, interpreters: &str| with(when, interpreters).expect_err("refused").to_string();
    assert!(refused("{ arg = \"target\", sql-read = \"sqlite\" }", "").contains("no `[interpreters.sqlite]`"));
    assert!(
        refused("{ arg = \"target\", sql-read = \"sqlite\" }", "[interpreters.sqlite]\nfunctions = [\"Count\"]")
            .contains("`Count` is not a lower-case SQL name")
    );
    assert!(refused("{ arg = \"target\", sql-read = \"mysql\" }", "[interpreters.mysql]\nfunctions = []").contains("fcd has no grammar for `mysql`"));
    assert!(refused("{ arg = \"context_lines\", sql-read = \"sqlite\" }", lists).contains("a string test never holds on it"));
    assert!(refused("{ arg = \"target\", sql-read = \"sqlite\" }", "[interpreters.sqlite]\nviews = []").contains("unknown field `views`"));
}

/// `url` names a parser fcd has and lists schemes and host classes it knows;
/// a later rule whose URL test an earlier one covers is shadowed.
#[test]
fn a_url_test_names_its_parser_and_known_classes() {
    use fcd_model::rules::{Predicate, Test};
    use fcd_model::url::HostClass;
    let rule = "[[rules]]\nwhen = { arg = \"target\", type = \"string\" }";
    let with = |whens: &[&str]| {
        let (_, text) = git_diff();
        let added: String = whens.iter().map(|w| format!("[[rules]]\nwhen = {w}\nthen = {{ unknown = \"x\" }}\n\n")).collect();
        let text = text.replacen(rule, &format!("{added}{rule}"), 1);
        Profile::parse(Path::new("bad.toml"), &text)
    };
    let p = with(&["{ arg = \"target\", url = { parser = \"whatwg\", scheme = [\"http\"], host = [\"loopback\", \"link-local\"] } }"]).expect("loads");
    let test = p.rules.iter().find_map(|r| match &r.rule.when {
        Predicate::Arg { test: Test::Url(u), .. } => Some(u.clone()),
        _ => None,
    });
    let test = test.expect("a url rule");
    assert_eq!(test.schemes, Some(vec!["http".to_owned()]));
    assert_eq!(test.hosts, Some(vec![HostClass::Loopback, HostClass::LinkLocal]));
    let refused = |whens: &[&str]| with(whens).expect_err("refused").to_string();
    assert!(refused(&["{ arg = \"target\", url = { parser = \"whatwg\", host = [\"lookback\"] } }"]).contains("`lookback` is not a host class"));
    assert!(refused(&["{ arg = \"target\", url = { parser = \"rfc3986\", host = [\"name\"] } }"]).contains("fcd has no URL grammar `rfc3986`"));
    assert!(refused(&["{ arg = \"target\", url = { parser = \"whatwg\" } }"]).contains("lists `scheme`, `host` or both"));
    assert!(refused(&["{ arg = \"target\", url = { parser = \"whatwg\", scheme = [\"HTTP\"] } }"]).contains("not a lower-case URL scheme"));
    assert!(refused(&["{ arg = \"target\", url = { parser = \"whatwg\", host = [] } }"]).contains("an empty `host` list never holds"));
    assert!(refused(&["{ arg = \"context_lines\", url = { parser = \"whatwg\", host = [\"name\"] } }"]).contains("a string test never holds on it"));
    let shadowed = refused(&[
        "{ arg = \"target\", url = { parser = \"whatwg\", host = [\"loopback\", \"private\"] } }",
        "{ arg = \"target\", url = { parser = \"whatwg\", scheme = [\"http\"], host = [\"private\"] } }",
    ]);
    assert!(shadowed.contains("never applies: rules[3]"), "{shadowed}");
}

/// `keywords` lists argument names with patterns; a bad name or a splat is refused.
#[test]
fn keywords_are_names_with_one_value_pattern() {
    let sink = "args = [\"format:--unified={context_lines}?\", \"param:target\"]";
    let (_, text) = git_diff();
    let loaded = Profile::parse(Path::new("ok.toml"), &text.replacen(sink, &format!("{sink}\nkeywords = {{ timeout = \"any?\" }}"), 1)).expect("loads");
    let found = loaded.facts.iter().find_map(|f| match &f.spec.kind {
        fcd_frontends::FactKind::Call { keywords: Some(k), .. } => Some(k.keys().cloned().collect::<Vec<_>>()),
        _ => None,
    });
    assert_eq!(found, Some(vec!["timeout".to_owned()]));
    let err = error_of(&[(sink, &format!("{sink}\nkeywords = {{ \"a-b\" = \"any\" }}"))]);
    assert!(err.contains("`a-b` is not an argument name"), "{err}");
    let err = error_of(&[(sink, &format!("{sink}\nkeywords = {{ files = \"*param:target\" }}"))]);
    assert!(err.contains("never a splat"), "{err}");
    let err = error_of(&[(sink, &format!("{sink}\nkeywords = {{ files = \"nonsense:x\" }}"))]);
    assert!(err.contains("keywords"), "{err}");
}

#[test]
fn a_callback_region_outside_javascript_is_a_load_error() {
    let err = error_of(&[("[regions.handler]\nfunction = \"git_diff\"", "[regions.handler]\ncallback = \"git_diff\"")]);
    assert!(err.contains("key `regions.handler.callback`: the python frontend does not find registered callbacks (only javascript does)"), "{err}");
    let err = error_of(&[("[regions.handler]\nfunction = \"git_diff\"", "[regions.handler]\nfunction = \"git_diff\"\ncallback = \"git_diff\"")]);
    assert!(err.contains("one `callback`"), "{err}");
}

#[test]
fn a_case_region_outside_javascript_is_a_load_error() {
    let err = error_of(&[("[regions.handler]\nfunction = \"git_diff\"", "[regions.handler]\ncase = \"git_diff\"")]);
    assert!(err.contains("key `regions.handler.case`: the python frontend does not find dispatcher cases (only javascript does)"), "{err}");
}

#[test]
fn a_splat_pattern_where_the_frontend_matches_none_is_a_load_error() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../profiles/github-create-repository");
    let text = std::fs::read_to_string(dir.join("profile.toml")).unwrap();
    let edited = text.replacen("args = [\"param:ctx\", \"var:organization\", \"var:repo\"]", "args = [\"param:ctx\", \"*var:repo\"]", 1);
    assert_ne!(edited, text);
    let err = Profile::parse(&dir.join("profile.toml"), &edited).expect_err("refused").to_string();
    assert!(err.contains("the go frontend matches no splat argument (`*…`)"), "{err}");
}

#[test]
fn a_reject_says_where_the_handler_refuses_and_no_effect_lists_only_reviewed_callees() {
    let reject = "requires = [\"dash_guard\"]\nwhen = { arg = \"target\", starts-with = \"-\" }\nthen = { reject = \"dash_target\" }";
    let err = error_of(&[(reject, "requires = [\"sink\"]\nwhen = { arg = \"target\", starts-with = \"-\" }\nthen = { reject = \"dash_target\" }")]);
    assert!(err.contains("a `reject` says no effect happened"), "{err}");
    let err = error_of(&[(reject, &format!("{reject}\nrefused-at = \"sink\""))]);
    assert!(err.contains("`sink` is not one of the rule's `requires`"), "{err}");
    let err =
        error_of(&[("when = { arg = \"target\", type = \"string\" }\nthen", "refused-at = \"sink\"\nwhen = { arg = \"target\", type = \"string\" }\nthen")]);
    assert!(err.contains("only a `reject` rule says where the handler refuses"), "{err}");
    let listed = "no-effect = [\"git.Repo.rev_parse\", \"str.startswith\", \"git.exc.BadName\", \"ValueError\"]";
    let err = error_of(&[(listed, "no-effect = [\"str.startswith\", \"os.remove\"]")]);
    assert!(err.contains("`os.remove` is not one of the region's `callees`"), "{err}");
}

/// A shape may extend another shape, and patch an inventory by entry.
#[test]
fn a_shape_extends_another_and_patches_an_inventory_by_entry() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../profiles/git-add/profile.toml");
    let text = std::fs::read_to_string(&file).expect("the git-add profile");
    let with = |added: &str| Profile::parse(Path::new("shapes.toml"), &format!("{text}\n{added}"));
    let extended = with(
        "[shapes.cli-all]\ndescription = \"cli, reviewed again\"\nextends = \"cli\"\ninventory.handler = { add = [\"git.Repo.git.status\"] }\ninventory.route = { remove = [\"pathlib.Path\"] }\n",
    )
    .expect("loads");
    let shape = extended.alternatives.iter().find(|p| p.shape.as_deref() == Some("cli-all")).expect("the new shape");
    let handler: Vec<&str> = shape.inventories["handler"].iter().map(String::as_str).collect();
    assert_eq!(handler, ["git.Repo.git.add", "git.Repo.git.status"], "cli's handler inventory, plus one");
    assert!(!shape.inventories["route"].contains("pathlib.Path"));
    let noted = with("[shapes.cli-quiet]\ndescription = \"cli, with a reviewed no-effect callee\"\nextends = \"cli\"\ninventory.handler = { add = [\"str.strip\"], no-effect = [\"str.strip\"] }\n").expect("loads");
    let quiet = noted.alternatives.iter().find(|p| p.shape.as_deref() == Some("cli-quiet")).expect("the shape");
    assert!(quiet.no_effect["handler"].contains("str.strip"), "no-effect beside a patch adds to the list");
    assert!(shape.facts.iter().any(|f| f.spec.name == "cli_sink") && !shape.facts.iter().any(|f| f.spec.name == "index_sink"), "cli's facts");
    let refused = |added: &str| with(added).expect_err("refused").to_string();
    let shape = |body: &str| format!("[shapes.x]\ndescription = \"x\"\n{body}\n");
    assert!(refused(&shape("extends = \"clii\"")).contains("no shape `clii`"));
    assert!(refused(&(shape("extends = \"y\"") + "[shapes.y]\ndescription = \"y\"\nextends = \"x\"\n")).contains("extends, through other shapes"));
    assert!(refused(&shape("inventory.handler = { remove = [\"nope\"] }")).contains("`nope` is not in the inventory the shape starts from"));
    assert!(refused(&shape("inventory.handler = { add = [\"git.Repo.index.add\"] }")).contains("already in the inventory"));
    assert!(refused(&shape("inventory.handler = { callees = [\"a\"], add = [\"b\"] }")).contains("not both"));
    let top = text.replacen("[inventory.confine]\ncallees = [", "[inventory.confine]\nadd = [\"x\"]\ncallees = [", 1);
    assert!(Profile::parse(Path::new("top.toml"), &top).expect_err("refused").to_string().contains("patch a shape's inventory"));
}
