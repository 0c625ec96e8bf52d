//! The `guard` fact, one implementation read through four languages: each
//! case is written once per language and must give the same answer in all
//! of them (found, absent, or an escalation), so the kind means one thing.

use fcd_compiler::languages::frontend;
use fcd_frontends::{ArgPattern, Env, EscalationCode, FactKind, FactSpec, Lang, RegionKind, RegionSpec, SourceFile, analyze, analyze_with};
use fcd_model::effect::FactValue;

/// How one language spells the pieces of a guarded handler.
struct Spelling {
    lang: Lang,
    path: &'static str,
    region: &'static str,
    /// The handler around `BODY`: its parameter is `x`, the sink `sink(x)` follows `BODY`.
    template: &'static str,
    not: &'static str,
    or: &'static str,
    and: &'static str,
    /// `if COND { EXIT }` with COND and EXIT spliced in.
    guard: fn(&str, &str) -> String,
    /// `ok = VALUE` declared once.
    bind: fn(&str) -> String,
    /// `ok = VALUE` assigned again.
    rebind: fn(&str) -> String,
    /// The indentation of a statement of `BODY`.
    indent: &'static str,
    exit: &'static str,
    noop: &'static str,
}

const PYTHON: Spelling = Spelling {
    lang: Lang::Python,
    path: "m.py",
    region: "h",
    template: "from lib import check, sink\n\n\ndef h(x):\nBODY\n    sink(x)\n    return None\n",
    not: "not ",
    or: " or ",
    and: " and ",
    guard: |c, e| format!("    if {c}:\n        {e}"),
    bind: |v| format!("    ok = {v}"),
    rebind: |v| format!("    ok = {v}\n    ok = True"),
    indent: "    ",
    exit: "raise ValueError(x)",
    noop: "print(x)",
};

const JAVASCRIPT: Spelling = Spelling {
    lang: Lang::JavaScript,
    path: "m.js",
    region: "h",
    template: "function h(x) {\nBODY\n  sink(x);\n  return null;\n}\n",
    not: "!",
    or: " || ",
    and: " && ",
    guard: |c, e| format!("  if ({c}) {{ {e} }}"),
    bind: |v| format!("  const ok = {v};"),
    rebind: |v| format!("  let ok = {v};\n  ok = true;"),
    indent: "  ",
    exit: "throw new Error(x);",
    noop: "console.log(x);",
};

const GO: Spelling = Spelling {
    lang: Lang::Go,
    path: "pkg/m.go",
    region: "F",
    template: "package m\n\nfunc F() T {\n\treturn New(func(x string) error {\nBODY\n\t\tsink(x)\n\t\treturn nil\n\t})\n}\n",
    not: "!",
    or: " || ",
    and: " && ",
    guard: |c, e| format!("\t\tif {c} {{\n\t\t\t{e}\n\t\t}}"),
    bind: |v| format!("\t\tok := {v}"),
    rebind: |v| format!("\t\tok := {v}\n\t\tok = true"),
    indent: "\t\t",
    exit: "return nil",
    noop: "log(x)",
};

const CSHARP: Spelling = Spelling {
    lang: Lang::CSharp,
    path: "src/M.cs",
    region: "C.M",
    template: "public class C\n{\n    public void M(string x)\n    {\nBODY\n        Sink(x);\n    }\n}\n",
    not: "!",
    or: " || ",
    and: " && ",
    guard: |c, e| format!("        if ({c}) {{ {e} }}"),
    bind: |v| format!("        var ok = {v};"),
    rebind: |v| format!("        var ok = {v};\n        ok = true;"),
    indent: "        ",
    exit: "throw new ArgumentException(x);",
    noop: "Log(x);",
};

const ALL: [&Spelling; 4] = [&PYTHON, &JAVASCRIPT, &GO, &CSHARP];

