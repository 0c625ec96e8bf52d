//! The `default` fact, one implementation read through four languages: a
//! tool argument read once by a reviewed helper into a variable, and what it
//! is when the caller omits it. Each case is written once per language.

use fcd_compiler::languages::frontend;
use fcd_frontends::{DefaultRule, Env, EscalationCode, FactKind, FactSpec, Lang, RegionKind, RegionSpec, SourceFile, analyze_with};
use fcd_model::effect::FactValue;

/// How one language spells a handler that reads `private` through a helper.
struct Spelling {
    lang: Lang,
    path: &'static str,
    region: RegionKind,
    /// The handler around `BODY`, its argument map a parameter.
    template: &'static str,
    /// `private = HELPER(map, "private")` with the helper's rule `zero:false`.
    read: &'static str,
    /// The same read with the default as the helper's third argument (`arg:2`).
    read_with_default: &'static str,
    helper: &'static str,
    helper_with_default: &'static str,
    /// Where `read_with_default` passes the default (`arg:INDEX`).
    default_index: usize,
    /// A second read of `private`, into another variable.
    read_again: &'static str,
    /// The argument read without a helper.
    direct: &'static str,
    /// The map handed to something else.
    leak: &'static str,
    /// `private` bound again.
    rebind: &'static str,
}

fn spellings() -> Vec<Spelling> {
    vec![
        Spelling {
            lang: Lang::Python,
            path: "m.py",
            region: RegionKind::Function("h".into()),
            template: "from lib import sink, read_arg\n\n\ndef h(arguments: dict):\nBODY\n    return sink(private)\n",
            read: "    private = read_arg(arguments, \"private\")",
            read_with_default: "    private = arguments.get(\"private\", \"secret\")",
            helper: "lib.read_arg",
            helper_with_default: "dict.get",
            default_index: 1,
            read_again: "    private_too = read_arg(arguments, \"private\")",
            direct: "    private = arguments[\"private\"]",
            leak: "    sink(arguments)",
            rebind: "    private = True",
        },
        Spelling {
            lang: Lang::JavaScript,
            path: "m.js",
            region: RegionKind::Function("h".into()),
            template: "function h(args) {\nBODY\n  return sink(priv);\n}\n",
            read: "  const priv = readArg(args, \"private\");",
            read_with_default: "  const priv = readArg(args, \"private\", \"secret\");",
            helper: "readArg",
            helper_with_default: "readArg",
            default_index: 2,
            read_again: "  const again = readArg(args, \"private\");",
            direct: "  const priv = args.private;",
            leak: "  sink(args);",
            rebind: "  priv = true;",
        },
        Spelling {
            lang: Lang::Go,
            path: "pkg/m.go",
            region: RegionKind::Literal("F".into()),
            template: "package m\n\nfunc F() T {\n\treturn New(func(ctx C, args A) error {\nBODY\n\t\treturn sink(private)\n\t})\n}\n",
            read: "\t\tprivate, err := OptionalParam[bool](args, \"private\")",
            read_with_default: "\t\tprivate, err := OptionalParamWithDefault(args, \"private\", \"secret\")",
            helper: "OptionalParam[bool]",
            helper_with_default: "OptionalParamWithDefault",
            default_index: 2,
            read_again: "\t\tagain, err2 := OptionalParam[bool](args, \"private\")",
            direct: "\t\tprivate := args[\"private\"]",
            leak: "\t\tsink(args)",
            rebind: "\t\tprivate = true",
        },
        Spelling {
            lang: Lang::CSharp,
            path: "src/M.cs",
            region: RegionKind::Function("C.M".into()),
            template: "public class C\n{\n    public void M(ParseResult parseResult)\n    {\nBODY\n        Sink(isPrivate);\n    }\n}\n",
            read: "        var isPrivate = parseResult.GetValueOrDefault<bool>(\"private\");",
            read_with_default: "        var isPrivate = parseResult.GetValueOrDefault(\"private\", \"secret\");",
            helper: "ParseResult#GetValueOrDefault<bool>",
            helper_with_default: "ParseResult#GetValueOrDefault",
            default_index: 1,
            read_again: "        var again = parseResult.GetValueOrDefault<bool>(\"private\");",
            direct: "",
            leak: "",
            rebind: "        isPrivate = true;",
        },
    ]
}

