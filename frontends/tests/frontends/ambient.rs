//! Process-wide state (issue 26, point 2): an operation that writes the
//! environment, the working directory, the umask, signal handlers or the
//! logging configuration anywhere in the closure escalates, in every
//! language, whatever import or alias spells it; a read does not; a region
//! pinned by a `body` fact may. Each case is written once per language.

use fcd_compiler::languages::frontend;
use fcd_frontends::{Env, Escalation, EscalationCode, FactKind, FactSpec, Lang, RegionKind, RegionSpec, SourceFile, analyze, analyze_with};

/// How one language spells a handler `h` (calling `sink(x)`) beside a
/// helper `setup` whose body is `BODY`, with `IMPORTS` at the top.
struct Spelling {
    lang: Lang,
    path: &'static str,
    template: &'static str,
    region: &'static str,
    helper: &'static str,
}

const PYTHON: Spelling = Spelling {
    lang: Lang::Python,
    path: "m.py",
    template: "IMPORTS\nfrom lib import sink\n\n\ndef h(x):\n    sink(x)\n\n\ndef setup(x, k):\n    BODY\n",
    region: "h",
    helper: "setup",
};

const JAVASCRIPT: Spelling = Spelling {
    lang: Lang::JavaScript,
    path: "m.js",
    template: "IMPORTS\nimport { sink } from \"lib\";\n\nexport function h(x) {\n  sink(x);\n}\n\nfunction setup(x, k) {\n  BODY;\n}\n",
    region: "h",
    helper: "setup",
};

const GO: Spelling = Spelling {
    lang: Lang::Go,
    path: "pkg/m.go",
    template: "package m\n\nIMPORTS\n\nfunc F() T {\n\treturn New(func(x string) error {\n\t\tsink(x)\n\t\treturn nil\n\t})\n}\n\nfunc setup(x, k string) {\n\tBODY\n}\n",
    region: "F",
    helper: "setup",
};

const CSHARP: Spelling = Spelling {
    lang: Lang::CSharp,
    path: "src/M.cs",
    template: "IMPORTS\n\npublic class C\n{\n    public void M(string x)\n    {\n        Sink(x);\n    }\n\n    public void Setup(string x, string k)\n    {\n        BODY;\n    }\n}\n",
    region: "C.M",
    helper: "C.Setup",
};

impl Spelling {
    fn source(&self, imports: &str, body: &str) -> String {
        self.template.replace("IMPORTS", imports).replace("BODY", body)
    }

    fn kind(&self, name: &str) -> RegionKind {
        if self.lang == Lang::Go && name == self.region { RegionKind::Literal(name.into()) } else { RegionKind::Function(name.into()) }
    }

    /// The analysis of the source, with the helper a region pinned by a `body` fact when `pinned` holds the digest.
    fn analyze(&self, imports: &str, body: &str, pinned: Option<&str>) -> Result<(), Escalation> {
        let sink = if self.lang == Lang::CSharp {
            "Sink"
        } else if self.lang == Lang::Python {
            "lib.sink"
        } else {
            "sink"
        };
        let mut regions = vec![RegionSpec { name: "r".into(), kind: self.kind(self.region), optional: false, file: None }];
        let mut facts = vec![FactSpec {
            name: "sink".into(),
            region: "r".into(),
            kind: FactKind::Call { callee: sink.into(), args: None, keywords: None, matching: false },
        }];
        if let Some(digest) = pinned {
            regions.push(RegionSpec { name: "setup".into(), kind: self.kind(self.helper), optional: false, file: None });
            facts.push(FactSpec { name: "pin".into(), region: "setup".into(), kind: FactKind::Body { digests: vec![digest.into()] } });
        }
        let file = SourceFile { path: self.path.into(), bytes: self.source(imports, body).into_bytes() };
        analyze(frontend(self.lang), &[file], &regions, &facts).map(|_| ())
    }
}

/// `(imports, body)` per language, for one case.
type Case = [(&'static str, &'static str); 4];

const ALL: [&Spelling; 4] = [&PYTHON, &JAVASCRIPT, &GO, &CSHARP];

