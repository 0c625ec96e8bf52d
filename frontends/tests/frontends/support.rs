//! The table of which language reads which fact kind (`fcd_frontends::support`)
//! against the frontends themselves: a kind listed for a language is never
//! refused as unsupported there, and one not listed always is.

use fcd_compiler::languages::frontend;
use fcd_frontends::support::KINDS;
use fcd_frontends::{FactKind, FactSpec, Lang, RegionKind, RegionSpec, SourceFile, analyze};

/// One minimal fact of each kind (its references left dangling: a
/// frontend that reads the kind waits for them, one that does not refuses it).
fn fact(kind: &str) -> FactKind {
    let s = |t: &str| t.to_owned();
    match kind {
        "call" => FactKind::Call { callee: s("nothing"), args: None, keywords: None, matching: false },
        "guard" => FactKind::Guard {
            callee: s("nothing"),
            receiver: None,
            args: vec![],
            before: s("absent"),
            negated: false,
            returns: None,
            conjuncts: vec![],
            equals: None,
        },
        "default" => FactKind::Default { argument: s("a"), helpers: vec![], definition: None, inert: None },
        "field" => FactKind::Field { sink: Some(s("absent")), arg: Some(0), field: s("F"), wrap: None, from: s("absent") },
        "option" => FactKind::Option { property: s("P"), attribute: s("Option"), ty: s("bool?"), argument: s("p"), inert: vec![] },
        "pass" => FactKind::Pass { sink: s("absent"), from: s("absent") },
        "map" => FactKind::Map { from: s("absent") },
        "key" => FactKind::Key { key: s("k") },
        "flow" => FactKind::Flow { from: s("absent"), sink: s("absent"), into: None },
        "table" => FactKind::Table { row: s("r"), member: s("m") },
        "exit" => FactKind::Exit { returns: s("false"), conditions: vec![] },
        "body" => FactKind::Body { digests: vec![] },
        "hook" => FactKind::Hook { before: s("absent"), attribute: s("a"), installs: std::collections::BTreeMap::new() },
        other => panic!("no sample for kind `{other}`"),
    }
}

fn source(lang: Lang) -> (&'static str, &'static str) {
    match lang {
        Lang::Python => ("m.py", "def f():\n    pass\n"),
        Lang::Go => ("m.go", "package m\n\nfunc f() {\n}\n"),
        Lang::CSharp => ("M.cs", "class M\n{\n    void f()\n    {\n    }\n}\n"),
        Lang::JavaScript => ("m.js", "function f() {\n}\n"),
        Lang::TypeScript => ("m.ts", "function f(): void {\n}\n"),
    }
}

/// The frontends agree with the table: a kind listed for a language is
/// never refused as unsupported there, and one not listed always is.
#[test]
fn the_frontends_read_what_the_table_says() {
    for lang in Lang::ALL {
        let (path, text) = source(lang);
        let files = [SourceFile { path: path.to_owned(), bytes: text.as_bytes().to_vec() }];
        let regions = [RegionSpec { name: "r".into(), kind: RegionKind::Function("f".into()), optional: false, file: None }];
        for (kind, langs) in KINDS {
            if *kind == "body" {
                continue; // read by the language-neutral driver, never by a frontend
            }
            let facts = [FactSpec { name: "x".into(), region: "r".into(), kind: fact(kind) }];
            let refused = match analyze(frontend(lang), &files, &regions, &facts) {
                Ok(_) => false,
                Err(e) => e.detail.contains("frontend does not extract"),
            };
            assert_eq!(!refused, langs.contains(&lang), "{lang} {kind}");
        }
    }
}
