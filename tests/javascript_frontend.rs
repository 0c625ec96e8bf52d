//! The JavaScript/TypeScript frontend through its public interface: one
//! grammar per file extension, callee identities, and what escalates.

use fcd_frontends::{ArgPattern, EscalationCode, FactKind, FactSpec, FactValue, Identity, Lang, RegionKind, RegionSpec, SourceFile, analyze};

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

#[test]
fn iterating_a_calls_result_calls_its_iterator_anything_else_is_dynamic() {
    assert_eq!(callees("a.js", "  for (const s of split(sql)) check(s);"), ["split()[Symbol.iterator]", "split", "check"]);
    assert_eq!(callees("a.ts", "  for (const s of opts.parts(sql)) {}"), ["opts.parts()[Symbol.iterator]", "opts.parts"]);
    let local = callees("a.js", "  const parts = split(sql);\n  for (const s of parts) {}");
    assert!(local.iter().any(|c| c.starts_with("dynamic: `for … of`")), "{local:?}");
    let awaited = callees("a.js", "  async function g() { for await (const s of split(sql)) {} }");
    assert!(awaited.iter().any(|c| c.starts_with("dynamic: `for … of`")), "{awaited:?}");
    // A local named like the callee is not the module's function.
    let shadowed = callees("a.js", "  const split = opts.split;\n  for (const s of split(sql)) {}");
    assert_eq!(shadowed.iter().filter(|c| c.starts_with("?split: a local")).count(), 2, "{shadowed:?}");
}

/// The facts a guard comparing `verdict(…)` with `"deny"` finds in `body`, a
/// handler whose sink is `db.run(sql)`.
fn comparison_guard(body: &str) -> Result<Vec<String>, fcd_frontends::Escalation> {
    let src = format!("function h(args) {{\n  const {{ sql }} = args;\n{body}\n  return db.run(sql);\n}}\n");
    let file = SourceFile { path: "a.js".into(), bytes: src.into_bytes() };
    let pattern = |p: &str| ArgPattern::parse(p).unwrap();
    let facts = [
        FactSpec {
            name: "sink".into(),
            region: "r".into(),
            kind: FactKind::Call { callee: "db.run".into(), args: Some(vec![pattern("var:sql")]), matching: false },
        },
        FactSpec {
            name: "guard".into(),
            region: "r".into(),
            kind: FactKind::Guard {
                callee: "verdict".into(),
                receiver: None,
                args: vec![pattern("result:makePolicy"), pattern("var:sql")],
                before: "sink".into(),
                negated: false,
                returns: Some("DENIED".into()),
                conjuncts: vec![],
                equals: Some("deny".into()),
            },
        },
    ];
    let region = RegionSpec { name: "r".into(), kind: RegionKind::Function("h".into()), optional: false };
    let a = analyze(Lang::JavaScript, &[file], &[region], &facts)?;
    Ok(a.facts.iter().map(|f| format!("{} {:?}", f.name, f.values.get("test"))).collect())
}

#[test]
fn a_guard_comparing_a_call_with_a_literal_on_a_once_bound_result() {
    let test = Some(FactValue::Text("verdict === \"deny\"".into()));
    let found = vec!["sink None".to_owned(), format!("guard {:?}", test.as_ref())];
    let guard = "  const p = makePolicy(args.ro);\n  if (verdict(p, sql) === \"deny\") { return \"DENIED\"; }";
    assert_eq!(comparison_guard(guard).unwrap(), found);
    let flipped = "  const gate = makePolicy(args.ro);\n  if (\"deny\" === verdict(gate, sql)) return \"DENIED\";";
    assert_eq!(comparison_guard(flipped).unwrap(), found);
}

#[test]
fn a_comparison_guard_on_another_value_or_literal_is_no_guard() {
    let sink_only = vec!["sink None".to_owned()];
    for body in [
        // the policy is not the reviewed call's result
        "  const p = { deny: \"allow\" };\n  if (verdict(p, sql) === \"deny\") return \"DENIED\";",
        // bound twice
        "  let p = makePolicy(args.ro);\n  p = makePolicy(false);\n  if (verdict(p, sql) === \"deny\") return \"DENIED\";",
        // another literal, a loose comparison, the bare call
        "  const p = makePolicy(args.ro);\n  if (verdict(p, sql) === \"allow\") return \"DENIED\";",
        "  const p = makePolicy(args.ro);\n  if (verdict(p, sql) == \"deny\") return \"DENIED\";",
        "  const p = makePolicy(args.ro);\n  if (verdict(p, sql)) return \"DENIED\";",
        // the compared value is not the call when the other operand is truthy
        "  const p = makePolicy(args.ro);\n  if ((args.skip || verdict(p, sql)) === \"deny\") return \"DENIED\";",
    ] {
        assert_eq!(comparison_guard(body).unwrap(), sink_only, "{body}");
    }
}