/// Every spelling of `case` escalates with `shape_mismatch`, anchored in the helper, naming `state`.
fn escalates(what: &str, case: Case, state: &str) {
    for (s, (imports, body)) in ALL.iter().zip(case) {
        let e = s.analyze(imports, body, None).expect_err(&format!("{what} ({}): `{body}` must escalate", s.lang));
        assert_eq!(e.code, EscalationCode::ShapeMismatch, "{what} ({}): {}", s.lang, e.detail);
        assert!(e.detail.contains(state), "{what} ({}): the reason names {state}: {}", s.lang, e.detail);
        let anchor = e.anchor.as_ref().unwrap_or_else(|| panic!("{what} ({}): an anchor", s.lang));
        let line = s.source(imports, body).lines().position(|l| l.contains(body.trim())).unwrap() as u32 + 1;
        assert_eq!((anchor.file.as_str(), anchor.line), (s.path, line), "{what} ({}): {}", s.lang, e.detail);
    }
}

fn registers(what: &str, case: Case) {
    for (s, (imports, body)) in ALL.iter().zip(case) {
        if let Err(e) = s.analyze(imports, body, None) {
            panic!("{what} ({}): `{body}` must not escalate: {e:?}", s.lang);
        }
    }
}

const PY_OS: &str = "import os";
const GO_OS: &str = "import \"os\"";
const CS: &str = "using System;";

#[test]
fn setting_an_environment_variable_escalates() {
    escalates(
        "set",
        [
            (PY_OS, "os.environ.setdefault(\"GIT_DIR\", x)"),
            ("", "process.env.GIT_DIR = x"),
            (GO_OS, "os.Setenv(\"GIT_DIR\", x)"),
            (CS, "Environment.SetEnvironmentVariable(\"GIT_DIR\", x)"),
        ],
        "the process environment",
    );
    escalates(
        "set by key",
        [
            (PY_OS, "os.environ[k] = x"),
            ("", "process.env[k] = x"),
            ("import \"syscall\"", "syscall.Setenv(k, x)"),
            ("using System;", "System.Environment.SetEnvironmentVariable(k, x)"),
        ],
        "the process environment",
    );
}

#[test]
fn every_mutating_spelling_escalates() {
    for (py, js) in [
        ("os.environ.update({\"A\": x})", "Object.assign(process.env, { A: x })"),
        ("os.environ.pop(k)", "delete process.env[k]"),
        ("os.environ.popitem()", "delete process.env.A"),
        ("os.environ.clear()", "Object.defineProperty(process.env, k, { value: x })"),
        ("os.environ.__setitem__(k, x)", "process.env.A += x"),
        ("del os.environ[k]", "Reflect.deleteProperty(process.env, k)"),
        ("os.environ |= {k: x}", "process.env.A ||= x"),
        ("os.putenv(k, x)", "process.env = {}"),
    ] {
        let go = if py.contains("del ") { "os.Unsetenv(k)" } else { "os.Clearenv()" };
        escalates(py, [(PY_OS, py), ("", js), (GO_OS, go), (CS, "Environment.SetEnvironmentVariable(k, null)")], "the process environment");
    }
}

#[test]
fn the_working_directory_the_umask_and_signal_handlers_escalate() {
    escalates(
        "cwd",
        [(PY_OS, "os.chdir(x)"), ("", "process.chdir(x)"), (GO_OS, "os.Chdir(x)"), ("using System.IO;", "Directory.SetCurrentDirectory(x)")],
        "the working directory",
    );
    escalates(
        "cwd property",
        [
            ("from os import chdir", "chdir(x)"),
            ("import { chdir } from \"node:process\";", "chdir(x)"),
            ("import \"syscall\"", "syscall.Chdir(x)"),
            (CS, "Environment.CurrentDirectory = x"),
        ],
        "the working directory",
    );
    escalates(
        "umask",
        [(PY_OS, "os.umask(0)"), ("", "process.umask(0)"), ("import \"syscall\"", "syscall.Umask(0)"), (CS, "Environment.CurrentDirectory = x")],
        "",
    );
    escalates(
        "signals",
        [
            ("import signal", "signal.signal(signal.SIGTERM, signal.SIG_IGN)"),
            ("", "process.on(\"SIGTERM\", () => {})"),
            ("import \"os/signal\"", "signal.Notify(nil)"),
            (CS, "Console.CancelKeyPress += (s, e) => { }"),
        ],
        "the signal handlers",
    );
}

