//! Which fact kinds, and which of their keys, each frontend reads: one table.
//!
//! The profile loader refuses a fact whose kind or key the profile's language
//! does not read (a load error, exit 2, rather than an escalation at
//! registration or a key silently ignored), and `profiles/README.md` prints
//! the same table (a test compares them), so the two cannot disagree. A test
//! of this crate runs every kind through every frontend and checks that a
//! kind the table says a language reads is never refused as unsupported, and
//! that one it does not read is.

use crate::language::Lang;
use crate::spec::RegionKind;

const ALL: &[Lang] = &Lang::ALL;
const JS: &[Lang] = &[Lang::JavaScript, Lang::TypeScript];
const PY_JS: &[Lang] = &[Lang::Python, Lang::JavaScript, Lang::TypeScript];
const GO_PY_JS: &[Lang] = &[Lang::Go, Lang::Python, Lang::JavaScript, Lang::TypeScript];
const GO_JS: &[Lang] = &[Lang::Go, Lang::JavaScript, Lang::TypeScript];
const CS: &[Lang] = &[Lang::CSharp];
const PY: &[Lang] = &[Lang::Python];
/// The languages with keyword (named) arguments.
const PY_CS: &[Lang] = &[Lang::Python, Lang::CSharp];

/// Each fact kind and the languages whose frontend extracts it.
pub const KINDS: &[(&str, &[Lang])] = &[
    ("call", ALL),
    ("guard", ALL),
    ("default", ALL),
    ("field", ALL),
    ("option", CS),
    ("pass", CS),
    ("map", CS),
    ("key", CS),
    ("flow", CS),
    ("table", JS),
    ("exit", JS),
    ("body", ALL),
    ("hook", PY),
];

/// The keys read by fewer languages than their kind (`KIND.KEY`, a guard's
/// test keys as `guard.test.KEY`), with the languages that read them. Any
/// other key of a kind is read wherever the kind is.
pub const KEYS: &[(&str, &[Lang])] =
    &[("call.keywords", PY_CS), ("guard.conjuncts", JS), ("default.definition", CS), ("default.inert", CS), ("field.sink", GO_PY_JS), ("field.arg", GO_PY_JS)];

/// The keys a language needs beyond the kind's own required keys (`KIND.KEY`).
pub const NEEDS: &[(&str, &[Lang])] = &[("field.sink", GO_PY_JS), ("field.arg", GO_JS)];

/// The languages whose frontends match splat argument patterns (`*param:files`).
pub fn splat_languages() -> &'static [Lang] {
    PY_JS
}

/// The languages whose frontends find `callback` and `case` regions.
pub fn dispatch_languages() -> &'static [Lang] {
    JS
}

/// The region kinds only some frontends find, as a profile spells them
/// (`regions.R.KEY`), how a message names them, and the languages that do.
pub fn region_kind_languages(kind: &RegionKind) -> Option<(&'static str, &'static str, &'static [Lang])> {
    match kind {
        RegionKind::Callback(_) => Some(("callback", "registered callbacks", JS)),
        RegionKind::Case(_) => Some(("case", "dispatcher cases", JS)),
        RegionKind::Variable(_) => Some(("variable", "module-level variables", PY_JS)),
        RegionKind::Function(_) | RegionKind::Literal(_) | RegionKind::Route(_) => None,
    }
}

/// The languages that extract facts of `kind`; empty for no kind.
pub fn kind_languages(kind: &str) -> &'static [Lang] {
    KINDS.iter().find(|(k, _)| *k == kind).map_or(&[], |(_, langs)| *langs)
}

/// Whether `lang` reads the key `key` (`KIND.KEY`) of a kind it extracts.
pub fn reads_key(lang: Lang, key: &str) -> bool {
    KEYS.iter().find(|(k, _)| *k == key).is_none_or(|(_, langs)| langs.contains(&lang))
}

/// Whether `lang` needs the key `key` (`KIND.KEY`).
pub fn needs_key(lang: Lang, key: &str) -> bool {
    NEEDS.iter().any(|(k, langs)| *k == key && langs.contains(&lang))
}

/// The table as `profiles/README.md` prints it: one row per kind, one column
/// per language, each cell `yes`, `no` or the keys that language does not read.
pub fn markdown() -> String {
    let langs = [Lang::Python, Lang::Go, Lang::CSharp, Lang::JavaScript];
    let mut out = String::from("| kind |");
    for l in langs {
        out.push_str(&format!(" {} |", if l == Lang::JavaScript { "javascript, typescript" } else { l.name() }));
    }
    out.push_str("\n|---|");
    out.push_str(&"---|".repeat(langs.len()));
    out.push('\n');
    for (kind, kind_langs) in KINDS {
        out.push_str(&format!("| `{kind}` |"));
        for l in langs {
            let cell = if !kind_langs.contains(&l) {
                "no".to_owned()
            } else {
                let prefix = format!("{kind}.");
                let unread: Vec<String> =
                    KEYS.iter().filter(|(k, ls)| k.starts_with(&prefix) && !ls.contains(&l)).map(|(k, _)| format!("`{}`", &k[prefix.len()..])).collect();
                let needed: Vec<String> =
                    NEEDS.iter().filter(|(k, ls)| k.starts_with(&prefix) && ls.contains(&l)).map(|(k, _)| format!("`{}`", &k[prefix.len()..])).collect();
                let mut cell = "yes".to_owned();
                if !unread.is_empty() {
                    cell.push_str(&format!(", without {}", unread.join(", ")));
                }
                if !needed.is_empty() {
                    cell.push_str(&format!(", needs {}", needed.join(", ")));
                }
                cell
            };
            out.push_str(&format!(" {cell} |"));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{FactKind, FactSpec, RegionKind, RegionSpec};
    use crate::{SourceFile, analyze};

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

    #[test]
    fn every_kind_has_a_row_and_every_row_a_kind() {
        let kinds: Vec<&str> = KINDS.iter().map(|(k, _)| *k).collect();
        let emits: Vec<&str> = FactKind::EMITS.iter().map(|(k, _)| *k).collect();
        assert_eq!(kinds, emits);
        for (key, _) in KEYS.iter().chain(NEEDS) {
            assert!(kinds.contains(&key.split('.').next().unwrap_or_default()), "{key}");
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
                let refused = match analyze(lang, &files, &regions, &facts) {
                    Ok(_) => false,
                    Err(e) => e.detail.contains("frontend does not extract"),
                };
                assert_eq!(!refused, langs.contains(&lang), "{lang} {kind}");
            }
        }
    }

    #[test]
    fn the_readme_prints_the_table() {
        let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../profiles/README.md")).expect("profiles/README.md");
        assert!(readme.contains(&markdown()), "profiles/README.md must hold this table:\n{}", markdown());
    }
}
