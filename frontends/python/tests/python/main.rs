//! The Python frontend through its public interface: callee identities,
//! dynamic callees, and what comments and strings can never create.

#[path = "../../../tests/common/mod.rs"]
mod common;
mod transport;

use fcd_frontend_python::Python;
use fcd_frontends::{Identity, RegionKind, RegionSpec, SourceFile, analyze};

/// The identities of the calls in function `f` of `src`, in source order.
fn callees(src: &str) -> Vec<String> {
    let file = SourceFile { path: "m.py".into(), bytes: src.as_bytes().to_vec() };
    let region = RegionSpec { name: "r".into(), kind: RegionKind::Function("f".into()), optional: false, file: None };
    let analysis = analyze(&Python, &[file], &[region], &[]).expect("analyzes");
    crate::common::callees_of(&analysis)
}

fn check(src: &str, expected: &[&str]) {
    assert_eq!(callees(src), expected, "in:\n{src}");
}

#[test]
fn imports_and_aliases_resolve_to_dotted_paths() {
    check(
        "import os.path
import subprocess as sp
from shutil import rmtree as wipe
def f(x: str):
    os.path.join(x)
    sp.run(x)
    wipe(x)
",
        &["os.path.join", "subprocess.run", "shutil.rmtree"],
    );
}

#[test]
fn annotations_and_local_aliases_give_receiver_types() {
    check(
        "import git
def f(repo: git.Repo, name: str = 'x'):
    d = repo.git.diff
    d(name)
    name.upper()
    'a'.join([])
",
        &["git.Repo.git.diff", "str.upper", "str.join"],
    );
}

/// Names a function binds by importing, entering a context manager or
/// iterating resolve like module imports and aliases; bound twice, or once
/// by a form with no value (a tuple target), they stay unresolved.
#[test]
fn function_imports_with_targets_and_loop_elements_resolve() {
    check(
        "async def f(u):
    from httpx import AsyncClient as C
    import json
    async with C(proxy=u) as client:
        r = await client.get(u)
    with open(u) as fh:
        fh.read()
    json.dumps([l.strip() for l in r.text.splitlines()])
    for k in r.headers:
        k.lower()
",
        &[
            "import httpx",
            "import json",
            "with httpx.AsyncClient()",
            "httpx.AsyncClient",
            "httpx.AsyncClient().__aenter__().get",
            "with open()",
            "open",
            "open().__enter__().read",
            "json.dumps",
            "httpx.AsyncClient().__aenter__().get().text.splitlines()[].strip",
            "httpx.AsyncClient().__aenter__().get().text.splitlines",
            "httpx.AsyncClient().__aenter__().get().headers[].lower",
        ],
    );
    check(
        "def f(u):
    from a import C
    from b import C
    C(u)
    with open(u) as fh:
        fh = None
        fh.read()
    for k, v in u.items():
        k.lower()
",
        &["import a", "import b", "?C", "with open()", "open", "?fh.read", "?u.items", "?k.lower"],
    );
}

/// A binary operator's result is what the left operand's operator method
/// returns, spelled as its call; an operand that resolves to nothing, or an
/// operator that is not arithmetic (a comparison, `and`), leaves it unknown.
#[test]
fn binary_operators_resolve_through_the_left_operands_method() {
    check(
        "from pathlib import Path
def f(top: Path, names: list[str], other):
    for name in names:
        (top / name).resolve().relative_to(top)
    (top / other).resolve()
    ('a' + name).upper()
    (top == name).bit_length()
",
        &[
            "pathlib.Path.__truediv__().resolve().relative_to",
            "pathlib.Path.__truediv__().resolve",
            "?(top/other).resolve",
            "str.__add__().upper",
            "?(top==name).bit_length",
        ],
    );
}

/// A method of a subscript's value is a method of what the container's
/// `__getitem__` returns (`dict.__getitem__().strip`); calling the subscript
/// itself calls whatever the container holds, which stays unknown.
#[test]
fn methods_of_a_subscripts_value_resolve_through_getitem() {
    check(
        "TABLE = {}
def f(arguments: dict[str, str] | None, rows: list, other):
    arguments['query'].strip().upper().startswith('SELECT')
    rows[0].keys()
    TABLE['x']()
    other['k'].strip()
",
        &[
            "dict.__getitem__().strip().upper().startswith",
            "dict.__getitem__().strip().upper",
            "dict.__getitem__().strip",
            "list.__getitem__().keys",
            "dynamic: calls a subscript (`TABLE['x']`)",
            "?other['k'].strip",
        ],
    );
}

/// A decorator's arguments run when the definition does: every call in them
/// is a call site of the region beside the decorator itself (a registration's
/// `annotations=helper(…)` cannot run unread).
#[test]
fn calls_in_a_decorators_arguments_are_call_sites() {
    check(
        "import functools
@functools.lru_cache(maxsize=len('ab'))
def f(x: str):
    x.strip()
",
        &["@functools.lru_cache()", "len", "str.strip"],
    );
}

#[test]
fn module_definitions_and_builtins_resolve() {
    check(
        "def helper(): pass
def f():
    helper()
    len([])
",
        &["?helper (defined in the release, but not a region of the profile, so its body is unread)", "len"],
    );
}