#[test]
fn a_receiver_bound_once_is_what_its_value_is() {
    // A call's result, a chain of them, a fresh object and a module name: the local's own name drops out.
    assert_eq!(callees("a.js", "  const db = Manager.current(opts);\n  db.run(sql);"), ["Manager.current", "Manager.current().run"]);
    assert_eq!(
        callees("a.js", "  const reg = getRegistry();\n  const cfg = reg.config(opts);\n  cfg.check();"),
        ["getRegistry", "getRegistry().config", "getRegistry().config().check"]
    );
    assert_eq!(callees("a.js", "  const t = new Tracker(opts);\n  t.add(sql);"), ["new Tracker", "new Tracker().add"]);
    assert_eq!(callees("a.js", "  const m = Manager;\n  m.current();"), ["Manager.current"]);
    // A parameter keeps its name: nothing says what it is.
    assert_eq!(callees("a.js", "  opts.flush();"), ["opts.flush"]);
}

#[test]
fn a_typed_parameter_is_its_type() {
    let src = "function f(db: Connector, sql: string) {\n  db.executeSQL(sql);\n}\nfunction g(db: any) {\n  db.executeSQL(1);\n}\n";
    let a = analyze_one("src/a.ts", src, RegionKind::Function("f".into())).expect("analyzes");
    assert_eq!(a.regions[0].calls.iter().map(|c| c.identity.to_string()).collect::<Vec<_>>(), ["Connector#executeSQL"]);
    let b = analyze_one("src/a.ts", src, RegionKind::Function("g".into())).expect("analyzes");
    assert_eq!(b.regions[0].calls.iter().map(|c| c.identity.to_string()).collect::<Vec<_>>(), ["db.executeSQL"]);
}

#[test]
fn a_receiver_bound_twice_or_from_an_unspellable_value_stays_unresolved_or_spelled() {
    // Bound twice, once through a closure: which object it holds depends on the path.
    let twice = callees("a.js", "  let db = Manager.current();\n  const swap = () => { db = Other.make(); };\n  db.run(sql);");
    assert!(twice.iter().any(|c| c.starts_with("?db.run: `db` is bound more than once")), "{twice:?}");
    // Bound from a fallback: spelled by its name, which no inventory lists for what it is.
    assert_eq!(
        callees("a.js", "  const db = Manager.current() || fallback;\n  db.run(sql);"),
        ["Manager.current", "?db.run: `db` is a local whose value does not come from a reviewed call, a read or a parameter"]
    );
    // A local named like a global is what it is bound to, not the global.
    assert_eq!(callees("a.js", "  const Manager = rogue();\n  Manager.current();"), ["rogue", "rogue().current"]);
}

/// `Class.method`: the plain method of a module-level class, with what could
/// replace it elsewhere in the package escalating.
#[test]
fn class_methods_are_regions_and_what_replaces_them_escalates() {
    let method = || RegionKind::Function("Store.run".into());
    let class = "class Store {\n  id = 1;\n  run(text) {\n    return this.db.prepare(text).all();\n  }\n  stop() {}\n}\n";
    let analysis = analyze_one("src/a.js", class, method()).expect("a plain method is a region");
    let found: Vec<String> = analysis.regions[0].calls.iter().map(|c| format!("{:?}", c.identity)).collect();
    assert_eq!(found, ["Path(\"this.db.prepare().all\")", "Path(\"this.db.prepare\")"]);
    assert_eq!(analysis.regions[0].anchor.line, 3);

    // Another class's method of that name, or a function, is not the region.
    let other = "class Other {\n  run(text) { return text; }\n}\nfunction run() {}\n";
    assert_eq!(analyze_one("src/a.js", other, method()).unwrap_err().code, EscalationCode::RegionMissing);

    let escalates = |src: String, code: EscalationCode, says: &str| {
        let err = analyze_one("src/a.js", &src, method()).unwrap_err();
        assert_eq!(err.code, code, "{src}: {err:?}");
        assert!(err.detail.contains(says), "{src}: {}", err.detail);
        assert!(err.anchor.is_some(), "{src}");
    };
    escalates(class.replace("id = 1;", "run = () => 0;"), EscalationCode::RegionAmbiguous, "definitions");
    escalates(class.replace("  run(text) {", "  get run() {\n    return () => 0;\n  }\n  runAll(text) {"), EscalationCode::ShapeMismatch, "accessor");
    escalates(format!("{class}class Loud extends Store {{\n  run() {{ return 0; }}\n}}\n"), EscalationCode::ShapeMismatch, "extends `Store`");
    escalates(format!("{class}const s = new Store();\ns.run = () => 0;\n"), EscalationCode::ShapeMismatch, "shadows the reviewed `Store.run`");
    escalates(format!("{class}Reflect.set(new Store(), \"run\", () => 0);\n"), EscalationCode::ShapeMismatch, "names a reviewed method");
    escalates(format!("{class}Store.prototype.run = () => 0;\n"), EscalationCode::ShapeMismatch, "prototype");
    escalates(format!("{class}Store = class {{}};\n"), EscalationCode::ShapeMismatch, "is assigned");
}