#[test]
fn aliased_imports_escalate() {
    escalates(
        "aliased",
        [
            ("from os import environ as E", "E.setdefault(\"GIT_DIR\", x)"),
            ("import { env as E } from \"process\";", "E.GIT_DIR = x"),
            ("import o \"os\"", "o.Setenv(\"GIT_DIR\", x)"),
            ("using E = System.Environment;", "E.SetEnvironmentVariable(\"GIT_DIR\", x)"),
        ],
        "the process environment",
    );
    escalates(
        "module aliased",
        [
            ("import os as o", "o.environ.update(A=x)"),
            ("import p from \"node:process\";", "p.env.GIT_DIR = x"),
            ("import (\n\to \"os\"\n)", "f := o.Setenv; f(k, x)"),
            ("using global::System;", "global::System.Environment.SetEnvironmentVariable(k, x)"),
        ],
        "the process environment",
    );
    escalates(
        "local alias",
        [
            ("import os\nenv = os.environ", "env[k] = x"),
            ("const { env } = process;", "env.GIT_DIR = x"),
            ("import (\n\t\"os\"\n)", "os.Unsetenv(k)"),
            ("using D = System.IO.Directory;", "D.SetCurrentDirectory(x)"),
        ],
        "",
    );
}

#[test]
fn logging_configuration_escalates_in_python() {
    for (imports, body) in [
        ("import logging", "logging.basicConfig(filename=x)"),
        ("import logging", "logging.basicConfig(level=k, handlers=[x])"),
        ("import logging", "logging.basicConfig(level=k, stream=x)"),
        ("import logging\nimport sys", "logging.basicConfig(k, stream=sys.stderr)"),
        ("import logging", "logging.basicConfig(**x)"),
        ("import logging", "config = logging.basicConfig"),
        ("import logging", "logging.root.addHandler(x)"),
        ("import logging", "logging.getLogger().addHandler(x)"),
        ("import logging as L", "L.getLogger(\"git\").addFilter(k)"),
        ("import logging.config", "logging.config.dictConfig(x)"),
        ("from logging import root", "root.handlers = []"),
    ] {
        let e = PYTHON.analyze(imports, body, None).expect_err(body);
        assert_eq!(e.code, EscalationCode::ShapeMismatch, "{body}: {}", e.detail);
        assert!(e.detail.contains("the logging configuration"), "{body}: {}", e.detail);
    }
    let go = GO.analyze("import \"log/slog\"", "slog.SetDefault(nil)", None).expect_err("slog.SetDefault");
    assert!(go.detail.contains("the logging configuration"), "{}", go.detail);
}

/// How much is said, and in what format, on a standard stream is no sink's
/// input: `basicConfig` with only such keywords, and a logger's level, register.
#[test]
fn logging_verbosity_on_a_standard_stream_registers_in_python() {
    for (imports, body) in [
        ("import logging\nimport sys", "logging.basicConfig(level=k, stream=sys.stderr)"),
        ("import logging\nfrom sys import stdout as out", "logging.basicConfig(level=logging.DEBUG, format=x, stream=out)"),
        ("import logging", "logging.basicConfig(level=k)"),
        ("import logging", "logging.basicConfig()"),
        ("import logging as L", "L.getLogger(\"git\").setLevel(k)"),
    ] {
        if let Err(e) = PYTHON.analyze(imports, body, None) {
            panic!("`{body}` must register: {}", e.detail);
        }
    }
}