#[test]
fn a_function_of_the_release_handed_on_as_a_value_is_as_unread_as_one_called() {
    let handed = "?handed helper (a function or class of the release passed as a value for whatever receives it to call; it is not a region of the profile, so its body is unread)";
    for (body, expected) in [
        ("    return list(map(helper, xs))\n", vec!["list", handed, "map"]),
        ("    return sorted(xs, key=helper)\n", vec!["sorted", handed]),
        ("    return {'check': helper}\n", vec![handed]),
        // A function the region defines is read with the region: handing it on is no escalation.
        ("    def inner(x): return x\n    return list(map(inner, xs))\n", vec!["list", "map"]),
        // The name of a keyword, a parameter or an attribute is not the function.
        ("    return dict(helper=1)\n", vec!["dict"]),
        // A class of the module where none of its code runs: caught, iterated, tested.
        (
            "    try:\n        pass\n    except (Refused, OSError):\n        pass\n    return [m.value for m in Kind], xs in Kind, isinstance(xs, Kind)\n",
            vec!["isinstance"],
        ),
    ] {
        let src = format!("import enum\nclass Kind(str, enum.Enum):\n    A = 'a'\nclass Refused(Exception): pass\ndef helper(x): return x\ndef f(xs):\n{body}");
        let got = callees(&src);
        let mut sorted_got = got.clone();
        sorted_got.sort();
        let mut sorted_expected: Vec<String> = expected.iter().map(|e| (*e).to_owned()).collect();
        sorted_expected.sort();
        assert_eq!(sorted_got, sorted_expected, "in:\n{src}");
    }
    // Handed anywhere else, or with a metaclass of the release, a class may be constructed or hooked.
    let base = "class Meta(type): pass\nclass Kind(metaclass=Meta): pass\nclass Plain: pass\ndef f(xs):\n";
    for body in ["    return xs in Kind\n", "    return list(map(Plain, xs))\n"] {
        let src = format!("{base}{body}");
        assert!(callees(&src).iter().any(|c| c.starts_with("?handed ")), "in:\n{src}: {:?}", callees(&src));
    }
}

#[test]
fn a_reviewed_helper_region_resolves_to_its_definition() {
    let file = SourceFile { path: "m.py".into(), bytes: b"def helper(): pass\ndef f():\n    helper()\n".to_vec() };
    let regions = [
        RegionSpec { name: "r".into(), kind: RegionKind::Function("f".into()), optional: false, file: None },
        RegionSpec { name: "h".into(), kind: RegionKind::Function("helper".into()), optional: false, file: None },
    ];
    let analysis = analyze(&Python, &[file], &regions, &[]).expect("analyzes");
    assert_eq!(analysis.regions[0].calls[0].identity, Identity::Path("m.helper".into()));
}

#[test]
fn a_builtin_shadowed_at_module_level_is_not_the_builtin() {
    check("len = lambda x: 0\ndef f():\n    len([])\n", &["?len"]);
    check(
        "class ValueError(Exception): pass\ndef f():\n    raise ValueError()\n",
        &["?ValueError (defined in the release, but not a region of the profile, so its body is unread)"],
    );
    check("import git\ngit = None\ndef f(r: git.Repo):\n    r.git.diff()\n", &["?r.git.diff"]);
    check("def f():\n    unknown_name()\n", &["?unknown_name"]);
}

#[test]
fn a_name_bound_twice_is_unresolved() {
    check(
        "import os
def f(flag):
    g = os.remove
    if flag:
        g = print
    g('x')
",
        &["?g"],
    );
}

#[test]
fn dynamic_callees_are_marked() {
    check("def f(o, n):\n    getattr(o, n)()\n", &["dynamic: calls the result of `getattr(o, n)`", "dynamic: getattr"]);
    check("def f(t):\n    t['k']()\n", &["dynamic: calls a subscript (`t['k']`)"]);
    let file = SourceFile { path: "m.py".into(), bytes: b"def f(s):\n    eval(s)\n".to_vec() };
    let region = RegionSpec { name: "r".into(), kind: RegionKind::Function("f".into()), optional: false, file: None };
    let e = analyze(&Python, &[file], &[region], &[]).unwrap_err();
    assert_eq!(e.code, fcd_frontends::EscalationCode::DynamicCallee, "{e}");
    check("import importlib\ndef f(s):\n    importlib.import_module(s)\n", &["dynamic: importlib.import_module"]);
    check("def f():\n    (lambda: 1)()\n", &["dynamic: calls a parenthesized_expression (`(lambda: 1)`)"]);
}

#[test]
fn wildcard_imports_make_bare_names_unresolved() {
    check("from os import *\ndef f():\n    system('x')\n", &["?system"]);
}

#[test]
fn comments_and_strings_create_no_callees() {
    check(
        "def f():
    # os.system('rm -rf /')
    x = \"subprocess.run(['x'])\"
    y = '''eval(x)'''
",
        &[],
    );
}

#[test]
fn calls_inside_fstring_holes_are_real_calls() {
    check("def f(x: str):\n    return f\"{x.upper()}\"\n", &["str.upper"]);
}

/// The `args` of the one `git.Repo.git.add` call fact in `git_add`, or the escalation.
fn splat_sink(body: &str, patterns: &[&str]) -> Result<Option<fcd_model::effect::FactValue>, fcd_frontends::Escalation> {
    use fcd_frontends::{ArgPattern, FactKind, FactSpec};
    let src = format!("import git\ndef git_add(repo: git.Repo, files: list[str]) -> str:\n{body}\n    return 'staged'\n");
    let file = SourceFile { path: "m.py".into(), bytes: src.into_bytes() };
    let region = RegionSpec { name: "r".into(), kind: RegionKind::Function("git_add".into()), optional: false, file: None };
    let args = patterns.iter().map(|p| ArgPattern::parse(p).unwrap()).collect();
    let fact = FactSpec {
        name: "sink".into(),
        region: "r".into(),
        kind: FactKind::Call { callee: "git.Repo.git.add".into(), args: Some(args), keywords: None, matching: false },
    };
    let analysis = analyze(&Python, &[file], &[region], &[fact])?;
    Ok(analysis.facts.first().and_then(|f| f.values.get("args").cloned()))
}

