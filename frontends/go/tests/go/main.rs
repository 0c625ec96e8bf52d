//! The Go frontend through its public interface: regions, callee identities
//! (generic instantiations, conversions, dynamic callees, names resolved by
//! declaration) and comments.

#[path = "../../../tests/common/mod.rs"]
mod common;
mod implementations;
mod implicit;
mod middleware;
mod module;
mod module_wide;
mod wrappers;

use fcd_frontend_go::{Go, Settings};
use fcd_frontends::{Env, EscalationCode, LanguageSettings, RegionKind, RegionSpec, SourceFile, analyze, analyze_with};

fn file(src: &str) -> SourceFile {
    SourceFile { path: "pkg/x.go".into(), bytes: src.as_bytes().to_vec() }
}

fn env() -> Env {
    let imports = [("github".into(), vec!["github.com/google/go-github/v*/github".into()])].into();
    Env { reviewed: vec!["OptionalParam".into()], language: LanguageSettings::new(Settings { imports, ..Settings::default() }), ..Env::default() }
}

/// The identities of the calls in the handler literal of `F`.
fn callees(src: &str) -> Vec<String> {
    let region = RegionSpec { name: "r".into(), kind: RegionKind::Literal("F".into()), optional: false, file: None };
    let analysis = analyze_with(&Go, &[file(src)], &[region], &[], &env()).expect("analyzes");
    crate::common::callees_of(&analysis)
}

/// A package with one imported library, one helper and a handler literal
/// whose parameters are `ctx`, `deps` and `args`.
fn source(header: &str, body: &str) -> String {
    format!(
        "package x\n\nimport \"github.com/google/go-github/v87/github\"\n{header}\nfunc OptionalParam[T any](a A, k string) (T, error) {{ var z T; return z, nil }}\n\nfunc F() T {{\n\treturn New(func(ctx C, deps D, args A) error {{\n{body}\n\t\treturn nil\n\t}})\n}}\n"
    )
}

fn check(body: &str, expected: &[&str]) {
    let src = source("", body);
    assert_eq!(callees(&src), expected, "in:\n{src}");
}

fn first_callee(header: &str, body: &str) -> String {
    callees(&source(header, body)).into_iter().next().unwrap_or_default()
}

fn escalation(header: &str, body: &str) -> EscalationCode {
    let region = RegionSpec { name: "r".into(), kind: RegionKind::Literal("F".into()), optional: false, file: None };
    analyze_with(&Go, &[file(&source(header, body))], &[region], &[], &env()).map(|_| ()).expect_err("escalates").code
}

#[test]
fn dotted_tokens_and_generics_are_identities() {
    check(
        "\t\tv, err := OptionalParam[bool](args, \"p\")\n\t\tclient := deps.Client()\n\t\tclient.Repositories.Create(ctx, v)\n\t\ts := string(b)\n\t\tdeps.GetClient(ctx).Do()",
        &["OptionalParam[bool]", "D#Client", "D#Client().Repositories.Create", "string", "D#GetClient().Do", "D#GetClient"],
    );
}

#[test]
fn a_conversion_to_a_slice_is_its_element_type() {
    // `[]byte(s)` runs no code: it resolves as `byte` does.
    check("\t\tb := []byte(\"x\")\n\t\t_ = b", &["[]byte"]);
    assert_eq!(first_callee("type Blob struct{}\n", "\t\t_ = []Blob(nil)"), "[]Blob");
    // An element type declared nowhere, or shadowed, is not accepted.
    assert!(first_callee("", "\t\t_ = []ghost(nil)").starts_with('?'));
    assert_eq!(escalation("", "\t\tbyte := 1\n\t\t_ = []byte(\"x\")\n\t\t_ = byte"), EscalationCode::ShapeMismatch);
}