#[test]
fn reads_do_not_escalate() {
    registers(
        "get",
        [
            (PY_OS, "return os.environ.get(\"GIT_DIR\", x)"),
            ("", "return process.env.GIT_DIR ?? x"),
            (GO_OS, "_ = os.Getenv(\"GIT_DIR\")"),
            (CS, "var v = Environment.GetEnvironmentVariable(\"GIT_DIR\")"),
        ],
    );
    registers(
        "copy",
        [
            ("from os import environ as E", "return {**E, \"A\": x, \"B\": E[k], \"C\": E.copy()}"),
            ("import { env } from \"node:process\";", "return { ...env, A: x, B: env[k], C: process.cwd() }"),
            ("import o \"os\"", "_, _ = o.LookupEnv(k); _, _ = o.Getwd()"),
            ("using E = System.Environment;", "var v = E.CurrentDirectory + E.GetEnvironmentVariables()"),
        ],
    );
    registers(
        "umask read, other listeners",
        [
            ("import logging", "logging.getLogger(__name__).info(x)"),
            ("", "process.umask(); process.on(\"exit\", () => {})"),
            ("import \"log\"", "log.Printf(x)"),
            (CS, "Console.WriteLine(x)"),
        ],
    );
    // A local of another value named like the state is not it.
    registers(
        "shadowed",
        [
            ("import os", "environ = {}\n    environ.update(A=x)"),
            ("", "const process = { env: {} }; process.env.A = x"),
            ("import \"os\"", "m := map[string]string{}; m[k] = x"),
            (CS, "var d = new Dictionary<string, string>(); d[k] = x"),
        ],
    );
}

#[test]
fn a_region_pinned_by_a_body_fact_may_write_it() {
    let case: Case = [
        (PY_OS, "os.environ.setdefault(\"GIT_DIR\", x)"),
        ("", "process.env.GIT_DIR = x"),
        (GO_OS, "os.Setenv(\"GIT_DIR\", x)"),
        (CS, "Environment.SetEnvironmentVariable(\"GIT_DIR\", x)"),
    ];
    for (s, (imports, body)) in ALL.iter().zip(case) {
        // The body's digest, from the escalation a wrong one gives.
        let wrong = s.analyze(imports, body, Some("0")).expect_err("a wrong digest escalates");
        let digest = wrong.detail.split("token digest ").nth(1).and_then(|d| d.split_whitespace().next()).unwrap_or_else(|| panic!("{}", wrong.detail));
        s.analyze(imports, body, Some(digest)).unwrap_or_else(|e| panic!("{} pinned: {e:?}", s.lang));
        // Unpinned, the same helper escalates.
        assert!(s.analyze(imports, body, None).is_err(), "{}: unpinned", s.lang);
    }
}

/// The analysis of `source` (handler `h` calling `sink`), with the function
/// `pinned` a region pinned by a `body` fact when `digest` is given.
fn analyze_pinned(lang: Lang, path: &str, source: &str, pinned: &str, digest: Option<&str>) -> Result<(), Escalation> {
    let sink = if lang == Lang::Python { "lib.sink" } else { "sink" };
    let mut regions = vec![RegionSpec { name: "r".into(), kind: RegionKind::Function("h".into()), optional: false, file: None }];
    let mut facts =
        vec![FactSpec { name: "sink".into(), region: "r".into(), kind: FactKind::Call { callee: sink.into(), args: None, keywords: None, matching: false } }];
    if let Some(digest) = digest {
        regions.push(RegionSpec { name: "listener".into(), kind: RegionKind::Function(pinned.into()), optional: false, file: None });
        facts.push(FactSpec { name: "pin".into(), region: "listener".into(), kind: FactKind::Body { digests: vec![digest.into()] } });
    }
    analyze(frontend(lang), &[SourceFile { path: path.into(), bytes: source.as_bytes().to_vec() }], &regions, &facts).map(|_| ())
}