#[test]
fn a_splat_argument_matches_only_a_splat_pattern_of_its_shape() {
    use fcd_model::effect::FactValue;
    let want = Some(FactValue::List(vec![FactValue::Text("str:--".into()), FactValue::Text("*param:files".into())]));
    assert_eq!(splat_sink("    repo.git.add('--', *files)", &["str:--", "*param:files"]).unwrap(), want);
    // Without the separator, or splatting something else, the shape does not match.
    for body in ["    repo.git.add(*files)", "    repo.git.add('--', *others)", "    repo.git.add('--', files)", "    repo.git.add('--', *files, 'x')"] {
        let err = splat_sink(body, &["str:--", "*param:files"]).unwrap_err();
        assert!(err.detail.contains("do not match the profile's shape"), "{body}: {err:?}");
    }
    // `any` is one argument: never a splat, which may be many, or none.
    let err = splat_sink("    repo.git.add('--', *files)", &["str:--", "any"]).unwrap_err();
    assert!(err.detail.contains("do not match"), "{err:?}");
    // The splatted parameter must reach the call unchanged.
    let err = splat_sink("    files = ['-A']\n    repo.git.add('--', *files)", &["str:--", "*param:files"]).unwrap_err();
    assert!(err.detail.contains("rebound"), "{err:?}");
    // `**` stays outside every shape.
    let err = splat_sink("    repo.git.add('--', **files)", &["str:--", "*param:files"]).unwrap_err();
    assert!(err.detail.contains("`**` argument"), "{err:?}");
}

/// The `keywords` of a `fetch` call fact on `body`, or its escalation.
fn keyword_sink(body: &str, keywords: &[(&str, &str)]) -> Result<Option<fcd_model::effect::FactValue>, fcd_frontends::Escalation> {
    use fcd_frontends::{ArgPattern, FactKind, FactSpec};
    let src = format!("import httpx\ndef f(url):\n{body}\n");
    let file = SourceFile { path: "m.py".into(), bytes: src.into_bytes() };
    let region = RegionSpec { name: "r".into(), kind: RegionKind::Function("f".into()), optional: false, file: None };
    let keywords = keywords.iter().map(|(k, p)| (k.to_string(), ArgPattern::parse(p).unwrap())).collect();
    let args = Some(vec![ArgPattern::parse("param:url").unwrap()]);
    let fact = FactSpec {
        name: "sink".into(),
        region: "r".into(),
        kind: FactKind::Call { callee: "httpx.get".into(), args, keywords: Some(keywords), matching: false },
    };
    let analysis = analyze(&Python, &[file], &[region], &[fact])?;
    Ok(analysis.facts.first().and_then(|f| f.values.get("keywords").cloned()))
}

/// A call fact with `keywords` matches keyword arguments by name, in any
/// order; an unlisted, missing (unless optional) or repeated keyword, a
/// value of another shape, or `**` does not match.
#[test]
fn keyword_arguments_match_by_name() {
    use fcd_model::effect::FactValue;
    let kw = [("follow_redirects", "ref:True"), ("timeout", "any"), ("headers", "any?")];
    let text = |v: &[&str]| Some(FactValue::List(v.iter().map(|t| FactValue::Text((*t).into())).collect()));
    assert_eq!(keyword_sink("    httpx.get(url, timeout=3, follow_redirects=True)", &kw).unwrap(), text(&["timeout=any", "follow_redirects=ref:True"]));
    assert_eq!(
        keyword_sink("    httpx.get(url, headers={}, follow_redirects=True, timeout=3)", &kw).unwrap(),
        text(&["headers=any", "follow_redirects=ref:True", "timeout=any"])
    );
    for body in [
        "    httpx.get(url, follow_redirects=True)",
        "    httpx.get(url, follow_redirects=False, timeout=3)",
        "    httpx.get(url, follow_redirects=True, timeout=3, verify=False)",
        "    httpx.get(url=url, follow_redirects=True, timeout=3)",
    ] {
        let err = keyword_sink(body, &kw).unwrap_err();
        assert!(err.detail.contains("do not match the profile's shape"), "{body}: {err:?}");
    }
    let err = keyword_sink("    httpx.get(url, follow_redirects=True, timeout=3, **more)", &kw).unwrap_err();
    assert!(err.detail.contains("`**` argument"), "{err:?}");
    // A followed parameter must arrive unchanged as a keyword value too.
    let kw = [("target", "param:url")];
    let err = keyword_sink("    url = 'http://10.0.0.1/'\n    httpx.get(url, target=url)", &kw).unwrap_err();
    assert!(err.detail.contains("rebound"), "{err:?}");
    // `str(param:url)` is the builtin `str` of the unchanged parameter, nothing else.
    let text = [("follow_redirects", "ref:True")];
    let with_str = |body: &str| {
        use fcd_frontends::{ArgPattern, FactKind, FactSpec};
        let file = SourceFile { path: "m.py".into(), bytes: format!("import httpx\ndef f(url):\n{body}\n").into_bytes() };
        let region = RegionSpec { name: "r".into(), kind: RegionKind::Function("f".into()), optional: false, file: None };
        let keywords = Some(text.iter().map(|(k, p)| (k.to_string(), ArgPattern::parse(p).unwrap())).collect());
        let args = Some(vec![ArgPattern::parse("str(param:url)").unwrap()]);
        let fact = FactSpec { name: "sink".into(), region: "r".into(), kind: FactKind::Call { callee: "httpx.get".into(), args, keywords, matching: false } };
        analyze(&Python, &[file], &[region], &[fact]).map(|a| a.facts.len())
    };
    assert_eq!(with_str("    httpx.get(str(url), follow_redirects=True)").unwrap(), 1);
    for body in
        ["    httpx.get(url, follow_redirects=True)", "    httpx.get(repr(url), follow_redirects=True)", "    httpx.get(str(url, 'x'), follow_redirects=True)"]
    {
        assert!(with_str(body).is_err(), "{body}");
    }
    assert!(with_str("    str = repr\n    httpx.get(str(url), follow_redirects=True)").is_err(), "a rebound str is not the builtin");
    assert!(with_str("    url = url.strip()\n    httpx.get(str(url), follow_redirects=True)").is_err(), "a rebound parameter");
    // Without `keywords`, a keyword argument is outside the shape, as before.
    let plain = |body: &str| {
        use fcd_frontends::{ArgPattern, FactKind, FactSpec};
        let file = SourceFile { path: "m.py".into(), bytes: format!("import httpx\ndef f(url):\n{body}\n").into_bytes() };
        let region = RegionSpec { name: "r".into(), kind: RegionKind::Function("f".into()), optional: false, file: None };
        let args = Some(vec![ArgPattern::parse("param:url").unwrap()]);
        let fact =
            FactSpec { name: "sink".into(), region: "r".into(), kind: FactKind::Call { callee: "httpx.get".into(), args, keywords: None, matching: false } };
        analyze(&Python, &[file], &[region], &[fact]).map(|_| ())
    };
    assert!(plain("    httpx.get(url)").is_ok());
    assert!(plain("    httpx.get(url, timeout=3)").unwrap_err().detail.contains("a keyword argument"));
}

