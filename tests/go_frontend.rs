//! The Go frontend through its public interface: regions, callee identities
//! (generic instantiations, conversions, dynamic callees) and comments.

use fcd_frontends::{EscalationCode, Identity, Lang, RegionKind, RegionSpec, SourceFile, analyze};

fn file(src: &str) -> SourceFile {
    SourceFile { path: "pkg/x.go".into(), bytes: src.as_bytes().to_vec() }
}

/// The identities of the calls in the handler literal of `F`.
fn callees(src: &str) -> Vec<String> {
    let region = RegionSpec { name: "r".into(), kind: RegionKind::Literal("F".into()), optional: false };
    let analysis = analyze(Lang::Go, &[file(src)], &[region], &[]).expect("analyzes");
    analysis.regions[0]
        .calls
        .iter()
        .map(|c| match &c.identity {
            Identity::Path(p) => p.clone(),
            Identity::Unresolved(t) => format!("?{t}"),
            Identity::Dynamic(t) => format!("dynamic: {t}"),
        })
        .collect()
}

fn check(body: &str, expected: &[&str]) {
    let src = format!("package x\n\nfunc F() T {{\n\treturn New(func(ctx C, args A) error {{\n{body}\n\t\treturn nil\n\t}})\n}}\n");
    assert_eq!(callees(&src), expected, "in:\n{src}");
}

#[test]
fn dotted_tokens_and_generics_are_identities() {
    check(
        "\t\tv, err := OptionalParam[bool](args, \"p\")\n\t\tclient.Repositories.Create(ctx, v)\n\t\ts := string(b)\n\t\tdeps.GetClient(ctx).Do()",
        &["OptionalParam[bool]", "client.Repositories.Create", "string", "deps.GetClient().Do", "deps.GetClient"],
    );
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
    check("\t\tdefer func() { _ = resp.Body.Close() }()", &["func()", "resp.Body.Close"]);
}

#[test]
fn a_function_without_a_literal_has_no_region() {
    let region = RegionSpec { name: "r".into(), kind: RegionKind::Literal("F".into()), optional: false };
    let err = analyze(Lang::Go, &[file("package x\n\nfunc F() {}\n")], &[region], &[]).unwrap_err();
    assert_eq!(err.code, EscalationCode::RegionMissing);
}

#[test]
fn odd_go_does_not_panic() {
    for src in ["", "package", "package x\nfunc F[T any](x T) T { return x }\n", "package x\n\u{feff}func F() {}\n", "\x00\x01"] {
        let region = RegionSpec { name: "r".into(), kind: RegionKind::Function("F".into()), optional: false };
        let _ = analyze(Lang::Go, &[file(src)], &[region], &[]);
    }
}
