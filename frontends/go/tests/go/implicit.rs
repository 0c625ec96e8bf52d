//! Methods Go runs without a call naming them (`fmt` calls `Error` and
//! `String`, `encoding/json` calls `MarshalJSON`, …): a region that names a
//! type of the release reaches them, through fields and embedding too, so
//! each must be a region or its type pinned, or the registration escalates.

use fcd_frontend_go::{Go, Settings};
use fcd_frontends::{Analysis, Env, Escalation, EscalationCode, LanguageSettings, RegionKind, RegionSpec, analyze_with};

use crate::module;

/// [`register_in`] with a handler literal `func(msg string) any` in `func F() T`.
fn register(types: &str, body: &str, util: &str, methods: &[&str], pinned: &[(&str, &str)]) -> Result<Analysis, Escalation> {
    register_in("func F() T", "msg string", types, body, util, methods, pinned)
}

/// A release on disk: module `example.com/m`, whose package `pkg/h` holds
/// the handler literal (parameters `params`, its body `body`) of the
/// function `outer` and `types.go` (`types`), and whose package `pkg/u` is
/// `util`. Registered as the compiler does (the loader completes the
/// closure), with `methods` as further regions (`T.Error`) and `pinned` in
/// `source.pinned-functions`.
fn register_in(outer: &str, params: &str, types: &str, body: &str, util: &str, methods: &[&str], pinned: &[(&str, &str)]) -> Result<Analysis, Escalation> {
    analyze(outer, params, types, body, util, methods, pinned, false)
}

/// [`register_in`], or with `alone` the first region read alone, as `fcd debug region` reads it.
#[allow(clippy::too_many_arguments)]
fn analyze(
    outer: &str,
    params: &str,
    types: &str,
    body: &str,
    util: &str,
    methods: &[&str],
    pinned: &[(&str, &str)],
    alone: bool,
) -> Result<Analysis, Escalation> {
    let handler = format!(
        "package h\n\nimport (\n\t\"encoding/json\"\n\t\"fmt\"\n\n\tu \"example.com/m/pkg/u\"\n)\n\n{outer} {{\n\treturn New(func({params}) any {{\n{body}\n\t}})\n}}\n"
    );
    let types = format!("package h\n\nimport \"os\"\n\n{types}");
    let release = module::load(&[("pkg/h/h.go", &handler), ("pkg/h/types.go", &types), ("pkg/u/u.go", util)], &["pkg/h/h.go", "pkg/h/types.go"]);
    let imports = [("u".into(), vec!["example.com/m/pkg/u".into()])].into();
    let pinned_functions = pinned.iter().map(|(name, digest)| ((*name).to_owned(), vec![(*digest).to_owned()])).collect();
    let env = Env {
        libraries: release.libraries,
        packages: release.packages,
        alone,
        reviewed: methods.iter().map(|m| m.rsplit('.').next().unwrap_or(m).to_owned()).collect(),
        language: LanguageSettings::new(Settings { imports, pinned_functions, ..Settings::default() }),
        ..Env::default()
    };
    let mut regions = vec![RegionSpec { name: "r".into(), kind: RegionKind::Literal("F".into()), optional: false, file: None }];
    regions.extend(methods.iter().filter(|_| !alone).map(|m| RegionSpec {
        name: (*m).to_owned(),
        kind: RegionKind::Function((*m).to_owned()),
        optional: false,
        file: None,
    }));
    analyze_with(&Go, &release.files, &regions, &[], &env)
}

const NO_UTIL: &str = "package u\n\nfunc Done(s string) string { return s }\n";

/// A type whose `Error` writes a file where fmt would print it.
const LEAKY: &str =
    "type leaky struct{ text string }\n\nfunc (l leaky) Error() string {\n\t_ = os.WriteFile(\"/tmp/out\", []byte(l.text), 0o600)\n\treturn l.text\n}\n";

fn escalates(types: &str, body: &str) -> Escalation {
    let e = register(types, body, NO_UTIL, &[], &[]).map(|_| ()).expect_err("escalates");
    assert_eq!(e.code, EscalationCode::InventoryViolation, "{e}");
    e
}

/// The digest the escalation prints for the type to pin.
fn printed_digest(e: &Escalation) -> String {
    let at = e.detail.find("digest sha256:").expect("prints a digest") + "digest ".len();
    e.detail[at..at + 71].to_owned()
}