impl Spelling {
    fn call(&self) -> &'static str {
        if self.lang == Lang::CSharp { "Check(x)" } else { "check(x)" }
    }

    fn names(&self) -> (&'static str, &'static str) {
        match self.lang {
            Lang::CSharp => ("Check", "Sink"),
            Lang::Python => ("lib.check", "lib.sink"),
            _ => ("check", "sink"),
        }
    }

    fn region_kind(&self) -> RegionKind {
        match self.lang {
            Lang::Go => RegionKind::Literal(self.region.into()),
            _ => RegionKind::Function(self.region.into()),
        }
    }

    /// What a plain (not negated) guard `check(x)` before `sink(x)` is in `body`.
    fn plain_guard(&self, body: &str) -> Result<Option<String>, EscalationCode> {
        self.guard(body, false, None)
    }

    /// What a negated guard `check(x)` before `sink(x)` is in `body` (or, with
    /// `equals`, a comparison guard): the test found (`Ok(Some)`), no guard
    /// (`Ok(None)`) or an escalation.
    fn negated_guard(&self, body: &str, equals: Option<&str>) -> Result<Option<String>, EscalationCode> {
        self.guard(body, equals.is_none(), equals)
    }

    fn guard(&self, body: &str, negated: bool, equals: Option<&str>) -> Result<Option<String>, EscalationCode> {
        let src = self.template.replace("BODY", body);
        let (check, sink) = self.names();
        let pattern = |p: &str| ArgPattern::parse(p).unwrap();
        let facts = [
            FactSpec { name: "sink".into(), region: "r".into(), kind: FactKind::Call { callee: sink.into(), args: None, keywords: None, matching: false } },
            FactSpec {
                name: "guard".into(),
                region: "r".into(),
                kind: FactKind::Guard {
                    callee: check.into(),
                    receiver: None,
                    args: vec![pattern("any")],
                    before: "sink".into(),
                    negated,
                    returns: None,
                    conjuncts: vec![],
                    equals: equals.map(str::to_owned),
                },
            },
        ];
        let region = RegionSpec { name: "r".into(), kind: self.region_kind(), optional: false, file: None };
        let file = SourceFile { path: self.path.into(), bytes: src.clone().into_bytes() };
        // What these tests read is the guard's shape: the region is read
        // alone, as `fcd debug region` reads it, so the checks the templates
        // define (`check`, `ok`) are listed calls, not checked against the
        // closed call path (which the closure tests cover).
        let env = Env {
            reviewed: match self.region_kind() {
                RegionKind::Function(f) => vec![f],
                _ => vec![],
            },
            alone: true,
            ..Env::default()
        };
        let analysis = analyze_with(frontend(self.lang), &[file], &[region], &facts, &env).map_err(|e| e.code)?;
        Ok(analysis.facts.iter().find(|f| f.name == "guard").map(|f| match f.values.get("test") {
            Some(FactValue::Text(t)) => t.clone(),
            other => panic!("a guard's test is text, not {other:?}"),
        }))
    }
}

/// Every language gives `expected` for the body each spells with `body`.
fn same_everywhere(what: &str, body: fn(&Spelling) -> String, expected: Result<bool, EscalationCode>) {
    for s in ALL {
        let b = body(s);
        let got = s.negated_guard(&b, None).map(|t| t.is_some());
        assert_eq!(got, expected, "{what} in {}:\n{b}", s.lang);
    }
}

#[test]
fn a_negated_reviewed_call_that_leaves_is_a_guard_in_every_language() {
    for s in ALL {
        let body = (s.guard)(&format!("{}{}", s.not, s.call()), s.exit);
        let (check, _) = s.names();
        assert_eq!(s.negated_guard(&body, None), Ok(Some(format!("not {check}(any)"))), "{}:\n{body}", s.lang);
    }
}

#[test]
fn a_local_bound_once_before_the_if_stands_for_its_call() {
    same_everywhere("bound once", |s| format!("{}\n{}", (s.bind)(s.call()), (s.guard)(&format!("{}ok", s.not), s.exit)), Ok(true));
    same_everywhere("bound to the negation", |s| format!("{}\n{}", (s.bind)(&format!("{}{}", s.not, s.call())), (s.guard)("ok", s.exit)), Ok(true));
}

#[test]
fn a_local_bound_again_is_no_guard() {
    same_everywhere("bound twice", |s| format!("{}\n{}", (s.rebind)(s.call()), (s.guard)(&format!("{}ok", s.not), s.exit)), Ok(false));
}

#[test]
fn a_negation_over_a_disjunction_is_no_guard() {
    // `!(check(x) || g)` leaves only when g is false too: it does not stop every unchecked call.
    same_everywhere("negated disjunction", |s| (s.guard)(&format!("{}({}{}g)", s.not, s.call(), s.or), s.exit), Ok(false));
    // `!check(x) || g` leaves whenever `!check(x)` holds.
    same_everywhere("disjunction", |s| (s.guard)(&format!("{}{}{}g", s.not, s.call(), s.or), s.exit), Ok(true));
    // A double negation is the call itself, the opposite of what a negated guard asks.
    same_everywhere("double negation", |s| (s.guard)(&format!("{}({}{})", s.not, s.not, s.call()), s.exit), Ok(false));
}

#[test]
fn a_reviewed_test_whose_body_falls_through_escalates() {
    same_everywhere("falls through", |s| (s.guard)(&format!("{}{}", s.not, s.call()), s.noop), Err(EscalationCode::ShapeMismatch));
}