/// Whether `fetch(…)`'s first argument in `body` is the tool's argument
/// `url` (`arg:url`), the handler's model `Fetch` defined by `model`.
fn reaches_as_argument(model: &str, body: &str) -> Result<bool, fcd_frontends::Escalation> {
    use fcd_frontends::{ArgPattern, FactKind, FactSpec};
    let src = format!("from pydantic import BaseModel, AnyUrl\nimport net\n{model}\nasync def handler(name, arguments: dict):\n{body}\n");
    let file = SourceFile { path: "m.py".into(), bytes: src.into_bytes() };
    let region = RegionSpec { name: "r".into(), kind: RegionKind::Function("handler".into()), optional: false, file: None };
    let model_region = RegionSpec { name: "model".into(), kind: RegionKind::Function("Fetch".into()), optional: false, file: None };
    let args = Some(vec![ArgPattern::parse("arg:url").unwrap()]);
    let fact = FactSpec { name: "sink".into(), region: "r".into(), kind: FactKind::Call { callee: "net.fetch".into(), args, keywords: None, matching: true } };
    let analysis = analyze(&Python, &[file], &[region, model_region], &[fact])?;
    Ok(!analysis.facts.is_empty())
}

/// A tool argument reaches a call through a validated model's field:
/// `V = M(**arguments)`, then `V.url`, `str(V.url)`, or a local bound once
/// to either. A model that is no pydantic model, lacks the field, a field
/// that is also a method, arguments used or changed elsewhere, a local
/// bound twice, or another conversion does not carry the argument.
#[test]
fn an_argument_reaches_a_call_through_a_validated_model() {
    let model = "class Fetch(BaseModel):\n    url: AnyUrl\n    raw: bool = False\n";
    for body in [
        "    args = Fetch(**arguments)\n    net.fetch(args.url)",
        "    args = Fetch(**arguments)\n    net.fetch(str(args.url))",
        "    args = Fetch(**arguments)\n    url = str(args.url)\n    net.fetch(url)",
        "    args = Fetch(**arguments)\n    u = (args.url)\n    net.fetch(u)",
    ] {
        assert!(reaches_as_argument(model, body).unwrap(), "{body}");
    }
    for body in [
        "    args = Fetch(**arguments)\n    net.fetch(args.raw_url)",
        "    args = Fetch(**arguments)\n    net.fetch(repr(args.url))",
        "    args = Fetch(**arguments)\n    url = str(args.url)\n    url = url + '/x'\n    net.fetch(url)",
        "    arguments.update(url='http://10.0.0.1/')\n    args = Fetch(**arguments)\n    net.fetch(args.url)",
        "    args = Fetch(**arguments, url='http://10.0.0.1/')\n    net.fetch(args.url)",
        "    args = Fetch(**arguments)\n    args = Fetch(url='x')\n    net.fetch(args.url)",
        "    arguments = {}\n    args = Fetch(**arguments)\n    net.fetch(args.url)",
    ] {
        assert!(!reaches_as_argument(model, body).unwrap(), "{body}");
    }
    let body = "    args = Fetch(**arguments)\n    net.fetch(args.url)";
    for other in [
        "class Fetch:\n    url: str\n",
        "class Fetch(BaseModel):\n    raw: bool\n",
        "class Fetch(BaseModel):\n    url: AnyUrl\n    def url(self):\n        return 'http://10.0.0.1/'\n",
        "class Base(BaseModel):\n    pass\nclass Fetch(Base):\n    url: AnyUrl\n",
        "def wrap(c):\n    return c\n@wrap\nclass Fetch(BaseModel):\n    url: AnyUrl\n",
    ] {
        assert!(!reaches_as_argument(other, body).unwrap_or(false), "{other}");
    }
}

/// Whether a dash guard (`str.startswith` on `target` with `"-"`, exiting
/// before the `git.Repo.git.diff` sink) is found in `body`.
fn dash_guard_in(body: &str, negated: bool) -> bool {
    use fcd_frontends::{ArgPattern, FactKind, FactSpec};
    let src = format!("import git\ndef git_diff(repo: git.Repo, target: str) -> str:\n{body}\n    return repo.git.diff(target)\n");
    let file = SourceFile { path: "m.py".into(), bytes: src.into_bytes() };
    let region = RegionSpec { name: "r".into(), kind: RegionKind::Function("git_diff".into()), optional: false, file: None };
    let pattern = |p: &str| ArgPattern::parse(p).unwrap();
    let sink = FactSpec {
        name: "sink".into(),
        region: "r".into(),
        kind: FactKind::Call { callee: "git.Repo.git.diff".into(), args: None, keywords: None, matching: false },
    };
    let guard = FactSpec {
        name: "guard".into(),
        region: "r".into(),
        kind: FactKind::Guard {
            callee: "str.startswith".into(),
            receiver: Some(pattern("param:target")),
            args: vec![pattern("str:-")],
            before: "sink".into(),
            negated,
            returns: None,
            conjuncts: vec![],
            equals: None,
        },
    };
    let analysis = analyze(&Python, &[file], &[region], &[sink, guard]).expect("analyzes");
    analysis.facts.iter().any(|f| f.name == "guard")
}