#[test]
fn a_region_building_a_release_type_with_an_implicit_method_escalates_naming_it() {
    // fmt calls Error, String; encoding/json calls MarshalJSON: nothing in the region names them.
    for (types, body, method) in [
        (LEAKY, "\t\treturn fmt.Sprint(leaky{text: msg})", "leaky.Error"),
        ("type label struct{ s string }\n\nfunc (l *label) String() string { return l.s }\n", "\t\treturn fmt.Sprint(&label{s: msg})", "label.String"),
        (
            "type doc struct{ s string }\n\nfunc (d doc) MarshalJSON() ([]byte, error) { return []byte(d.s), nil }\n",
            "\t\tvar d doc\n\t\tb, _ := json.Marshal(d)\n\t\treturn b",
            "doc.MarshalJSON",
        ),
        // A conversion, `new`, a type assertion name the type as surely.
        ("type name string\n\nfunc (n name) String() string { return string(n) }\n", "\t\treturn fmt.Sprint(name(msg))", "name.String"),
        ("type box struct{}\n\nfunc (b *box) String() string { return \"\" }\n", "\t\treturn new(box)", "box.String"),
        ("type box struct{}\n\nfunc (b box) Error() string { return \"\" }\n", "\t\tvar v any = msg\n\t\t_, ok := v.(box)\n\t\treturn ok", "box.Error"),
    ] {
        let e = escalates(types, body);
        assert!(e.detail.contains(&format!("`{method}` (pkg/h/types.go:")) && e.detail.contains("region `r` names"), "{method}: {e}");
        // Anchored at the method's declaration.
        let anchor = e.anchor.clone().expect("an anchor");
        assert_eq!(anchor.file, "pkg/h/types.go", "{e}");
        assert!(e.detail.contains(&format!("pkg/h/types.go:{})", anchor.line)), "{e}");
        assert!(e.detail.contains("`pkg/h."), "names what to pin: {e}");
    }
}

#[test]
fn a_parameter_of_a_release_type_escalates_too() {
    let types = "type note struct{}\n\nfunc (n note) String() string { return \"\" }\n";
    // The handler's own parameter.
    let e = register_in("func F() T", "m note", types, "\t\treturn fmt.Sprint(m)", NO_UTIL, &[], &[]).map(|_| ()).expect_err("escalates");
    assert!(e.detail.contains("`note.String`"), "{e}");
    // A parameter of the function around the literal, which the literal uses.
    let e = register_in("func F(n *note) T", "msg string", types, "\t\treturn fmt.Sprint(n)", NO_UTIL, &[], &[]).map(|_| ()).expect_err("escalates");
    assert!(e.detail.contains("`note.String`"), "{e}");
    // One the literal never uses hands it nothing.
    register_in("func F(n *note) T", "msg string", types, "\t\treturn msg", NO_UTIL, &[], &[]).expect("registers");
}

#[test]
fn through_a_field_and_through_embedding_too() {
    let inner = "type inner struct{ s string }\n\nfunc (i *inner) String() string { return i.s }\n";
    for (outer, how) in [
        ("type outer struct{ in inner }\n", "in the field `in` of `outer`"),
        ("type outer struct{ items []*inner }\n", "in the field `items` of `outer`"),
        ("type outer struct{ byName map[string]inner }\n", "in the field `byName` of `outer`"),
        ("type outer struct{ *inner }\n", "embedded in `outer` (its methods are promoted)"),
        ("type outer struct{ inner }\n", "embedded in `outer` (its methods are promoted)"),
        ("type outer = inner\n", "in the declaration of `outer`"),
        ("type outer struct{ w wrapper }\n\ntype wrapper struct{ inner }\n", "embedded in `wrapper`"),
    ] {
        let e = escalates(&format!("{outer}\n{inner}"), "\t\treturn fmt.Sprint(outer{})");
        assert!(e.detail.contains("`inner.String`") && e.detail.contains(how), "{how}: {e}");
    }
    // A function or interface type holds no value of the types its signature names.
    for outer in ["type outer struct{ make func() inner }\n", "type outer struct{ s interface{ Get() inner } }\n"] {
        register(&format!("{outer}\n{inner}"), "\t\treturn fmt.Sprint(outer{})", NO_UTIL, &[], &[]).unwrap_or_else(|e| panic!("{outer}: {e}"));
    }
}

#[test]
fn the_method_made_a_region_registers() {
    register(LEAKY, "\t\treturn fmt.Sprint(leaky{text: msg})", NO_UTIL, &["leaky.Error"], &[]).expect("registers");
    // Through embedding, the region is the embedded type's method.
    let types = "type outer struct{ *leaky }\n\n".to_owned() + LEAKY;
    register(&types, "\t\treturn fmt.Sprint(outer{})", NO_UTIL, &["leaky.Error"], &[]).expect("registers");
    // `T.Method` is that method: another type's method of the same name is not it.
    let two = "type other struct{}\n\nfunc (o other) Error() string { return \"\" }\n\n".to_owned() + LEAKY;
    let e = register(&two, "\t\treturn fmt.Sprint(leaky{}, other{})", NO_UTIL, &["leaky.Error"], &[]).map(|_| ()).expect_err("escalates");
    assert!(e.detail.contains("`other.Error`"), "{e}");
    register(&two, "\t\treturn fmt.Sprint(leaky{}, other{})", NO_UTIL, &["leaky.Error", "other.Error"], &[]).expect("registers");
}