/// The fact's helper, default and source; or the escalation's code and detail.
type Outcome = Result<Option<(String, FactValue, String)>, (EscalationCode, String)>;

impl Spelling {
    fn default_fact(&self, body: &str, helper: &str, rule: DefaultRule) -> Outcome {
        let src = self.template.replace("BODY", body);
        let facts = [FactSpec {
            name: "private_default".into(),
            region: "r".into(),
            kind: FactKind::Default { argument: "private".into(), helpers: vec![(helper.into(), rule)], definition: None, inert: None },
        }];
        let region = RegionSpec { name: "r".into(), kind: self.region.clone(), optional: false, file: None };
        let env = Env { reviewed: vec!["OptionalParam".into(), "OptionalParamWithDefault".into()], ..Env::default() };
        let file = SourceFile { path: self.path.into(), bytes: src.into_bytes() };
        let analysis = analyze_with(frontend(self.lang), &[file], &[region], &facts, &env).map_err(|e| (e.code, e.detail))?;
        Ok(analysis.facts.first().map(|f| {
            let text = |k: &str| match f.values.get(k) {
                Some(FactValue::Text(t)) => t.clone(),
                other => panic!("{k}: {other:?}"),
            };
            (text("helper"), f.values["default"].clone(), text("source"))
        }))
    }

    fn zero(&self, body: &str) -> Outcome {
        self.default_fact(body, self.helper, DefaultRule::Zero("false".into()))
    }
}

#[test]
fn a_reviewed_helper_read_gives_the_zero_default_in_every_language() {
    for s in spellings() {
        let got = s.zero(s.read);
        assert_eq!(got, Ok(Some((s.helper.to_owned(), FactValue::Bool(false), "zero value of the helper".to_owned()))), "{}:\n{}", s.lang, s.read);
    }
}

#[test]
fn a_default_argument_of_the_helper_is_read_as_a_literal() {
    for s in spellings() {
        let got = s.default_fact(s.read_with_default, s.helper_with_default, DefaultRule::Arg(s.default_index));
        assert_eq!(
            got,
            Ok(Some((s.helper_with_default.to_owned(), FactValue::Text("secret".into()), "literal".to_owned()))),
            "{}:\n{}",
            s.lang,
            s.read_with_default
        );
    }
}

#[test]
fn an_argument_read_without_a_reviewed_helper_escalates() {
    for s in spellings() {
        let unreviewed = s.default_fact(s.read, "another.helper", DefaultRule::Zero("false".into()));
        assert!(matches!(&unreviewed, Err((EscalationCode::ShapeMismatch, d)) if d.contains("not a reviewed helper")), "{}: {unreviewed:?}", s.lang);
        let twice = s.zero(&format!("{}\n{}", s.read, s.read_again));
        assert!(matches!(&twice, Err((EscalationCode::ShapeMismatch, d)) if d.contains("read 2 times")), "{}: {twice:?}", s.lang);
        if !s.direct.is_empty() {
            let direct = s.zero(&format!("{}\n{}", s.read_again, s.direct));
            assert!(matches!(&direct, Err((EscalationCode::ShapeMismatch, d)) if d.contains("read directly")), "{}: {direct:?}", s.lang);
        }
    }
}