/// A signal listener is code that runs at any point of a call: installing
/// one registers only when its function is a region a reviewer pinned, and
/// the name that installs it is bound to that function alone.
#[test]
fn a_signal_listener_registers_only_when_its_function_is_pinned() {
    let js = "import { sink } from \"lib\";\n\nexport function h(x) {\n  sink(x);\n}\n\nfunction main() {\n  const stop = async () => {\n    console.error(\"bye\");\n    process.exit(0);\n  };\n  LISTEN;\n}\n";
    let py =
        "import signal\nfrom lib import sink\n\n\ndef h(x):\n    sink(x)\n\n\ndef stop(signum, frame):\n    raise SystemExit(0)\n\n\ndef main():\n    LISTEN\n";
    let cases = [(Lang::JavaScript, "m.js", js, "process.on(\"SIGTERM\", stop)"), (Lang::Python, "m.py", py, "signal.signal(signal.SIGTERM, stop)")];
    for (lang, path, template, listen) in cases {
        let source = template.replace("LISTEN", listen);
        let unpinned = analyze_pinned(lang, path, &source, "stop", None).expect_err("an unpinned listener escalates");
        assert!(unpinned.detail.contains("the signal handlers"), "{lang}: {}", unpinned.detail);
        let wrong = analyze_pinned(lang, path, &source, "stop", Some("0")).expect_err("a wrong digest escalates");
        let digest = wrong.detail.split("token digest ").nth(1).and_then(|d| d.split_whitespace().next()).unwrap_or_else(|| panic!("{}", wrong.detail));
        analyze_pinned(lang, path, &source, "stop", Some(digest)).unwrap_or_else(|e| panic!("{lang}: the pinned listener registers: {e:?}"));
        // The same pin, but the listener installed is another function, one written inline, or the name is bound twice.
        let (other, inline, rebound) = match lang {
            Lang::Python => (
                source.replace(listen, "signal.signal(signal.SIGTERM, main)"),
                source.replace(listen, "signal.signal(signal.SIGTERM, lambda s, f: None)"),
                source.replace(listen, "signal.signal(signal.SIGTERM, stop)\n\n\nstop = main"),
            ),
            _ => (
                source.replace(listen, "process.on(\"SIGTERM\", main)"),
                source.replace(listen, "process.on(\"SIGTERM\", () => {})"),
                source.replace(listen, "process.on(\"SIGTERM\", stop);\n  if (k) { var stop = main; }"),
            ),
        };
        for variant in [other, inline, rebound] {
            let e = analyze_pinned(lang, path, &variant, "stop", Some(digest)).err();
            assert!(e.is_some(), "{lang}: must escalate:\n{variant}");
        }
    }
}

/// A listener whose function's token digest the profile lists
/// (`source.signal-listeners`) registers without a region; the escalation of
/// an unlisted one names that digest; another function escalates.
#[test]
fn a_signal_listener_registers_when_its_digest_is_reviewed() {
    let source = "import { sink } from \"lib\";\n\nexport function h(x) {\n  sink(x);\n}\n\nfunction main() {\n  const stop = async () => {\n    process.exit(0);\n  };\n  process.on(\"SIGINT\", stop);\n  process.on(\"SIGTERM\", stop);\n}\n";
    let regions = [RegionSpec { name: "r".into(), kind: RegionKind::Function("h".into()), optional: false, file: None }];
    let facts =
        [FactSpec { name: "sink".into(), region: "r".into(), kind: FactKind::Call { callee: "sink".into(), args: None, keywords: None, matching: false } }];
    let run = |source: &str, listeners: &[String]| {
        let env = Env { signal_listeners: listeners.to_vec(), reviewed: vec!["h".into()], ..Env::default() };
        analyze_with(frontend(Lang::JavaScript), &[SourceFile { path: "m.js".into(), bytes: source.as_bytes().to_vec() }], &regions, &facts, &env).map(|_| ())
    };
    let e = run(source, &[]).expect_err("an unreviewed listener escalates");
    assert!(e.detail.contains("line 8") && e.detail.contains("source.signal-listeners"), "{}", e.detail);
    let digest = e.detail.split("token digest ").nth(1).and_then(|d| d.split([',', ')']).next()).unwrap().to_owned();
    assert!(digest.starts_with("sha256:"), "{}", e.detail);
    run(source, std::slice::from_ref(&digest)).unwrap_or_else(|e| panic!("the reviewed listener registers: {e:?}"));
    let other = source.replace("process.exit(0);", "require(\"fs\").writeFileSync(\"/tmp/x\", \"\");\n    process.exit(0);");
    assert!(run(&other, &[digest]).is_err(), "a listener with another body escalates");
}