#[test]
fn a_guard_may_test_a_local_bound_once_to_the_reviewed_call() {
    assert!(dash_guard_in("    flagged = target.startswith('-')\n    if flagged:\n        raise ValueError('no options')", false));
    assert!(dash_guard_in("    flagged: bool = target.startswith('-')\n    other = 1\n    if (flagged):\n        return 'refused'", false));
    assert!(dash_guard_in("    plain = target.startswith('-')\n    if not plain:\n        pass\n    if plain:\n        raise ValueError('x')", false));
    // Unsafe twins: each leaves the sink unguarded, so no guard fact (the unguarded rules apply).
    for body in [
        // bound twice
        "    flagged = target.startswith('-')\n    flagged = False\n    if flagged:\n        raise ValueError('x')",
        // bound after the test
        "    flagged = False\n    if flagged:\n        raise ValueError('x')\n    flagged = target.startswith('-')",
        // bound only on one path
        "    flagged = False\n    if repo:\n        flagged = target.startswith('-')\n    if flagged:\n        raise ValueError('x')",
        "    if repo:\n        flagged = target.startswith('-')\n    if flagged:\n        raise ValueError('x')",
        // bound to another test
        "    flagged = target.startswith('x')\n    if flagged:\n        raise ValueError('x')",
        "    flagged = target.endswith('-')\n    if flagged:\n        raise ValueError('x')",
        // the negation of the bound test
        "    flagged = target.startswith('-')\n    if not flagged:\n        raise ValueError('x')",
        // chained or tuple assignment
        "    flagged = other = target.startswith('-')\n    if flagged:\n        raise ValueError('x')",
        // bound in a loop
        "    for flagged in [target.startswith('-')]:\n        pass\n    if flagged:\n        raise ValueError('x')",
    ] {
        assert!(!dash_guard_in(body, false), "{body}");
    }
    // A negated guard reads `if not LOCAL:` with LOCAL bound to the call.
    assert!(dash_guard_in("    flagged = target.startswith('-')\n    if not flagged:\n        raise ValueError('x')", true));
    assert!(!dash_guard_in("    flagged = target.startswith('-')\n    if flagged:\n        raise ValueError('x')", true));
}

/// `pkg/server.py`'s `f` and `pkg/helpers.py`, analysed with the regions named.
fn closed_path(server: &str, regions: &[&str]) -> Result<(), fcd_frontends::Escalation> {
    let files = [
        SourceFile { path: "pkg/server.py".into(), bytes: server.as_bytes().to_vec() },
        SourceFile { path: "pkg/helpers.py".into(), bytes: b"import os\n\ndef check(p):\n    os.remove(p)\n".to_vec() },
    ];
    let specs: Vec<RegionSpec> =
        regions.iter().map(|name| RegionSpec { name: (*name).into(), kind: RegionKind::Function((*name).into()), optional: false, file: None }).collect();
    analyze(&Python, &files, &specs, &[]).map(|_| ())
}

#[test]
fn a_function_of_another_release_module_is_called_only_as_a_region() {
    // Whatever the spelling, the call reaches `check` in pkg/helpers.py.
    for server in [
        "from . import helpers\n\ndef f(p):\n    helpers.check(p)\n",
        "from .helpers import check\n\ndef f(p):\n    check(p)\n",
        "from pkg.helpers import check\n\ndef f(p):\n    check(p)\n",
        "import pkg.helpers\n\ndef f(p):\n    pkg.helpers.check(p)\n",
        // In a decorator's arguments, it runs when `f` is defined.
        "import functools\nfrom .helpers import check\n\n@functools.lru_cache(maxsize=check(1))\ndef f(p):\n    return p\n",
    ] {
        let unread = closed_path(server, &["f"]).expect_err("escalates");
        assert_eq!(unread.code, fcd_frontends::EscalationCode::InventoryViolation, "{server}");
        assert!(unread.detail.contains("`check` is defined in the release"), "{server}: {}", unread.detail);
        // Read as a region of its own, the call is what the region's inventory says.
        assert_eq!(closed_path(server, &["f", "check"]), Ok(()), "{server}");
    }
    // A package outside the release is trusted by identity, as before.
    assert_eq!(closed_path("import shutil\n\ndef f(p):\n    shutil.rmtree(p)\n", &["f"]), Ok(()));
}

/// The `hook` fact of `fetch` in `body` (a function with parameters `url`,
/// `allow` and `robots`), the sink `client.get(url)`, the module function
/// `refuse` a region, the profile expecting `installs`.
fn hook_in(body: &str, installs: &[(&str, &str)]) -> Result<Option<fcd_model::effect::FactValue>, fcd_frontends::Escalation> {
    use fcd_frontends::{FactKind, FactSpec};
    let src = format!("import httpx\nasync def refuse(request):\n    raise ValueError('no')\nasync def fetch(url, allow=False, robots=False):\n{body}\n");
    let file = SourceFile { path: "m.py".into(), bytes: src.into_bytes() };
    let regions = [
        RegionSpec { name: "r".into(), kind: RegionKind::Function("fetch".into()), optional: false, file: None },
        RegionSpec { name: "hook".into(), kind: RegionKind::Function("refuse".into()), optional: false, file: None },
    ];
    let installs = installs.iter().map(|(f, c)| (f.to_string(), c.to_string())).collect();
    let facts = [
        FactSpec {
            name: "sink".into(),
            region: "r".into(),
            kind: FactKind::Call { callee: "httpx.AsyncClient().__aenter__().get".into(), args: None, keywords: None, matching: false },
        },
        FactSpec { name: "hooked".into(), region: "r".into(), kind: FactKind::Hook { before: "sink".into(), attribute: "event_hooks".into(), installs } },
    ];
    let analysis = analyze(&Python, &[file], &regions, &facts)?;
    Ok(analysis.facts.iter().find(|f| f.name == "hooked").and_then(|f| f.values.get("installs").cloned()))
}