#[test]
fn the_variable_and_the_map_must_hold_until_the_sink() {
    for s in spellings() {
        let rebound = s.zero(&format!("{}\n{}", s.read.replace("const priv", "let priv"), s.rebind));
        assert!(
            matches!(&rebound, Err((EscalationCode::ShapeMismatch, d)) if d.contains("again") || d.contains("more than once")),
            "{} rebound: {rebound:?}",
            s.lang
        );
        if !s.leak.is_empty() {
            let leaked = s.zero(&format!("{}\n{}", s.leak, s.read));
            assert!(matches!(&leaked, Err((EscalationCode::ShapeMismatch, d)) if d.contains("argument map")), "{} leaked map: {leaked:?}", s.lang);
        }
    }
}

#[test]
fn a_call_that_may_change_the_map_escalates_even_when_it_names_an_argument() {
    // `.pop("private")` before the read would make the caller's value the default.
    for (s, change) in spellings().iter().zip(["    arguments.pop(\"private\")", "  forget(args, \"private\");"]) {
        let got = s.zero(&format!("{change}\n{}", s.read));
        assert!(matches!(&got, Err((EscalationCode::ShapeMismatch, d)) if d.contains("argument map")), "{}: {got:?}", s.lang);
    }
}

#[test]
fn no_read_is_no_fact() {
    for s in spellings() {
        assert_eq!(s.zero(""), Ok(None), "{}", s.lang);
    }
}

/// Go: a default named by a package constant is that constant's literal,
/// unless a declaration of the same name in the enclosing function (a
/// local, a parameter, a const outside the handler) may be what the read
/// sees: then it escalates (issue 26: a local shadowing the constant).
#[test]
fn a_go_constant_default_is_taken_only_when_nothing_in_the_function_shadows_it() {
    let go = spellings().into_iter().find(|s| s.lang == Lang::Go).unwrap();
    let read = "\t\tprivate, err := OptionalParamWithDefault(args, \"private\", DefaultPrivate)";
    let with = |template: &str, body: &str| {
        let s = Spelling { template: Box::leak(template.to_owned().into_boxed_str()), ..spellings().into_iter().find(|s| s.lang == Lang::Go).unwrap() };
        s.default_fact(body, s.helper_with_default, DefaultRule::Arg(2))
    };
    let constant = format!("{}\nconst DefaultPrivate = true\n", go.template);
    let got = with(&constant, read).expect("the constant is read");
    assert!(matches!(&got, Some((_, FactValue::Bool(true), source)) if source.starts_with("constant DefaultPrivate")), "{got:?}");
    let shadows = [
        // a local of the handler, bound before the read
        (constant.clone(), format!("\t\tDefaultPrivate := false\n{read}")),
        // a local of the constructor around the handler
        (constant.replace("func F() T {\n", "func F() T {\n\tDefaultPrivate := false\n\t_ = DefaultPrivate\n"), read.to_owned()),
        // a parameter of the constructor
        (constant.replace("func F() T {", "func F(DefaultPrivate bool) T {"), read.to_owned()),
        // a const of the constructor, outside the handler
        (constant.replace("func F() T {\n", "func F() T {\n\tconst DefaultPrivate = false\n"), read.to_owned()),
    ];
    for (template, body) in shadows {
        let got = with(&template, &body);
        let Err((code, detail)) = got else { panic!("must escalate:\n{template}\n{body}\n{got:?}") };
        assert_eq!(code, EscalationCode::ShapeMismatch, "{detail}");
        assert!(detail.contains("DefaultPrivate"), "{detail}");
    }
}

/// Go: the variable a default is read into must not have its address taken:
/// a write through the pointer changes it where no binding shows (issue 26).
#[test]
fn a_go_default_whose_address_is_taken_escalates() {
    let go = spellings().into_iter().find(|s| s.lang == Lang::Go).unwrap();
    let body = format!("{}\n\t\tp := &private\n\t\t*p = true", go.read);
    let Err((code, detail)) = go.zero(&body) else { panic!("must escalate:\n{body}") };
    assert_eq!(code, EscalationCode::ShapeMismatch, "{detail}");
    assert!(detail.contains("address of `private`"), "{detail}");
}