#[test]
fn a_local_bound_to_a_field_of_a_parameter_is_a_receiver() {
    // `c := args.Content` reads a field of the parameter: its methods are fixed by the field's type.
    check("\t\tif c := args.Content; c != nil {\n\t\t\t_ = c.GetName()\n\t\t}", &["c.GetName"]);
    check("\t\tr := deps.Client()\n\t\tm := r.Commit.Author\n\t\t_ = m.GetName()", &["D#Client", "m.GetName"]);
    // A field of a value built here, or of the local itself, is not.
    assert!(first_callee("", "\t\tv := &Fake{}\n\t\tc := v.Content\n\t\t_ = c.GetName()").starts_with('?'));
    assert!(callees(&source("", "\t\tc := args.Content\n\t\tc = c.Next\n\t\t_ = c.GetName()")).iter().any(|c| c.starts_with('?')));
}

#[test]
fn indexed_values_and_call_results_are_dynamic() {
    check("\t\thooks[name](ctx)", &["dynamic: calls an indexed value (`hooks[name]`)"]);
    check("\t\tmake()()", &["dynamic: calls the result of `make()`", "make"]);
}

#[test]
fn comments_and_strings_create_no_callees() {
    check("\t\t// os.Exit(1)\n\t\t_ = \"exec.Command(x)\"\n\t\t/* http.Get(u) */", &[]);
}

#[test]
fn only_the_outermost_literal_is_the_region() {
    check("\t\tresp := deps.Do()\n\t\tdefer func() { _ = resp.Body.Close() }()", &["D#Do", "func()", "D#Do().Body.Close"]);
}

#[test]
fn a_function_without_a_literal_has_no_region() {
    let region = RegionSpec { name: "r".into(), kind: RegionKind::Literal("F".into()), optional: false, file: None };
    let err = analyze(&Go, &[file("package x\n\nfunc F() {}\n")], &[region], &[]).unwrap_err();
    assert_eq!(err.code, EscalationCode::RegionMissing);
}

#[test]
fn odd_go_does_not_panic() {
    for src in ["", "package", "package x\nfunc F[T any](x T) T { return x }\n", "package x\n\u{feff}func F() {}\n", "\x00\x01"] {
        let region = RegionSpec { name: "r".into(), kind: RegionKind::Function("F".into()), optional: false, file: None };
        let _ = analyze(&Go, &[file(src)], &[region], &[]);
    }
}

#[test]
fn defer_and_go_calls_are_call_sites() {
    check("\t\tdefer deps.Close()\n\t\tgo deps.Run(ctx)", &["D#Close", "D#Run"]);
}

#[test]
fn an_import_is_its_path() {
    assert_eq!(first_callee("", "\t\t_ = github.Ptr(true)"), "github.Ptr");
    let src = source("", "\t\t_ = github.Ptr(true)").replace("\"github.com/google/go-github/v87/github\"", "github \"example.com/lookalike/github\"");
    assert!(callees(&src)[0].starts_with('?'), "{:?}", callees(&src));
}

#[test]
fn locals_never_pass_for_library_or_package_names() {
    // A closure named like the helper is a function value, not the helper.
    assert!(
        first_callee("", "\t\tOptionalParam := func(a A, k string) (bool, error) { return true, nil }\n\t\tOptionalParam(args, \"p\")").starts_with("dynamic")
    );
    // A method value is a function value too.
    assert!(callees(&source("", "\t\tf := deps.Create\n\t\tf(ctx)"))[0].starts_with("dynamic"));
    // A receiver built in the region is not the result of a reviewed call.
    assert!(first_callee("", "\t\tclient := &Fake{}\n\t\tclient.Repositories.Create(ctx)").starts_with('?'));
    // A package variable can be rebound by any code of the package.
    assert!(first_callee("var OptionalParam2 = func() {}\n", "\t\tOptionalParam2()").starts_with("dynamic"));
    // A package function the profile does not review is not trusted.
    assert!(first_callee("func helper() {}\n", "\t\thelper()").starts_with('?'));
    // A name declared nowhere resolves to nothing.
    assert!(first_callee("", "\t\tghost.Do()").starts_with('?'));
}

