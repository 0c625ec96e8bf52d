//! The C# frontend through its public interface: Class.Method regions,
//! callee identities, and odd C# that must not panic.

#[path = "../../../tests/common/mod.rs"]
mod common;

use fcd_frontend_csharp::CSharp;
use fcd_frontends::{EscalationCode, RegionKind, RegionSpec, SourceFile, analyze};

fn file(src: &str) -> SourceFile {
    SourceFile { path: "src/X.cs".into(), bytes: src.as_bytes().to_vec() }
}

fn region(name: &str) -> RegionSpec {
    RegionSpec { name: "r".into(), kind: RegionKind::Function(name.into()), optional: false, file: None }
}

fn check(body: &str, expected: &[&str]) {
    let src = format!("namespace N;\npublic class C\n{{\n    public void M(ParseResult parseResult)\n    {{\n{body}\n    }}\n}}\n");
    let analysis = analyze(&CSharp, &[file(&src)], &[region("C.M")], &[]).expect("analyzes");
    let got = crate::common::callees_of(&analysis);
    assert_eq!(got, expected, "in:\n{src}");
}

#[test]
fn dotted_tokens_generics_and_conditional_access() {
    check(
        "        base.M(parseResult);\n        var b = parseResult.GetValueOrDefault<bool>(Defs.Flag.Name);\n        var n = modules?.Select(m => m.Name).ToArray();\n        new HttpClient().GetAsync(url);",
        &["base.M", "ParseResult#GetValueOrDefault<bool>", "modules.Select().ToArray", "modules.Select", "new HttpClient().GetAsync", "new HttpClient"],
    );
}

/// The identities of `C.M`'s calls in a whole source file.
fn calls_of(src: &str) -> Vec<String> {
    let analysis = analyze(&CSharp, &[file(src)], &[region("C.M")], &[]).expect("analyzes");
    crate::common::callees_of(&analysis)
}

#[test]
fn receivers_are_spelled_by_what_they_are() {
    let src = "public class C(ISubscriptions subs)\n{\n    private readonly IRedis _redis = null!;\n    public async Task M(ParseResult parsed, string[]? mods, CommandContext context)\n    {\n        var located = context.GetService<IRedis>() ?? throw new E();\n        var made = new Tracker();\n        Response<Group> group = await Find();\n        await _redis.Create(mods.Select(x => x));\n        parsed.Read<bool>();\n        located.Create();\n        made.Add();\n        group.Value.Deploy();\n        subs.Get();\n    }\n}\n";
    assert_eq!(
        calls_of(src),
        [
            "CommandContext#GetService<IRedis>",
            "new E",
            "new Tracker",
            "Find",
            "IRedis#Create",
            "string[]#Select",
            "ParseResult#Read<bool>",
            "CommandContext#GetService<IRedis>().Create",
            "new Tracker().Add",
            "Response<Group>#Value.Deploy",
            "ISubscriptions#Get",
        ]
    );
}

#[test]
fn renaming_a_receiver_changes_nothing() {
    let named = |field: &str, param: &str, local: &str| {
        format!(
            "public class C\n{{\n    private readonly IRedis {field} = null!;\n    public void M(ParseResult {param})\n    {{\n        var {local} = {param}.Bind();\n        {field}.Create({local}.Flag);\n        {local}.Check();\n    }}\n}}\n"
        )
    };
    let one = calls_of(&named("_redisService", "parseResult", "options"));
    assert_eq!(one, ["ParseResult#Bind", "IRedis#Create", "ParseResult#Bind().Check"]);
    assert_eq!(calls_of(&named("_cache", "input", "bound")), one);
}

#[test]
fn a_receiver_fcd_cannot_pin_keeps_its_spelled_name() {
    for (body, expected) in [
        // Assigned again: the local may hold another object.
        ("var r = Make(); r = Other(); r.Create();", "r.Create"),
        // Declared twice in the member.
        ("{ var r = Make(); } { var r = Other(); r.Create(); }", "r.Create"),
        // Bound by a lambda around the call.
        ("Run(r => r.Create());", "r.Create"),
        // A value that is neither a call nor a creation.
        ("var r = flag ? a : b; r.Create();", "r.Create"),
        // Passed by reference: the callee may rebind it.
        ("var r = Make(); Swap(ref r); r.Create();", "r.Create"),
        // A pattern variable.
        ("if (o is IRedis r) { r.Create(); }", "r.Create"),
    ] {
        let src = format!("public class C\n{{\n    public void M(object o, bool flag)\n    {{\n        {body}\n    }}\n}}\n");
        let got = calls_of(&src);
        assert!(got.iter().any(|c| c == expected), "{body}: {got:?}");
        assert!(!got.iter().any(|c| c.contains('#') && c.ends_with("Create")), "{body}: {got:?}");
    }
    // A field that is not readonly may be set to another object anywhere in the class.
    let src = "public class C\n{\n    private IRedis _redis = null!;\n    public void M() { _redis.Create(); }\n}\n";
    assert_eq!(calls_of(src), ["_redis.Create"]);
    // A type a using alias names is not the type the inventory means.
    let src = "using Cmd = Evil.Command;\npublic class C\n{\n    public void M(Cmd command) { command.Options.Add(x); }\n}\n";
    assert_eq!(calls_of(src), ["command.Options.Add"]);
}