/// A hook is found only installed once, before the sink, on the sink's own
/// object, naming exactly the reviewed functions under their reviewed
/// conditions (a literal, or a list filled by appends under plain `if`s);
/// anything else escalates, and no assignment is no hook.
#[test]
fn a_hook_is_installed_once_before_the_sink_on_its_object() {
    use fcd_model::effect::FactValue;
    let with = |inner: &str| format!("    async with httpx.AsyncClient() as client:\n{inner}        await client.get(url)");
    let list = |items: &[&str]| Some(FactValue::List(items.iter().map(|i| FactValue::Text((*i).into())).collect()));
    let guarded = [("refuse", "not allow")];
    let conditional = with("        if not allow:\n            client.event_hooks = {'request': [refuse]}\n");
    assert_eq!(hook_in(&conditional, &guarded).unwrap(), list(&["refuse if not allow"]));
    assert_eq!(hook_in(&with("        client.event_hooks = {'request': (refuse,)}\n"), &[("refuse", "")]).unwrap(), list(&["refuse"]));
    assert_eq!(hook_in(&with(""), &guarded).unwrap(), None, "no hook installed");
    let appended = "        hooks: list = []\n        if not allow:\n            hooks.append(refuse)\n        if robots:\n            hooks.append(later)\n        if hooks:\n            client.event_hooks = {'request': hooks}\n";
    let body = format!("    async def later(request):\n        return None\n{}", with(appended));
    assert_eq!(hook_in(&body, &[("refuse", "not allow"), ("later", "robots")]).unwrap(), list(&["later if robots", "refuse if not allow"]));
    let err = hook_in(&body, &guarded).unwrap_err();
    assert!(err.detail.contains("the hooks installed are [later if robots, refuse if not allow], the profile reviewed [refuse if not allow]"), "{err:?}");
    assert!(hook_in(&conditional, &[("refuse", "")]).unwrap_err().detail.contains("the profile reviewed [refuse]"));
    for (inner, why) in [
        ("        client.event_hooks = {'request': [refuse]}\n        client.event_hooks = {}\n", "assigned 2 times"),
        ("        client.event_hooks = {'request': [refuse]}\n        client.event_hooks['request'].clear()\n", "used other than assigned"),
        ("        client.event_hooks = {'request': [refuse, print]}\n", "`print` is neither"),
        ("        client.event_hooks = {'request': [lambda r: None]}\n", "neither a literal nor a name"),
        ("        client.event_hooks = make()\n", "neither a literal nor a name"),
        (
            "        if not allow:\n            client.event_hooks = {'request': [refuse]}\n        else:\n            pass\n",
            "not a plain one-statement branch",
        ),
        ("        for _ in range(0):\n            client.event_hooks = {'request': [refuse]}\n", "does not hold the sink"),
        (
            "        flag = False\n        if not flag:\n            client.event_hooks = {'request': [refuse]}\n",
            "whose `flag` is not a parameter of the function that nothing rebinds",
        ),
        (
            "        hooks = []\n        hooks.append(refuse)\n        client.event_hooks = {'request': hooks}\n        hooks.clear()\n",
            "used other than appended",
        ),
        ("        hooks = []\n        client.event_hooks = {'request': hooks}\n        hooks.append(refuse)\n", "changed after the hooks are installed"),
        (
            "        hooks = []\n        for f in [refuse]:\n            hooks.append(f)\n        client.event_hooks = {'request': hooks}\n",
            "used other than appended",
        ),
    ] {
        let expect = if inner.contains("flag") { [("refuse", "not flag")] } else { guarded };
        let err = hook_in(&with(inner), &expect).unwrap_err();
        assert!(err.detail.contains(why), "{inner}: {err:?}");
    }
    let after = "    async with httpx.AsyncClient() as client:\n        await client.get(url)\n        client.event_hooks = {'request': [refuse]}";
    assert!(hook_in(after, &guarded).unwrap_err().detail.contains("after the sink"));
    for inner in [
        "        client.event_hooks = {'request': [refuse]}\n        other = client\n        other.event_hooks = {}\n",
        "        client.event_hooks = {'request': [refuse]}\n        reset(client)\n",
    ] {
        assert!(hook_in(&with(inner), &guarded).unwrap_err().detail.contains("other than through its members"), "{inner}");
    }
    for inner in [
        "        client.event_hooks = {'request': [refuse]}\n        client._event_hooks = {}\n",
        "        client.event_hooks = {'request': [refuse]}\n        del client.x\n",
    ] {
        assert!(hook_in(&with(inner), &guarded).unwrap_err().detail.contains("has a member written"), "{inner}");
    }
}

/// A module-level constant as a region: located by its assignment, its
/// initializer's calls are its call sites, and it escalates when it is bound
/// again or used other than read as a whole (`for … in`, `in`).
#[test]
fn a_constant_region_is_bound_once_and_only_read() {
    let run = |src: &str| {
        let file = SourceFile { path: "m.py".into(), bytes: src.as_bytes().to_vec() };
        let region = RegionSpec { name: "table".into(), kind: RegionKind::Variable("NETS".into()), optional: false, file: None };
        analyze(&Python, &[file], &[region], &[])
    };
    let table = "import ipaddress\nNETS = tuple(ipaddress.ip_network(n) for n in ('10.0.0.0/8', '127.0.0.0/8'))\n";
    let ok = run(&format!("{table}def f(ip):\n    return any(ip in n for n in NETS) or ip in NETS or ip not in NETS\n")).expect("registers");
    assert_eq!(crate::common::callees_of(&ok), ["tuple", "ipaddress.ip_network"]);
    for (rest, why) in [
        ("NETS: tuple\nif True:\n    NETS = ()\n", "is bound again"),
        ("def f():\n    global NETS\n    NETS = ()\n", "is bound again"),
        ("def f():\n    NETS.append(1)\n", "used other than as a whole"),
        ("def f():\n    g(NETS)\n", "used other than as a whole"),
        ("def f():\n    x = NETS\n", "used other than as a whole"),
        ("def f(ip):\n    return NETS in ip\n", "used other than as a whole"),
    ] {
        let err = run(&format!("{table}{rest}")).unwrap_err();
        assert!(err.detail.contains(why), "{rest}: {err:?}");
    }
    assert_eq!(run(&format!("{table}NETS = ()\n")).unwrap_err().code, fcd_frontends::EscalationCode::RegionAmbiguous);
    let other = SourceFile { path: "other.py".into(), bytes: b"from m import NETS\n".to_vec() };
    let file = SourceFile { path: "m.py".into(), bytes: table.as_bytes().to_vec() };
    let region = RegionSpec { name: "table".into(), kind: RegionKind::Variable("NETS".into()), optional: false, file: None };
    let err = analyze(&Python, &[file, other], &[region], &[]).unwrap_err();
    assert!(err.detail.contains("is imported"), "{err:?}");
}