#[test]
fn shadowing_escalates() {
    assert_eq!(escalation("", "\t\ttrue := false\n\t\t_ = true"), EscalationCode::ShapeMismatch);
    assert_eq!(escalation("const false = true\n", ""), EscalationCode::ShapeMismatch);
    assert_eq!(escalation("", "\t\tgithub := deps.Client()\n\t\t_ = github"), EscalationCode::ShapeMismatch);
    assert_eq!(escalation("", "\t\tswitch string := args.(type) {\n\t\tdefault:\n\t\t\t_ = string\n\t\t}"), EscalationCode::ShapeMismatch);
}

#[test]
fn shape_mismatchs_escalate() {
    let region = || vec![RegionSpec { name: "r".into(), kind: RegionKind::Literal("F".into()), optional: false, file: None }];
    let with = |path: &str, text: &str| {
        let extra = SourceFile { path: path.into(), bytes: text.as_bytes().to_vec() };
        analyze_with(&Go, &[file(&source("", "")), extra], &region(), &[], &env()).map(|_| ()).expect_err("escalates").code
    };
    assert_eq!(with("go.mod", "module m\nreplace github.com/google/go-github/v87 => ../fork\n"), EscalationCode::ShapeMismatch);
    assert_eq!(with("pkg/y.go", "//go:build linux\n\npackage x\n"), EscalationCode::ShapeMismatch);
    assert_eq!(with("pkg/y_windows.go", "package x\n"), EscalationCode::ShapeMismatch);
    assert_eq!(with("pkg/y.go", "package x\n\nfunc init() {}\n"), EscalationCode::ShapeMismatch);
    assert_eq!(with("pkg/y.go", "package x\n\nvar _ = func() int { return 0 }()\n"), EscalationCode::ShapeMismatch);
}

#[test]
fn a_nested_literal_parameter_is_a_method_receiver_not_a_function_value() {
    // Its declared type fixes what a method call through it reaches.
    check("\t\tregister := func(s *Server) { s.AddTool(ctx) }\n\t\t_ = register", &["Server#AddTool"]);
    // Calling it directly calls whatever function value it holds.
    let called = callees(&source("", "\t\trun := func(f func()) { f() }\n\t\t_ = run"));
    assert!(called[0].starts_with("dynamic:"), "{called:?}");
    // A nested local bound to a value built here stays unresolved.
    let built = callees(&source("", "\t\tregister := func() { s := &Server{}; s.AddTool(ctx) }\n\t\t_ = register"));
    assert!(built[0].starts_with('?'), "{built:?}");
}

#[test]
fn a_typed_parameter_is_spelled_by_its_type_whatever_its_name() {
    let named = |name: &str| {
        format!("package x\n\nfunc F() T {{\n\treturn New(func(ctx C, {name} *Deps, args A) error {{\n\t\t{name}.GetClient(ctx)\n\t\treturn nil\n\t}})\n}}\n")
    };
    assert_eq!(callees(&named("deps")), ["Deps#GetClient"]);
    assert_eq!(callees(&named("d")), ["Deps#GetClient"], "renaming the parameter changes nothing");
}

#[test]
fn a_parameter_bound_again_keeps_its_spelled_name() {
    // Assigned in the region: the name may hold another object at the call.
    let src = "package x\n\nfunc F() T {\n\treturn New(func(ctx C, deps *Deps, args A) error {\n\t\tdeps = other()\n\t\tdeps.GetClient(ctx)\n\t\treturn nil\n\t})\n}\n";
    assert!(!callees(src).iter().any(|c| c == "Deps#GetClient"), "{:?}", callees(src));
    // Another type under the same name is another identity.
    let src = "package x\n\nfunc F() T {\n\treturn New(func(ctx C, deps *Public, args A) error {\n\t\tdeps.GetClient(ctx)\n\t\treturn nil\n\t})\n}\n";
    assert_eq!(callees(src), ["Public#GetClient"]);
}

