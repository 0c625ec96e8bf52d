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
    use crate::spec::FactKind;

    #[test]
    fn every_kind_has_a_row_and_every_row_a_kind() {
        let kinds: Vec<&str> = KINDS.iter().map(|(k, _)| *k).collect();
        let emits: Vec<&str> = FactKind::EMITS.iter().map(|(k, _)| *k).collect();
        assert_eq!(kinds, emits);
        for (key, _) in KEYS.iter().chain(NEEDS) {
            assert!(kinds.contains(&key.split('.').next().unwrap_or_default()), "{key}");
        }
    }

    #[test]
    fn the_readme_prints_the_table() {
        let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../profiles/README.md")).expect("profiles/README.md");
        assert!(readme.contains(&markdown()), "profiles/README.md must hold this table:\n{}", markdown());
    }
}