/// Inside a function nested in the region, its own parameters resolve by
/// their annotation and calling one is `param:NAME`; a conditional value is
/// one path when both branches agree, else both; outside the nested
/// function the name is not its parameter.
#[test]
fn nested_parameters_and_conditional_values_resolve() {
    check(
        "from mcp.server import Context
def f(server: Context):
    async def middleware(ctx: Context, call_next):
        params = ctx.params if ctx else {}
        same = ctx.params if ctx else ctx.params
        params.get('name')
        same.get('name')
        await call_next(ctx)
    call_next()
    return middleware
",
        &["(dict|mcp.server.Context.params).get", "mcp.server.Context.params.get", "param:call_next", "?call_next"],
    );
}

/// A registered route's server object: another registration method named
/// like the tool (`@server.prompt(name=…)`), a member's method
/// (`server.middleware.append`), the object handed to a module function and
/// the maker's result bound to a local are call sites of the route, for its
/// inventory; only `@X.tool` registers the tool.
#[test]
fn a_registered_routes_server_object_is_followed_through_its_uses() {
    let src = "from mcp.server import MCPServer
def guard(server):
    return server
def create_server():
    server = MCPServer('x')
    server.middleware.append(guard(server))
    @server.tool(name='fetch')
    async def fetch(url: str) -> str:
        return url
    @server.prompt(name='fetch')
    async def fetch_prompt(url: str) -> str:
        return url
    return server
async def serve():
    s = create_server()
    await s.run_stdio_async()
";
    let file = SourceFile { path: "server.py".into(), bytes: src.as_bytes().to_vec() };
    let region = RegionSpec { name: "r".into(), kind: RegionKind::Route("fetch".into()), optional: false, file: None };
    let analysis = analyze(&Python, std::slice::from_ref(&file), &[region], &[]).expect("one route");
    let calls = crate::common::callees_of(&analysis);
    for want in [
        "mcp.server.MCPServer().middleware.append",
        "mcp.server.MCPServer().prompt",
        "server.create_server().run_stdio_async",
        "@mcp.server.MCPServer().tool()",
    ] {
        assert!(calls.iter().any(|c| c == want), "{want} in {calls:?}");
    }
    assert!(calls.iter().any(|c| c.starts_with("?guard")), "the module function the server is handed to is unread until it is a region: {calls:?}");
    let aliased =
        src.replace("    s = create_server()\n    await s.run_stdio_async()\n", "    s = create_server()\n    t = s\n    await t.run_stdio_async()\n");
    let file = SourceFile { path: "server.py".into(), bytes: aliased.into_bytes() };
    let region = RegionSpec { name: "r".into(), kind: RegionKind::Route("fetch".into()), optional: false, file: None };
    let err = analyze(&Python, &[file], &[region], &[]).unwrap_err();
    assert!(err.detail.contains("used otherwise than by calling a method on its result"), "{err:?}");
}

/// A call inside a function the region defines runs when that function is
/// called, not where it is written: its call site says so.
#[test]
fn calls_in_nested_functions_are_deferred() {
    let src = "import os\ndef f(x):\n    def later():\n        os.remove(x)\n    cb = lambda: os.rmdir(x)\n    os.stat(x)\n";
    let file = SourceFile { path: "m.py".into(), bytes: src.as_bytes().to_vec() };
    let region = RegionSpec { name: "r".into(), kind: RegionKind::Function("f".into()), optional: false, file: None };
    let analysis = analyze(&Python, &[file], &[region], &[]).expect("analyzes");
    let deferred: Vec<(String, bool)> = analysis.regions[0].calls.iter().map(|c| (c.identity.to_string(), c.deferred)).collect();
    assert_eq!(deferred, [("os.remove".to_owned(), true), ("os.rmdir".to_owned(), true), ("os.stat".to_owned(), false)]);
}

/// A dispatcher that routes by an `if`/`elif` chain on its name parameter
/// (the reference SQLite server's shape, in our own words).
const IF_DISPATCHER: &str = "from mcp.server import Server
from mcp.types import TextContent
import store

server = Server('t')

@server.call_tool()
async def dispatch(name: str, arguments: dict) -> list:
    try:
        if name == 'list_things':
            return [TextContent(text=store.listing())]
        elif name == 'add_thing':
            store.add(arguments['thing'])
            return []
        if not arguments:
            raise ValueError('no arguments')
        if name == 'read_thing':
            return [TextContent(text=store.read(arguments['key']))]
        elif 'drop_thing' == name:
            store.drop(arguments['key'])
            return []
        else:
            raise ValueError(name)
    except Exception as e:
        return [TextContent(text=str(e))]
";