#[test]
fn a_local_bound_once_by_a_call_is_that_result() {
    let body = |names: &str, use_: &str| format!("\t\t{names} := deps.GetClient(ctx)\n\t\t{use_}.Repositories.Create(ctx)");
    assert_eq!(callees(&source("", &body("client, err", "client"))), ["D#GetClient", "D#GetClient()@0.Repositories.Create"]);
    assert_eq!(callees(&source("", &body("gh, err", "gh"))), ["D#GetClient", "D#GetClient()@0.Repositories.Create"], "renaming changes nothing");
    // Another result of the same call is another object.
    assert_eq!(callees(&source("", &body("err, client", "client"))), ["D#GetClient", "D#GetClient()@1.Repositories.Create"]);
    // Bound twice: the name may hold either value.
    let twice = "\t\tclient, err := deps.GetClient(ctx)\n\t\tclient, err = deps.Other(ctx)\n\t\tclient.Repositories.Create(ctx)";
    assert!(callees(&source("", twice)).iter().any(|c| c == "client.Repositories.Create"), "{:?}", callees(&source("", twice)));
}

#[test]
fn a_function_of_the_package_handed_on_as_a_value_needs_a_region_as_a_call_does() {
    let helper = "func note(s string) bool { return true }\n";
    let handed = "?handed note: a function of the package (pkg/x.go:4) passed as a value for whatever receives it to call, which the profile does not review as a region";
    for body in
        ["\t\tsort.Slice(xs, note)", "\t\tkeep := Filter{Check: note}\n\t\t_ = keep", "\t\tvar check = note\n\t\t_ = check", "\t\tcheck := note\n\t\t_ = check"]
    {
        let got = callees(&source(helper, body));
        assert!(got.iter().any(|c| c == handed), "{body}: {got:?}");
    }
    // A reviewed function, a local of that name, a field key of that name: not handed release code.
    let reviewed = callees(&source("", "\t\tsort.Slice(xs, OptionalParam[bool])"));
    assert!(!reviewed.iter().any(|c| c.starts_with("?handed")), "{reviewed:?}");
    for body in ["\t\tnote := 1\n\t\t_ = note", "\t\tkeep := Filter{note: 1}\n\t\t_ = keep"] {
        let got = callees(&source(helper, body));
        assert!(!got.iter().any(|c| c.starts_with("?handed")), "{body}: {got:?}");
    }
}

/// A release on disk: a module `example.com/m` whose handler package
/// `pkg/h` calls `u.Done` of its own package `pkg/u`, whose body is `util`.
/// Registered as the compiler does: the loader completes the closure, then
/// the handler literal of `F` is analysed with what the loader found.
fn release_calling(util: &str, pinned: &[(&str, &str)]) -> Result<fcd_frontends::Analysis, fcd_frontends::Escalation> {
    let handler = "package h\n\nimport u \"example.com/m/pkg/u\"\n\nfunc F() T {\n\treturn New(func(msg string) any {\n\t\treturn u.Done(msg)\n\t})\n}\n";
    let release = module::load(&[("pkg/h/h.go", handler), ("pkg/u/u.go", util)], &["pkg/h/h.go"]);
    let imports = [("u".into(), vec!["example.com/m/pkg/u".into()])].into();
    let pinned_functions = pinned.iter().map(|(name, digest)| ((*name).to_owned(), vec![(*digest).to_owned()])).collect();
    let env = Env {
        libraries: release.libraries,
        packages: release.packages,
        language: LanguageSettings::new(Settings { imports, pinned_functions, ..Settings::default() }),
        ..Env::default()
    };
    let region = RegionSpec { name: "r".into(), kind: RegionKind::Literal("F".into()), optional: false, file: None };
    analyze_with(&Go, &release.files, &[region], &[], &env)
}

const UTIL: &str = "package u\n\ntype answer struct{ text string }\n\nfunc (a *answer) String() string { return a.text }\n\nfunc wrap(s string) *answer { return &answer{text: s} }\n\n// Done only builds a value.\nfunc Done(s string) *answer { return wrap(s) }\n";