/// Special attributes decide what an object is and does: writing one
/// through any object, a local's too, escalates (issue 26: `obj.attr.__class__ = …`).
#[test]
fn writing_a_special_attribute_of_any_object_escalates() {
    for body in [
        "x.attr.__class__ = k",
        "x.__dict__[\"run\"] = k",
        "x.__dict__.update(run=k)",
        "del x.__defaults__",
        "x.method.__code__ = k.__code__",
        "x.__getattr__ = k",
        "object.__setattr__(x, \"run\", k)",
        "type(x).__setitem__(x, \"GIT_DIR\", k)",
        "type(x).__call__ = k",
        "(a, x.__class__) = (1, k)",
    ] {
        let e = PYTHON.analyze("", body, None).expect_err(body);
        assert!(e.detail.contains("special"), "{body}: {}", e.detail);
    }
    for body in ["x.__proto__ = k", "Object.setPrototypeOf(x, k)"] {
        assert!(JAVASCRIPT.analyze("", body, None).is_err(), "{body}");
    }
    // Reading one, or writing an ordinary attribute of a local, is not such a write.
    for body in ["y = x.__class__.__name__", "x.name = k", "print(x.__dict__.get(\"a\"))"] {
        if let Err(e) = PYTHON.analyze("", body, None) {
            panic!("`{body}` must register: {}", e.detail);
        }
    }
}

/// A loaded file that does not parse is read in what the parser recovered,
/// and only there: a write to process-wide state away from the error
/// escalates as a write; a root named in or around what does not parse (the
/// statement holding the error, a comment, a string) escalates as a parse
/// error; reads away from the error register, and so does a file naming none.
#[test]
fn a_file_that_does_not_parse_is_read_only_away_from_its_error() {
    let region = RegionSpec { name: "h".into(), kind: RegionKind::Function("h".into()), optional: false, file: None };
    // A TypeScript statement that does not parse (an annotation the grammar cannot read is erased instead: ts.rs).
    let bad_type = "export function g() {\n  return 1 +;\n}\n";
    for (lang, main, write_away, near_error, read_away, quiet) in [
        (
            Lang::TypeScript,
            ("m.ts", "import { sink } from \"lib\";\nexport function h(x: string) {\n  sink(x);\n}\n"),
            format!("{bad_type}export function f() {{\n  process.env.X = \"1\";\n}}\n"),
            "export function g() {\n  return process.env +;\n}\n".to_owned(),
            format!("{bad_type}// process-wide: read only\nexport function f() {{\n  return process.env.X ?? process.cwd();\n}}\n"),
            bad_type.to_owned(),
        ),
        (
            Lang::Python,
            ("m.py", "from lib import sink\n\n\ndef h(x):\n    sink(x)\n"),
            "import os\n\ndef g(:\n    return 1\n\n\ndef f():\n    os.environ['X'] = '1'\n".to_owned(),
            "import os\n\ndef g(os.environ:\n    return 1\n".to_owned(),
            "import os\n\ndef g(:\n    return 1\n\n\ndef f():\n    return os.environ.get('X')\n".to_owned(),
            "def g(:\n    return 1\n".to_owned(),
        ),
    ] {
        let ext = if lang == Lang::Python { "py" } else { "ts" };
        let with = |text: &str| {
            let files = [
                SourceFile { path: main.0.into(), bytes: main.1.as_bytes().to_vec() },
                SourceFile { path: format!("util.{ext}"), bytes: text.as_bytes().to_vec() },
            ];
            analyze(frontend(lang), &files, std::slice::from_ref(&region), &[])
        };
        let e = with(&write_away).expect_err("a write away from the error");
        assert_eq!(e.code, EscalationCode::ShapeMismatch, "{lang}: {e:?}");
        assert!(e.detail.contains("writes process-wide state"), "{lang}: {e:?}");
        let e = with(&near_error).expect_err("a root in what does not parse");
        assert_eq!(e.code, EscalationCode::ParseError, "{lang}: {e:?}");
        assert!(e.detail.contains("does not parse"), "{lang}: {e:?}");
        assert!(with(&read_away).is_ok(), "{lang}: reads away from the error register");
        assert!(with(&quiet).is_ok(), "{lang}: a file naming none of it is left out");
    }
}