#[test]
fn a_type_without_implicit_methods_registers() {
    let types = "type plain struct{ s string; n []nested }\n\ntype nested struct{}\n\nfunc (p plain) Describe() string { return p.s }\n\nfunc (n *nested) Size() int { return 0 }\n";
    register(types, "\t\tv := plain{s: msg}\n\t\treturn fmt.Sprint(v)", NO_UTIL, &[], &[]).expect("registers");
    // A library type is trusted by identity; a type nobody names is not on the path.
    register(LEAKY, "\t\treturn fmt.Sprint(json.RawMessage(msg))", NO_UTIL, &[], &[]).expect("registers");
}

#[test]
fn a_pinned_type_binds_its_methods_by_digest() {
    let body = "\t\treturn fmt.Sprint(leaky{text: msg})";
    let e = escalates(LEAKY, body);
    let digest = printed_digest(&e);
    assert!(e.detail.contains("pin `pkg/h.leaky`"), "{e}");
    register(LEAKY, body, NO_UTIL, &[], &[("pkg/h.leaky", &digest)]).expect("registers");
    // Pinning the outer type binds what its declaration names, methods included.
    let outer = "type outer struct{ l leaky }\n\n".to_owned() + LEAKY;
    let e = escalates(&outer, "\t\treturn fmt.Sprint(outer{})");
    assert!(e.detail.contains("`leaky.Error`") && e.detail.contains("pin `pkg/h.leaky`"), "{e}");
    // The outer type pinned with the leaky type's digest: not what its closure hashes.
    let wrong = register(&outer, "\t\treturn fmt.Sprint(outer{})", NO_UTIL, &[], &[("pkg/h.outer", &digest)]).map(|_| ()).expect_err("escalates");
    assert!(wrong.detail.contains("`pkg/h.outer` is pinned"), "{wrong}");
    let outer_digest = printed_digest(&wrong);
    register(&outer, "\t\treturn fmt.Sprint(outer{})", NO_UTIL, &[], &[("pkg/h.outer", &outer_digest)]).expect("registers");
    // The method changed: the listed digest no longer holds.
    let changed = LEAKY.replace("0o600", "0o644");
    let e = register(&changed, body, NO_UTIL, &[], &[("pkg/h.leaky", &digest)]).map(|_| ()).expect_err("escalates");
    assert!(e.detail.contains("`pkg/h.leaky` is pinned") && !e.detail.contains(&digest), "{e}");
}

#[test]
fn a_type_of_another_package_of_the_release_counts_the_same() {
    let util = "package u\n\ntype Answer struct{ Text string }\n\nfunc (a Answer) MarshalJSON() ([]byte, error) { return []byte(a.Text), nil }\n";
    let body = "\t\tvar a u.Answer\n\t\tb, _ := json.Marshal(a)\n\t\treturn b";
    let e = register("", body, util, &[], &[]).map(|_| ()).expect_err("escalates");
    assert!(e.detail.contains("`Answer.MarshalJSON` (pkg/u/u.go:5)") && e.detail.contains("pin `pkg/u.Answer`"), "{e}");
    // Its package is read as a library, where no region is looked for: pinning is the way.
    assert!(e.detail.contains("pkg/u/u.go is not among the files `source.files` selects") && !e.detail.contains("make it a region"), "{e}");
    let digest = printed_digest(&e);
    register("", body, util, &[], &[("pkg/u.Answer", &digest)]).expect("registers");
    // A field of a type of the handler's package reaching it, by its qualified name.
    let e = register("import u \"example.com/m/pkg/u\"\n\ntype wrap struct{ a *u.Answer }\n", "\t\treturn fmt.Sprint(wrap{})", util, &[], &[])
        .map(|_| ())
        .expect_err("escalates");
    assert!(e.detail.contains("`Answer.MarshalJSON`") && e.detail.contains("field `a` of `wrap`"), "{e}");
}

#[test]
fn debug_region_lists_each_type_to_pin_with_its_closure() {
    let outer = "type outer struct{ l leaky }\n\n".to_owned() + LEAKY;
    let body = "\t\treturn fmt.Sprint(outer{})";
    let digest = printed_digest(&escalates(&outer, body));
    // Read alone nothing is checked; what the region reaches is listed, with the digest the escalation prints.
    let read = analyze("func F() T", "msg string", &outer, body, NO_UTIL, &[], &[], true).expect("reads");
    let code = read.reached.iter().find(|r| r.callee == "pkg/h.leaky").expect("lists the type");
    assert_eq!(code.digest.as_deref(), Ok(digest.as_str()));
    assert!(code.covered.contains("`leaky.Error` (pkg/h/types.go:") && code.covered.contains("unread"), "{}", code.covered);
    assert!(code.definitions.iter().any(|(name, _)| name == "pkg/h.leaky"), "{:?}", code.definitions);
    // A region of that name, read alone, covers it.
    let read = analyze("func F() T", "msg string", &outer, body, NO_UTIL, &["leaky.Error"], &[], true).expect("reads");
    assert!(read.reached.iter().any(|r| r.callee == "pkg/h.leaky" && r.covered.ends_with("a region")), "{:?}", read.reached);
}