/// The digest the escalation prints for `pkg/u.Done`.
fn printed_digest(e: &fcd_frontends::Escalation) -> String {
    let at = e.detail.find("digest sha256:").expect("prints a digest") + "digest ".len();
    e.detail[at..at + 71].to_owned()
}

#[test]
fn a_function_of_another_package_of_the_release_is_pinned_by_its_closure() {
    // Unpinned: the callee is release code no region reads; the escalation names it and its digest.
    let e = release_calling(UTIL, &[]).expect_err("escalates");
    assert_eq!(e.code, EscalationCode::InventoryViolation, "{e}");
    assert!(e.detail.contains("`pkg/u.Done` is defined in the release (package pkg/u)") && e.detail.contains("`u.Done`"), "{e}");
    let digest = printed_digest(&e);
    // Pinned with that digest: it registers.
    release_calling(UTIL, &[("pkg/u.Done", &digest)]).expect("registers");
    // A comment changes no token: the digest holds.
    release_calling(&UTIL.replace("// Done only builds a value.", "// Done: a value, nothing else."), &[("pkg/u.Done", &digest)]).expect("registers");
    // Any change to what it reaches (a helper, a method of a type it builds) escalates with the new digest.
    for changed in [UTIL.replace("return &answer{text: s}", "return &answer{text: s + \"!\"}"), UTIL.replace("return a.text", "return \"\"")] {
        let e = release_calling(&changed, &[("pkg/u.Done", &digest)]).expect_err("escalates");
        assert!(e.detail.contains("`pkg/u.Done` is pinned") && !e.detail.contains(&digest), "{e}");
        assert_ne!(printed_digest(&e), digest);
    }
}

#[test]
fn a_pinned_closure_refuses_what_its_text_does_not_bind() {
    let refused = |util: &str, why: &str| {
        let e = release_calling(util, &[("pkg/u.Done", "sha256:0000000000000000000000000000000000000000000000000000000000000000")]).expect_err("escalates");
        assert!(e.detail.contains(why), "{why} in {e}");
    };
    // An exported package variable some code writes, process-wide state, a build constraint.
    refused(
        "package u\n\nvar Prefix = \"\"\n\nfunc Done(s string) string { return Prefix + s }\n\nfunc Set(p string) { Prefix = p }\n",
        "`pkg/u.Prefix` is an exported package variable (pkg/u/u.go:3) any package of the binary may write: it is used at pkg/u/u.go:7",
    );
    refused("package u\n\nimport \"os\"\n\nfunc Done(s string) string { os.Setenv(\"A\", s); return s }\n", "writes process-wide state");
    refused("//go:build linux\n\npackage u\n\nfunc Done(s string) string { return s }\n", "compiled only under conditions");
    // A variable only the closure names is part of its text.
    let e = release_calling("package u\n\nvar count int\n\nfunc Done(s string) string { count++; return s }\n", &[]).expect_err("escalates");
    assert!(e.detail.contains("the code it reaches has digest"), "{e}");
}

#[test]
fn every_declaration_naming_an_unexported_variable_of_a_closure_joins_it() {
    // `Set` (a function) and `T.Reset` (a method) write the variable `Done` reads: both join the
    // closure, so a change to either changes the digest, and a pin of the old one escalates.
    let util = "package u\n\nvar prefix = \"\"\n\nfunc Set(p string) { prefix = p }\n\ntype T struct{}\n\nfunc (t *T) Reset() { prefix = \"\" }\n\nfunc Done(s string) string { return prefix + s }\n";
    let digest = printed_digest(&release_calling(util, &[]).expect_err("escalates"));
    release_calling(util, &[("pkg/u.Done", &digest)]).expect("registers");
    for changed in [util.replace("prefix = p }", "prefix = p + p }"), util.replace("prefix = \"\" }", "prefix = \"-\" }")] {
        let e = release_calling(&changed, &[("pkg/u.Done", &digest)]).expect_err("escalates");
        assert!(e.detail.contains("`pkg/u.Done` is pinned"), "{e}");
        assert_ne!(printed_digest(&e), digest);
    }
    // A variable no code outside names: the closure is `Done` and the variable alone; a
    // function that only reads it (`Len`) does not join, so its text may change.
    let alone = "package u\n\nvar prefix = \"\"\n\nfunc Done(s string) string { return prefix + s }\n";
    let alone_digest = printed_digest(&release_calling(alone, &[]).expect_err("escalates"));
    assert_ne!(alone_digest, digest);
    for reader in ["func Len() int { return len(prefix) }\n", "func Len() int { return len(prefix) + 1 }\n"] {
        assert_eq!(printed_digest(&release_calling(&format!("{alone}\n{reader}"), &[]).expect_err("escalates")), alone_digest);
    }
}

