//! The JavaScript/TypeScript frontend through its public interface: one
//! grammar per file extension, callee identities, and what escalates.

use fcd_frontends::{EscalationCode, Identity, Lang, RegionKind, RegionSpec, SourceFile, analyze};

fn analyze_one(path: &str, src: &str, region: RegionKind) -> Result<fcd_frontends::Analysis, fcd_frontends::Escalation> {
    let file = SourceFile { path: path.into(), bytes: src.as_bytes().to_vec() };
    analyze(Lang::JavaScript, &[file], &[RegionSpec { name: "r".into(), kind: region, optional: false }], &[])
}

fn callees(path: &str, body: &str) -> Vec<String> {
    let src = format!("function f(sql, opts) {{\n{body}\n}}\n");
    let analysis = analyze_one(path, &src, RegionKind::Function("f".into())).expect("analyzes");
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

#[test]
fn dotted_tokens_with_optional_chaining_and_subscripts() {
    assert_eq!(
        callees("dist/index.js", "  const w = sql.match(/\\S+/)?.[0];\n  k[opts.id]?.join(\", \");\n  ConnectorManager.ensureConnected(opts);"),
        ["sql.match", "k[].join", "ConnectorManager.ensureConnected"]
    );
}

#[test]
fn typescript_files_use_the_typescript_grammar() {
    assert_eq!(callees("src/a.ts", "  const s = (sql as string).trim();\n  const n = opts!.count();"), ["sql.trim", "opts.count"]);
}

#[test]
fn indexed_results_and_eval_are_dynamic() {
    assert_eq!(callees("a.js", "  handlers[sql](opts);"), ["dynamic: calls an indexed value (`handlers[sql]`)"]);
    assert_eq!(callees("a.js", "  eval(sql);"), ["dynamic: eval"]);
    assert_eq!(callees("a.js", "  make()(sql);"), ["dynamic: calls the result of `make()`", "make"]);
}

#[test]
fn comments_strings_and_templates_without_holes_are_no_calls() {
    assert!(callees("a.js", "  // fs.writeFileSync(x)\n  const t = `exec(${sql.length})`;\n  const u = \"run()\";").is_empty());
}

#[test]
fn a_minified_bundle_escalates_with_its_line() {
    let src = format!("// header\n{}function f() {{}}\n", "var a=1;".repeat(400));
    let err = analyze_one("dist/index.js", &src, RegionKind::Function("f".into())).unwrap_err();
    assert_eq!(err.code, EscalationCode::ParseError);
    assert_eq!(err.anchor.unwrap().line, 2);
}

#[test]
fn module_level_variables_are_regions() {
    let src = "const allowedKeywords = { sqlite: [\"select\"] };\nfunction g() { const allowedKeywords = 1; }\n";
    let a = analyze_one("a.js", src, RegionKind::Variable("allowedKeywords".into())).unwrap();
    assert_eq!(a.regions[0].anchor.line, 1);
}
