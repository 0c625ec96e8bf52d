//! The `field` fact, one implementation read through four languages: what
//! one member of the object a handler builds for its sink receives, the
//! variable of the upstream `default` fact or a literal.

use fcd_compiler::languages::frontend;
use fcd_frontends::{DefaultRule, Env, EscalationCode, FactKind, FactSpec, Lang, RegionKind, RegionSpec, SourceFile, analyze_with};
use fcd_model::effect::FactValue;

/// How one language spells a handler that reads `private` and passes it in an object to `sink`.
struct Spelling {
    lang: Lang,
    path: &'static str,
    region: RegionKind,
    /// The handler around `BODY`; `READ` binds the variable `V`.
    template: &'static str,
    read: &'static str,
    helper: &'static str,
    sink: &'static str,
    variable: &'static str,
    /// The sink's object with `private` set to `VALUE` (and another member).
    object: fn(&str) -> String,
    /// The object with the field set twice.
    twice: &'static str,
    /// The object with a member that could set anything.
    opaque: &'static str,
}

fn spellings() -> Vec<Spelling> {
    vec![
        Spelling {
            lang: Lang::Python,
            path: "m.py",
            region: RegionKind::Function("h".into()),
            template: "from lib import create, read_arg\n\n\ndef h(arguments: dict):\n    private = read_arg(arguments, \"private\")\nBODY\n",
            read: "",
            helper: "lib.read_arg",
            sink: "lib.create",
            variable: "private",
            object: |v| format!("    return create({{\"name\": \"x\", \"private\": {v}}})"),
            twice: "    return create({\"private\": private, \"private\": True})",
            opaque: "    return create({\"private\": private, **extra})",
        },
        Spelling {
            lang: Lang::JavaScript,
            path: "m.js",
            region: RegionKind::Function("h".into()),
            template: "function h(args) {\n  const priv = readArg(args, \"private\");\nBODY\n}\n",
            read: "",
            helper: "readArg",
            sink: "create",
            variable: "priv",
            object: |v| format!("  const body = {{ name: \"x\", private: {v} }};\n  return create(body);"),
            twice: "  return create({ private: priv, \"private\": true });",
            opaque: "  return create({ private: priv, ...extra });",
        },
        Spelling {
            lang: Lang::Go,
            path: "pkg/m.go",
            region: RegionKind::Literal("F".into()),
            template: "package m\n\nfunc F() T {\n\treturn New(func(ctx C, args A) error {\n\t\tprivate, err := OptionalParam[bool](args, \"private\")\nBODY\n\t})\n}\n",
            read: "",
            helper: "OptionalParam[bool]",
            sink: "create",
            variable: "private",
            object: |v| format!("\t\trepo := &Repository{{Name: \"x\", Private: {v}}}\n\t\treturn create(ctx, repo)"),
            twice: "",
            opaque: "",
        },
    ]
}

/// The fact's source and its literal or variable; or the escalation.
type Outcome = Result<Option<(String, FactValue)>, (EscalationCode, String)>;

impl Spelling {
    fn field(&self, body: &str) -> Outcome {
        let src = self.template.replace("BODY", body).replace("READ", self.read);
        let go = self.lang == Lang::Go;
        let facts = [
            FactSpec {
                name: "sink".into(),
                region: "r".into(),
                kind: FactKind::Call { callee: self.sink.into(), args: None, keywords: None, matching: false },
            },
            FactSpec {
                name: "private_default".into(),
                region: "r".into(),
                kind: FactKind::Default {
                    argument: "private".into(),
                    helpers: vec![(self.helper.into(), DefaultRule::Zero("false".into()))],
                    definition: None,
                    inert: None,
                },
            },
            FactSpec {
                name: "private_field".into(),
                region: "r".into(),
                kind: FactKind::Field {
                    sink: Some("sink".into()),
                    arg: Some(usize::from(go)),
                    field: if go { "Private".into() } else { "private".into() },
                    wrap: None,
                    from: "private_default".into(),
                },
            },
        ];
        let region = RegionSpec { name: "r".into(), kind: self.region.clone(), optional: false, file: None };
        let env = Env { reviewed: vec!["OptionalParam".into()], ..Env::default() };
        let file = SourceFile { path: self.path.into(), bytes: src.into_bytes() };
        let analysis = analyze_with(frontend(self.lang), &[file], &[region], &facts, &env).map_err(|e| (e.code, e.detail))?;
        Ok(analysis.facts.iter().find(|f| f.name == "private_field").map(|f| {
            let source = match f.values.get("source") {
                Some(FactValue::Text(t)) => t.clone(),
                other => panic!("source: {other:?}"),
            };
            let what = f.values.get("variable").or(f.values.get("literal")).cloned().expect("a variable or a literal");
            (source, what)
        }))
    }
}