#[test]
fn an_exported_error_of_the_standard_library_may_be_handed_on() {
    // `Done` reads ErrX, which other code returns: the error errors.New built cannot be changed
    // through a copy, so handing it on is a read; writing the variable, or importing unsafe, is not.
    let util = "package u\n\nimport \"errors\"\n\nvar ErrX = errors.New(\"x\")\n\nfunc Check() error { return ErrX }\n\nfunc Done(s string) error {\n\tif s == \"\" {\n\t\treturn ErrX\n\t}\n\treturn nil\n}\n";
    let digest = printed_digest(&release_calling(util, &[]).expect_err("escalates"));
    release_calling(util, &[("pkg/u.Done", &digest)]).expect("registers");
    let zero = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
    for (changed, why) in [
        (format!("{util}\nfunc Reset() {{ ErrX = nil }}\n"), "`pkg/u.ErrX` is an exported package variable"),
        (
            util.replace("import \"errors\"", "import (\n\t\"errors\"\n\t\"unsafe\"\n)\n\nvar _ = unsafe.Sizeof(0)"),
            "`pkg/u.ErrX` is an exported package variable",
        ),
        (
            util.replace("errors.New(\"x\")", "newError(\"x\")") + "\nfunc newError(s string) error { return errors.New(s) }\n",
            "`pkg/u.ErrX` is an exported package variable",
        ),
    ] {
        let e = release_calling(&changed, &[("pkg/u.Done", zero)]).expect_err("escalates");
        assert!(e.detail.contains(why), "{why} in {e}");
    }
}

#[test]
fn a_missing_package_of_the_release_escalates() {
    // The import names the module's own package, which the release does not hold: never trusted as a dependency.
    let e = release_calling(UTIL, &[]).map(|_| ()).expect_err("escalates");
    assert!(e.detail.contains("pkg/u.Done"), "{e}");
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::create_dir_all(dir.path().join("pkg/h")).expect("creates");
    std::fs::write(dir.path().join("go.mod"), "module example.com/m\n").expect("writes");
    let handler = "package h\n\nimport u \"example.com/m/pkg/u\"\n\nfunc F() T {\n\treturn New(func(msg string) any {\n\t\treturn u.Done(msg)\n\t})\n}\n";
    std::fs::write(dir.path().join("pkg/h/h.go"), handler).expect("writes");
    let selected = vec![SourceFile { path: "pkg/h/h.go".into(), bytes: handler.as_bytes().to_vec() }];
    let loaded = fcd_frontend_go::loader::load(dir.path(), &selected).expect("reads").expect("loads");
    assert!(loaded.libraries.is_empty() && loaded.packages.contains_key("example.com/m/..."));
    let imports = [("u".into(), vec!["example.com/m/pkg/u".into()])].into();
    let env = Env { packages: loaded.packages, language: LanguageSettings::new(Settings { imports, ..Settings::default() }), ..Env::default() };
    let region = RegionSpec { name: "r".into(), kind: RegionKind::Literal("F".into()), optional: false, file: None };
    let e = analyze_with(&Go, &selected, &[region], &[], &env).map(|_| ()).expect_err("escalates");
    assert!(e.detail.contains("not among the loaded files") && e.detail.contains("pkg/u.Done"), "{e}");
}