#[test]
fn an_unreviewed_conjunct_escalates() {
    same_everywhere("conjunct", |s| (s.guard)(&format!("{}{}{}g", s.not, s.call(), s.and), s.exit), Err(EscalationCode::ShapeMismatch));
}

#[test]
fn a_sink_after_a_statement_that_always_leaves_is_guarded_by_nothing() {
    same_everywhere("dead sink", |s| format!("{}{}\n{}", s.indent, s.exit, (s.guard)(&format!("{}{}", s.not, s.call()), s.exit)), Ok(false));
}

#[test]
fn a_comparison_with_a_string_is_read_in_every_language() {
    for s in ALL {
        let eq = if s.lang == Lang::JavaScript { " === " } else { " == " };
        let (check, _) = s.names();
        let body = (s.guard)(&format!("{}{eq}\"deny\"", s.call()), s.exit);
        assert_eq!(s.negated_guard(&body, Some("deny")), Ok(Some(format!("{check}(any) == \"deny\""))), "{}:\n{body}", s.lang);
        let other = (s.guard)(&format!("{}{eq}\"allow\"", s.call()), s.exit);
        assert_eq!(s.negated_guard(&other, Some("deny")), Ok(None), "{}:\n{other}", s.lang);
    }
}

#[test]
fn go_reads_a_local_bound_in_the_if_itself_and_no_address_taken() {
    let init = (GO.guard)("!ok", GO.exit).replacen("if !ok", "if ok := check(x); !ok", 1);
    assert_eq!(GO.negated_guard(&init, None), Ok(Some("not check(any)".into())), "{init}");
    let addressed = format!("{}\n\t\tp := &ok\n\t\t*p = true\n{}", (GO.bind)("check(x)"), (GO.guard)("!ok", GO.exit));
    assert_eq!(GO.negated_guard(&addressed, None), Ok(None), "{addressed}");
}

#[test]
fn a_label_between_guard_and_sink_lets_a_goto_around_it() {
    let go = format!("{}\n\t\tgoto L\n\tL:\n\t\tlog(x)", (GO.guard)("!check(x)", GO.exit));
    assert_eq!(GO.negated_guard(&go, None), Ok(None), "{go}");
    let cs = format!("{}\n    L:\n        Log(x);", (CSHARP.guard)("!Check(x)", CSHARP.exit));
    assert_eq!(CSHARP.negated_guard(&cs, None), Ok(None), "{cs}");
}

#[test]
fn csharp_reads_a_local_only_when_nothing_else_binds_it() {
    for rebinding in ["Reset(out ok);", "ok |= Other();", "if (Other() is bool ok2 && (ok = ok2)) { }"] {
        let body = format!("{}\n        {rebinding}\n{}", (CSHARP.bind)("Check(x)"), (CSHARP.guard)("!ok", CSHARP.exit));
        assert_eq!(CSHARP.negated_guard(&body, None), Ok(None), "{body}");
    }
}

#[test]
fn go_reads_the_error_idiom_as_the_call_failing() {
    // A non-negated guard: it leaves when check(x) fails, that is returns a non-nil error.
    let plain = |body: &str| GO.plain_guard(body);
    for body in [
        "\t\tif err := check(x); err != nil {\n\t\t\treturn err\n\t\t}",
        "\t\terr := check(x)\n\t\tif err != nil {\n\t\t\treturn err\n\t\t}",
        "\t\tif check(x) != nil {\n\t\t\treturn nil\n\t\t}",
    ] {
        assert_eq!(plain(body), Ok(Some("check(any)".into())), "{body}");
    }
    // `== nil` is the call succeeding: the negation, which a negated guard asks for.
    let succeeded = "\t\tif err := check(x); err == nil {\n\t\t\treturn nil\n\t\t}";
    assert_eq!(GO.negated_guard(succeeded, None), Ok(Some("not check(any)".into())), "{succeeded}");
    assert_eq!(plain(succeeded), Ok(None), "{succeeded}");
    // Several results: the last is the error, bound once beside the others.
    let two = "\t\tv, err := check(x)\n\t\tif err != nil {\n\t\t\treturn err\n\t\t}\n\t\tuse(v)";
    assert_eq!(plain(two), Ok(Some("check(any)".into())), "{two}");
    let in_the_if = "\t\tif _, err := check(x); err != nil {\n\t\t\treturn err\n\t\t}";
    assert_eq!(plain(in_the_if), Ok(Some("check(any)".into())), "{in_the_if}");
    // Not the last result, bound again (`:=` reusing it), or compared as a value: no guard.
    for body in [
        "\t\terr, v := check(x)\n\t\tif err != nil {\n\t\t\treturn err\n\t\t}\n\t\tuse(v)",
        "\t\tv, err := check(x)\n\t\tw, err := other(x)\n\t\tif err != nil {\n\t\t\treturn err\n\t\t}\n\t\tuse(v, w)",
        "\t\tv, err := check(x)\n\t\tif v != nil {\n\t\t\treturn err\n\t\t}",
    ] {
        assert_eq!(plain(body), Ok(None), "{body}");
    }
}