#[test]
fn a_field_receives_the_default_variable_or_a_literal_in_every_language() {
    for s in spellings() {
        let passed = (s.object)(s.variable);
        assert_eq!(s.field(&passed), Ok(Some(("argument".into(), FactValue::Text(s.variable.into())))), "{}:\n{passed}", s.lang);
        let literal = (s.object)(if s.lang == Lang::Python { "True" } else { "true" });
        assert_eq!(s.field(&literal), Ok(Some(("literal".into(), FactValue::Bool(true)))), "{}:\n{literal}", s.lang);
        let other = (s.object)("compute()");
        assert!(matches!(s.field(&other), Err((EscalationCode::ShapeMismatch, d)) if d.contains("receives `compute()`")), "{}:\n{other}", s.lang);
        let absent = (s.object)(s.variable).replace("private:", "public:").replace("\"private\":", "\"public\":").replace("Private:", "Public:");
        assert_eq!(s.field(&absent), Ok(None), "{}:\n{absent}", s.lang);
    }
}

#[test]
fn an_object_that_may_change_or_hide_the_field_escalates() {
    for s in spellings() {
        let used_elsewhere = format!("{}\n{}", (s.object)(s.variable).replacen("return ", "", 1), (s.object)(s.variable).replace("create(", "create2("));
        let flagged = s.field(&used_elsewhere);
        assert!(matches!(&flagged, Err((EscalationCode::ShapeMismatch, _))), "{} variable used twice: {flagged:?}\n{used_elsewhere}", s.lang);
        for body in [s.twice, s.opaque].into_iter().filter(|b| !b.is_empty()) {
            let got = s.field(body);
            assert!(matches!(&got, Err((EscalationCode::ShapeMismatch, _))), "{}: {got:?}\n{body}", s.lang);
        }
    }
}

#[test]
fn python_reads_a_keyword_argument_of_the_sink() {
    let s = &spellings()[0];
    let src = s.template.replace("BODY", "    return create(name=\"x\", private=private)");
    let facts = [
        FactSpec { name: "sink".into(), region: "r".into(), kind: FactKind::Call { callee: "lib.create".into(), args: None, keywords: None, matching: false } },
        FactSpec {
            name: "d".into(),
            region: "r".into(),
            kind: FactKind::Default {
                argument: "private".into(),
                helpers: vec![("lib.read_arg".into(), DefaultRule::Zero("false".into()))],
                definition: None,
                inert: None,
            },
        },
        FactSpec {
            name: "f".into(),
            region: "r".into(),
            kind: FactKind::Field { sink: Some("sink".into()), arg: None, field: "private".into(), wrap: None, from: "d".into() },
        },
    ];
    let region = RegionSpec { name: "r".into(), kind: s.region.clone(), optional: false, file: None };
    let file = |src: String| SourceFile { path: "m.py".into(), bytes: src.into_bytes() };
    let a = analyze_with(frontend(Lang::Python), &[file(src)], std::slice::from_ref(&region), &facts, &Env::default()).expect("analyzes");
    assert_eq!(a.facts.iter().find(|f| f.name == "f").map(|f| f.values["source"].clone()), Some(FactValue::Text("argument".into())));
    let splat = s.template.replace("BODY", "    return create(private=private, **extra)");
    let e = analyze_with(frontend(Lang::Python), &[file(splat)], &[region], &facts, &Env::default()).map(|_| ()).expect_err("a ** splat could set it");
    assert_eq!(e.code, EscalationCode::ShapeMismatch);
}