/// The route of `tool` in `src`: its callees, or the escalation.
fn if_route(src: &str, tool: &str) -> Result<Vec<String>, fcd_frontends::Escalation> {
    let file = SourceFile { path: "server.py".into(), bytes: src.as_bytes().to_vec() };
    let region = RegionSpec { name: "route".into(), kind: RegionKind::Route(tool.into()), optional: false, file: None };
    let env = fcd_frontends::Env { tool: tool.into(), ..fcd_frontends::Env::default() };
    fcd_frontends::analyze_with(&Python, &[file], &[region], &[], &env).map(|a| crate::common::callees_of(&a))
}

fn if_route_escalates(src: &str, tool: &str, reason: &str) {
    match if_route(src, tool) {
        Ok(calls) => panic!("expected an escalation ({reason}), got the route {calls:?} in:\n{src}"),
        Err(e) => assert!(e.detail.contains(reason), "expected `{reason}` in {:?} ({:?}) for:\n{src}", e.detail, e.code),
    }
}

/// An `if NAME == VALUE:` body is a route: its own calls and the
/// dispatcher's shared statements, without the bodies only another tool's
/// name enters; `VALUE == NAME` in an `elif` likewise.
#[test]
fn an_if_branch_on_the_name_parameter_is_a_route() {
    let calls = if_route(IF_DISPATCHER, "read_thing").expect("the if body is the route");
    for want in ["store.read", "mcp.types.TextContent", "ValueError", "str", "@mcp.server.Server().call_tool()"] {
        assert!(calls.iter().any(|c| c == want), "{want} in {calls:?}");
    }
    for other in ["store.listing", "store.add", "store.drop"] {
        assert!(!calls.iter().any(|c| c == other), "{other} runs only for another tool: {calls:?}");
    }
    let calls = if_route(IF_DISPATCHER, "drop_thing").expect("the elif body, VALUE == NAME, is the route");
    assert!(calls.iter().any(|c| c == "store.drop") && !calls.iter().any(|c| c == "store.read"), "{calls:?}");
    // A plain string enum member spells the value as well as a literal.
    let enumed = format!(
        "from enum import Enum\nclass Tools(str, Enum):\n    READ = 'read_thing'\n{}",
        IF_DISPATCHER.replace("if name == 'read_thing':", "if name == Tools.READ.value:")
    );
    let calls = if_route(&enumed, "read_thing").expect("an enum member names the tool");
    assert!(calls.iter().any(|c| c == "store.read"), "{calls:?}");
    // Another spelling of the test is no route of the tool (the region is missing).
    for test in ["if name != 'read_thing':", "if name == 'read_thing' or name == 'x':", "if name in ('read_thing',):", "if name.startswith('read_thing'):"] {
        let src = IF_DISPATCHER.replace("if name == 'read_thing':", test);
        assert!(if_route(&src, "read_thing").is_err(), "{test} is no route");
    }
}

/// Hostile dispatchers: whatever could take the call before the tool's own
/// branch, or keep it from running, escalates, naming the line.
#[test]
fn an_if_route_escalates_when_something_else_may_take_the_call() {
    let cases: &[(&str, &str, &str, &str)] = &[
        // An earlier branch of the chain that tests something unknown.
        ("drop_thing", "        if name == 'read_thing':", "        if name.startswith('read'):", "an earlier branch (line 17)"),
        ("drop_thing", "        if name == 'read_thing':", "        if arguments.get('x'):", "an earlier branch (line 17)"),
        // An earlier test of the name with an unknown value, `!=`, `or`, `in`.
        ("read_thing", "        if name == 'list_things':", "        if name == PREFIX:", "an earlier test of the tool's name (line 10)"),
        ("read_thing", "        if name == 'list_things':", "        if name != 'list_things':", "an earlier test of the tool's name (line 10)"),
        (
            "read_thing",
            "        if name == 'list_things':",
            "        if name == 'list_things' or name == 'other':",
            "an earlier test of the tool's name (line 10)",
        ),
        (
            "read_thing",
            "        elif name == 'add_thing':",
            "        elif name in ('add_thing', 'read_thing'):",
            "an earlier test of the tool's name (line 12)",
        ),
        // An earlier chain on the name with an `else`: it runs for the tool.
        ("read_thing", "        if not arguments:", "        else:\n            return []\n        if not arguments:", "the `else` (line 15)"),
        // The name rebound in the dispatcher.
        ("read_thing", "    try:\n", "    name = name.lower()\n    try:\n", "which it binds again"),
        ("read_thing", "    try:\n", "    for name in ['read_thing']:\n        pass\n    try:\n", "which it binds again"),
    ];
    for (tool, from, to, reason) in cases {
        assert!(IF_DISPATCHER.contains(from), "{from}");
        if_route_escalates(&IF_DISPATCHER.replacen(from, to, 1), tool, reason);
    }
    // The route inside an `else`, another tool's branch, a loop, a handler.
    let chain = IF_DISPATCHER.split_once("        if name == 'read_thing':").map(|(_, rest)| rest).unwrap();
    let chain = format!("        if name == 'read_thing':{}", chain.split_once("    except").unwrap().0);
    let nested = |head: &str| {
        let indented: String = chain.lines().map(|l| format!("    {l}\n")).collect();
        IF_DISPATCHER.replace(&chain, &format!("{head}\n{indented}"))
    };
    if_route_escalates(&nested("        if arguments.get('fast'):\n            pass\n        else:"), "read_thing", "inside a `else` (line 19)");
    if_route_escalates(&nested("        if arguments.get('fast'):"), "read_thing", "inside a `if` (line 17)");
    if_route_escalates(&nested("        if name == 'list_all':"), "read_thing", "only another tool's name passes");
    if_route_escalates(&nested("        for _ in range(1):"), "read_thing", "inside a `for` (line 17)");
    if_route_escalates(&nested("        while arguments:"), "read_thing", "inside a `while` (line 17)");
    // Two branches for the tool: which one runs is the earlier's, never a guess.
    let twice = IF_DISPATCHER.replace("        if not arguments:", "        if name == 'read_thing':\n            return []\n        if not arguments:");
    assert!(if_route(&twice, "read_thing").is_err(), "two routes of one tool escalate");
}