#[test]
fn a_test_that_reads_a_promise_or_coroutine_is_no_guard() {
    // An async check called without `await` is a promise (a coroutine), always true: `!check(x)` never leaves.
    let js = JAVASCRIPT.template.replace("function h(x) {", "async function check(v) {\n  return v !== \"\";\n}\n\nfunction h(x) {");
    let src = |s: &Spelling, template: &str, body: &str| Spelling { template: Box::leak(template.to_owned().into_boxed_str()), ..*s }.negated_guard(body, None);
    let not_awaited = (JAVASCRIPT.guard)("!check(x)", JAVASCRIPT.exit);
    assert_eq!(src(&JAVASCRIPT, &js, &not_awaited), Ok(None), "{js}");
    let awaited = (JAVASCRIPT.guard)("!(await check(x))", JAVASCRIPT.exit);
    assert_eq!(src(&JAVASCRIPT, &js, &awaited), Ok(Some("not check(any)".into())), "{js}");
    let py = format!("{}\n\nclass Checker:\n    async def check(self, v):\n        return True\n", PYTHON.template);
    let body = (PYTHON.guard)("not check(x)", PYTHON.exit);
    assert_eq!(src(&PYTHON, &py, &body), Ok(None), "{py}");
}

#[test]
fn a_long_disjunction_is_read_however_deep_the_call_sits() {
    // Left-associative: the call sits ten operators down.
    same_everywhere(
        "long disjunction",
        |s| (s.guard)(&format!("{}{}{}{}", s.not, s.call(), s.or, (0..10).map(|i| format!("g{i}")).collect::<Vec<_>>().join(s.or)), s.exit),
        Ok(true),
    );
}

#[test]
fn a_guard_that_must_return_a_value_returns_it_on_every_path() {
    let with_returns = |body: &str| {
        let src = JAVASCRIPT.template.replace("BODY", body);
        let pattern = |p: &str| ArgPattern::parse(p).unwrap();
        let facts = [
            FactSpec { name: "sink".into(), region: "r".into(), kind: FactKind::Call { callee: "sink".into(), args: None, keywords: None, matching: false } },
            FactSpec {
                name: "guard".into(),
                region: "r".into(),
                kind: FactKind::Guard {
                    callee: "check".into(),
                    receiver: None,
                    args: vec![pattern("any")],
                    before: "sink".into(),
                    negated: true,
                    returns: Some("DENIED".into()),
                    conjuncts: vec![],
                    equals: None,
                },
            },
        ];
        let region = RegionSpec { name: "r".into(), kind: RegionKind::Function("h".into()), optional: false, file: None };
        let file = SourceFile { path: "m.js".into(), bytes: src.into_bytes() };
        analyze(frontend(Lang::JavaScript), &[file], &[region], &facts).map(|a| a.facts.iter().any(|f| f.name == "guard")).map_err(|e| e.code)
    };
    assert_eq!(with_returns("  if (!check(x)) { console.log(x); return \"DENIED\"; }"), Ok(true));
    // Another value first on some path, or a throw first: the block does not return DENIED on every path.
    for body in ["  if (!check(x)) { if (x === \"\") { return \"fine\"; } return \"DENIED\"; }", "  if (!check(x)) { throw new Error(x); return \"DENIED\"; }"]
    {
        assert_eq!(with_returns(body), Err(EscalationCode::ShapeMismatch), "{body}");
    }
}

#[test]
fn go_never_reads_a_redeclared_nil() {
    // `nil` bound to a denial error would turn `err != nil` into "allowed".
    let body = "\t\tnil := errDenied\n\t\tif err := check(x); err != nil {\n\t\t\treturn err\n\t\t}";
    assert_eq!(GO.plain_guard(body), Err(EscalationCode::ShapeMismatch), "{body}");
    let package = GO.template.replace("package m\n", "package m\n\nvar nil = errDenied\n");
    let guarded = "\t\tif err := check(x); err != nil {\n\t\t\treturn err\n\t\t}";
    assert_eq!(Spelling { template: Box::leak(package.into_boxed_str()), ..GO }.plain_guard(guarded), Err(EscalationCode::ShapeMismatch));
}
