//! The C# frontend through its public interface: Class.Method regions,
//! callee identities, and odd C# that must not panic.

use fcd_frontends::{EscalationCode, Identity, Lang, RegionKind, RegionSpec, SourceFile, analyze};

fn file(src: &str) -> SourceFile {
    SourceFile { path: "src/X.cs".into(), bytes: src.as_bytes().to_vec() }
}

fn region(name: &str) -> RegionSpec {
    RegionSpec { name: "r".into(), kind: RegionKind::Function(name.into()), optional: false }
}

fn check(body: &str, expected: &[&str]) {
    let src = format!("namespace N;\npublic class C\n{{\n    public void M(ParseResult parseResult)\n    {{\n{body}\n    }}\n}}\n");
    let analysis = analyze(Lang::CSharp, &[file(&src)], &[region("C.M")], &[]).expect("analyzes");
    let got: Vec<String> = analysis.regions[0]
        .calls
        .iter()
        .map(|c| match &c.identity {
            Identity::Path(p) => p.clone(),
            Identity::Unresolved(t) => format!("?{t}"),
            Identity::Dynamic(t) => format!("dynamic: {t}"),
        })
        .collect();
    assert_eq!(got, expected, "in:\n{src}");
}

#[test]
fn dotted_tokens_generics_and_conditional_access() {
    check(
        "        base.M(parseResult);\n        var b = parseResult.GetValueOrDefault<bool>(Defs.Flag.Name);\n        var n = modules?.Select(m => m.Name).ToArray();\n        new HttpClient().GetAsync(url);",
        &["base.M", "parseResult.GetValueOrDefault<bool>", "modules.Select().ToArray", "modules.Select", "new HttpClient().GetAsync", "new HttpClient"],
    );
}

#[test]
fn creations_and_disposal_are_callees() {
    check(
        "        var p = new P { V = new() { X = 1 } };\n        F(new(p));\n        Q q = new(p);",
        &["new P", "new()", "F", "new()", "?`new(p)`: a target-typed creation whose type fcd cannot see"],
    );
    check("        using var h = G();", &["?a `using` declaration disposes its resource, running code no call shows", "G"]);
}

#[test]
fn indexed_and_chained_invocations_are_dynamic() {
    check("        handlers[name](parseResult);", &["dynamic: calls an indexed value (`handlers[name]`)"]);
    check("        Make()();", &["dynamic: calls the result of `Make()`", "Make"]);
}

#[test]
fn strings_and_comments_are_never_code() {
    check(
        "        // Process.Start(\"x\");\n        var t = \"\"\"\n            { \"run\": \"Process.Start()\" }\n            \"\"\";\n        var v = @\"Delete()\";",
        &[],
    );
}

#[test]
fn regions_are_qualified_by_their_class() {
    let src = "class A { void M() { X(); } }\nclass B { void M() { Y(); } }\ninterface I { void M(); }\n";
    let a = analyze(Lang::CSharp, &[file(src)], &[region("A.M")], &[]).unwrap();
    assert_eq!(a.regions[0].calls.len(), 1);
    let err = analyze(Lang::CSharp, &[file(src)], &[region("M")], &[]).unwrap_err();
    assert_eq!(err.code, EscalationCode::RegionAmbiguous, "the interface's bodiless M does not count: {err:?}");
}

#[test]
fn odd_csharp_does_not_panic() {
    for src in [
        "",
        "#if DEBUG\nclass A {}\n#endif\n",
        "[assembly: X]\nnamespace N;\npartial class A { partial void M(); }\npartial class A { partial void M() { } }\n",
        "class A { void M() => Go(); }",
        "class A { void M() { var s = $\"{Call()}\"; } }",
        "\u{feff}class",
    ] {
        let _ = analyze(Lang::CSharp, &[file(src)], &[region("A.M")], &[]);
    }
}