#[test]
fn another_object_under_the_same_name_changes_the_identity() {
    let with = |value: &str| {
        format!(
            "public class C\n{{\n    public void M(CommandContext context)\n    {{\n        var service = {value};\n        service.Create();\n    }}\n}}\n"
        )
    };
    assert_eq!(calls_of(&with("context.GetService<IRedis>()")).last().map(String::as_str), Some("CommandContext#GetService<IRedis>().Create"));
    assert_eq!(calls_of(&with("new PublicRedis()")).last().map(String::as_str), Some("new PublicRedis().Create"));
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
    let a = analyze(&CSharp, &[file(src)], &[region("A.M")], &[]).unwrap();
    assert_eq!(a.regions[0].calls.len(), 1);
    let err = analyze(&CSharp, &[file(src)], &[region("M")], &[]).unwrap_err();
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
        let _ = analyze(&CSharp, &[file(src)], &[region("A.M")], &[]);
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
        analyze(&CSharp, &[file(&src)], &[region("C.M")], &[]).map(|_| ()).map_err(|e| (e.code, e.detail))
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

/// A C# named argument binds by name, whatever its position: a fact with
/// `keywords` reads it by name and aligns only the positional ones.
#[test]
fn named_arguments_bind_by_name() {
    use fcd_frontends::{ArgPattern, FactKind, FactSpec};
    let run = |call: &str| {
        let src = format!("namespace N;\npublic class C\n{{\n    public void M(string name)\n    {{\n        {call};\n    }}\n}}\n");
        let keywords = [("force".to_owned(), ArgPattern::parse("str:no").unwrap())].into_iter().collect();
        let fact = FactSpec {
            name: "sink".into(),
            region: "r".into(),
            kind: FactKind::Call {
                callee: "Api.Create".into(),
                args: Some(vec![ArgPattern::parse("param:name").unwrap()]),
                keywords: Some(keywords),
                matching: false,
            },
        };
        analyze(&CSharp, &[file(&src)], &[region("C.M")], &[fact]).map(|a| a.facts[0].values.get("keywords").cloned())
    };
    let want = Some(fcd_model::effect::FactValue::List(vec![fcd_model::effect::FactValue::Text("force=str:no".into())]));
    assert_eq!(run("Api.Create(force: \"no\", name)").unwrap(), want);
    assert_eq!(run("Api.Create(name, force: \"no\")").unwrap(), want);
    assert!(run("Api.Create(name, force: \"yes\")").is_err());
    assert!(run("Api.Create(name)").is_err());
}

#[test]
fn a_method_of_the_closure_handed_on_as_a_value_needs_a_region_as_a_call_does() {
    let outcome = |body: &str| {
        let src = format!(
            "namespace N;\npublic class C\n{{\n    static string Note(string s) {{ System.IO.File.AppendAllText(\"/tmp/log\", s); return s; }}\n    public void M(ParseResult parseResult)\n    {{\n{body}\n    }}\n}}\n"
        );
        analyze(&CSharp, &[file(&src)], &[region("C.M")], &[]).map(drop).map_err(|e| (e.code, e.detail))
    };
    for body in [
        "        var names = parseResult.Tokens.Select(Note).ToList();",
        "        System.Func<string, string> f = Note;",
        "        System.Func<string, string> f = C.Note;",
        "        var handlers = new System.Func<string, string>[] { Note };",
    ] {
        let (code, detail) = outcome(body).expect_err(body);
        assert_eq!(code, EscalationCode::ShapeMismatch, "{body}: {detail}");
        assert!(detail.contains("as a value, and a method `Note` declared in the closure (src/X.cs:4) is not a region"), "{body}: {detail}");
    }
    // A value that names no method of the closure is no method group.
    assert_eq!(outcome("        var names = parseResult.Tokens.Select(Trim).ToList();"), Ok(()));
}
