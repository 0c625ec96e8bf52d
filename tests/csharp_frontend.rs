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

/// A target-typed `new()` creates the type its target declares: when that is
/// a closure type, it must be plain data like `new T`, and where fcd cannot
/// tell the type, the creation escalates.
#[test]
fn target_typed_creations_are_checked_like_named_ones() {
    let run = |method: &str, body: &str| {
        let src = format!(
            "namespace N;\npublic class Loud\n{{\n    public Loud() {{ Log.Write(\"made\"); }}\n    public int X {{ get; set; }}\n}}\n\
             public class Quiet\n{{\n    public int X {{ get; set; }}\n    public Loud Inner {{ get; set; }}\n    public Quiet Same {{ get; set; }}\n}}\n\
             public class C\n{{\n    {method}\n    {{\n{body}\n    }}\n}}\n"
        );
        analyze(Lang::CSharp, &[file(&src)], &[region("C.M")], &[]).map(|_| ()).map_err(|e| (e.code, e.detail))
    };
    let plain = "public void M(ParseResult parseResult)";
    // Library targets and plain closure types pass.
    assert_eq!(run(plain, "        var a = new Lib { Inner = new() { X = 1 } };\n        Lib.Take(new());"), Ok(()));
    assert_eq!(run(plain, "        var q = new Quiet { Same = new() { X = 2 } };"), Ok(()));
    assert_eq!(run("public Quiet M(ParseResult parseResult)", "        return new() { X = 3 };"), Ok(()));
    // A closure type with a constructor, reached through a member, a nested member or a return type.
    for (method, body) in [
        (plain, "        var q = new Quiet { Inner = new() };"),
        (plain, "        var q = new Quiet { Same = new() { Inner = new() } };"),
        ("public Loud M(ParseResult parseResult)", "        return new();"),
        ("public async Task<Loud> M(ParseResult parseResult)", "        return new();"),
    ] {
        let (code, detail) = run(method, body).expect_err(body);
        assert_eq!(code, EscalationCode::ShapeMismatch, "{body}: {detail}");
        assert!(detail.contains("`Loud`") && detail.contains("plain data"), "{body}: {detail}");
    }
    // Targets fcd cannot see escalate.
    for (method, body) in [("public async Task M(ParseResult parseResult)", "        return new();"), (plain, "        var q = new Quiet { Missing = new() };")]
    {
        let (_, detail) = run(method, body).expect_err(body);
        assert!(detail.contains("cannot tell which type"), "{body}: {detail}");
    }
}
