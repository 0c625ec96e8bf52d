//! What the runtime loads: the files an npm package's entry imports.
//!
//! A glob selects files; Node runs what `package.json` names. Before any file
//! is parsed, the manifest is read as data and names the entry file
//! ([`manifest`]); from it this module follows every static relative
//! `import`, `export … from`, `import("…")` and `require("…")` once the files
//! are parsed. A loader fcd cannot interpret — a computed specifier, a
//! `require` used as a value, `createRequire` or `getBuiltinModule`, any
//! other import of `node:module`, a `#` import map, an import of a file the
//! profile does not select — escalates instead of being guessed.
//!
//! Unless a reviewer read it: a loader fcd cannot follow may sit in a
//! function defined at the top of its file that the profile pins
//! (`source.pinned-functions`) with the digest of everything it reaches,
//! loads included (`pinned::pinned_around`), and whose uses outside its
//! closure only call it. The digest binds the text the reviewer read to say
//! what it loads (a package.json read for its version, say); any change
//! escalates again, printing the new digest. A region that calls such a
//! function still escalates on the load (`closure.rs`).

mod manifest;

pub use manifest::{EntrySpec, load, read_manifests};

use std::collections::BTreeSet;

use fcd_frontends::ir::Escalation;
use fcd_frontends::loader::escalate;
use fcd_frontends::normalize_path as normalize;
use fcd_frontends::ts::{Node, Syntax};

use super::syntax::string_content;

/// The paths of `trees` that the package loads, starting at its entry points.
///
/// A file that did not parse (`opaque`: tree-sitter's grammar lags the
/// language) is still loaded; its specifiers are read lexically, and any
/// loader call in it that is not `import("…")`/`require("…")` with a literal escalates.
///
/// `reviewed` says whether a reviewer read the code a loader fcd cannot
/// follow sits in (`pinned::pinned_around`), or why not.
pub(crate) fn loaded<'a>(
    entries: &[String],
    trees: &[(&'a str, &'a Syntax)],
    opaque: &[(&str, &str)],
    reviewed: &dyn Fn(&str, Node<'a>) -> Result<(), String>,
) -> Result<BTreeSet<String>, Escalation> {
    let known: BTreeSet<&str> = trees.iter().map(|(p, _)| *p).chain(opaque.iter().map(|(p, _)| *p)).collect();
    if let Some(missing) = entries.iter().find(|e| !known.contains(e.as_str())) {
        return Err(escalate(missing, 1, format!("the entry file `{missing}` is not a source file fcd reads")));
    }
    let mut todo: Vec<String> = entries.to_vec();
    let mut seen = BTreeSet::new();
    while let Some(path) = todo.pop() {
        if !seen.insert(path.clone()) {
            continue;
        }
        let specs = match (trees.iter().find(|(p, _)| *p == path), opaque.iter().find(|(p, _)| *p == path)) {
            (Some((_, syntax)), _) => imports(&path, syntax.root(), &|at| reviewed(&path, at))?,
            (None, Some((_, text))) => lexical_imports(&path, text)?,
            (None, None) => continue,
        };
        for (spec, line) in specs {
            if !spec.starts_with("./") && !spec.starts_with("../") {
                if spec.starts_with('#') || spec.starts_with('/') || spec.contains(':') && !spec.starts_with("node:") {
                    return Err(escalate(&path, line, format!("imports `{spec}`, a specifier fcd does not resolve (import map, absolute path or URL)")));
                }
                continue; // a dependency or a Node builtin: outside the release, by assumption
            }
            match resolve(&path, &spec, &known) {
                Some(target) => todo.push(target),
                None => {
                    return Err(escalate(
                        &path,
                        line,
                        format!("imports `{spec}`, which is not a file fcd reads: the code that runs would not be the code analysed"),
                    ));
                }
            }
        }
    }
    Ok(seen)
}

/// The file a relative specifier names: as written, with an extension, as a
/// directory index, or (TypeScript source) `.js` written for a `.ts` file.
pub(super) fn resolve(from: &str, spec: &str, known: &BTreeSet<&str>) -> Option<String> {
    let dir = from.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
    let base = normalize(&format!("{dir}/{spec}"))?;
    let mut candidates = vec![base.clone()];
    for ext in [".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", "/index.js", "/index.ts"] {
        candidates.push(format!("{base}{ext}"));
    }
    for (js, ts) in [(".js", ".ts"), (".mjs", ".mts"), (".cjs", ".cts")] {
        if let Some(stem) = base.strip_suffix(js) {
            candidates.push(format!("{stem}{ts}"));
        }
    }
    candidates.into_iter().find(|c| known.contains(c.as_str()))
}

/// The static module specifiers a file loads, with their lines; a loader
/// whose specifier is computed escalates, unless `reviewed` says a reviewer
/// read the code it sits in (`Err` says why not, to add to the escalation).
fn imports<'a>(path: &str, root: Node<'a>, reviewed: &dyn Fn(Node<'a>) -> Result<(), String>) -> Result<Vec<(String, u32)>, Escalation> {
    let unfollowed = |n: Node<'a>, what: String| match reviewed(n) {
        Ok(()) => Ok(()),
        Err(why) => Err(escalate(path, n.line(), format!("{what}; {why}"))),
    };
    let mut out = Vec::new();
    for n in root.descendants() {
        match n.kind() {
            "import_statement" | "export_statement" => {
                // Type-only imports are erased by the compiler: they load nothing.
                if n.children().nth(1).is_some_and(|t| t.kind() == "type") {
                    continue;
                }
                let source =
                    n.field_child("source").or_else(|| n.named_children().find(|c| c.kind() == "import_require_clause").and_then(|c| c.field_child("source")));
                if let Some(s) = source {
                    let spec = literal(path, s)?;
                    if module_loader(&spec) && !only_create_require(n) {
                        return Err(escalate(
                            path,
                            n.line(),
                            format!("`{}` takes more of `{spec}` than `createRequire` by its own name: a loader fcd cannot follow", n.compact_text()),
                        ));
                    }
                    out.push((spec, n.line()));
                }
            }
            "call_expression" => {
                let Some(f) = n.field_child("function") else { continue };
                if f.kind() == "import" || (f.kind() == "identifier" && f.text() == "require") {
                    let args = n.items("arguments");
                    match args.as_slice() {
                        [one] if string_content(*one).is_some() => out.push((literal(path, *one)?, n.line())),
                        _ => unfollowed(n, format!("`{}` loads a module fcd cannot name", n.compact_text()))?,
                    }
                }
            }
            "identifier" if n.text() == "require" || LOADERS.contains(&n.text()) => {
                let called = n.parent().is_some_and(|p| p.kind() == "call_expression" && p.field_child("function") == Some(n));
                // `import { createRequire } from "node:module"` is checked above; its uses are not.
                let imported = n.parent().is_some_and(|p| p.kind() == "import_specifier")
                    && n.ancestors()
                        .find(|a| a.kind() == "import_statement")
                        .and_then(|i| i.field_child("source"))
                        .and_then(string_content)
                        .is_some_and(|s| module_loader(&s));
                if !imported && (!called || n.text() != "require") {
                    unfollowed(n, format!("`{}` is used as a value: a loader fcd cannot follow", n.text()))?;
                }
            }
            // `m.createRequire(…)`, `process.getBuiltinModule("module")`: the same loaders reached through an object.
            "property_identifier" if LOADERS.contains(&n.text()) => {
                unfollowed(n, format!("`{}` reaches a loader fcd cannot follow", n.parent().map_or(n.text(), |p| p.text())))?;
            }
            _ => {}
        }
    }
    Ok(out)
}

/// Names that make a loader out of nothing fcd can follow: a `require` for
/// any path (`createRequire`), any builtin module (`getBuiltinModule`).
pub(super) const LOADERS: &[&str] = &["createRequire", "getBuiltinModule"];

/// Whether a specifier names Node's module system, whose exports make
/// loaders and register loader hooks.
fn module_loader(spec: &str) -> bool {
    matches!(spec, "module" | "node:module")
}

/// Whether an import takes only `createRequire`, by its own name (no
/// default, namespace, alias, other name or re-export).
fn only_create_require(statement: Node<'_>) -> bool {
    let Some(clause) = (statement.kind() == "import_statement").then(|| statement.named_children().find(|c| c.kind() == "import_clause")).flatten() else {
        return false;
    };
    let mut named = clause.named_children();
    let (Some(list), None) = (named.next(), named.next()) else { return false };
    let specifiers: Vec<Node<'_>> = list.named_children().collect();
    list.kind() == "named_imports"
        && !specifiers.is_empty()
        && specifiers
            .iter()
            .all(|s| s.kind() == "import_specifier" && s.field_child("alias").is_none() && s.field_child("name").is_some_and(|i| i.text() == "createRequire"))
}

/// The specifiers of a file that did not parse, read from its text: every
/// `from "…"`, `import "…"`, `import("…")` and `require("…")`. A loader
/// word followed by anything but a quoted literal escalates. Comments are not
/// told apart, which can only add specifiers.
fn lexical_imports(path: &str, text: &str) -> Result<Vec<(String, u32)>, Escalation> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line_no = i as u32 + 1;
        for (word, open) in [("from", ""), ("import", ""), ("import", "("), ("require", "(")] {
            let mut rest = line;
            while let Some(at) = rest.find(word) {
                let before_ok = rest[..at].chars().next_back().is_none_or(|c| !c.is_alphanumeric() && c != '_' && c != '.' && c != '$');
                let after = rest[at + word.len()..].trim_start();
                rest = &rest[at + word.len()..];
                if !before_ok || after.starts_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$') {
                    continue;
                }
                let Some(after) = after.strip_prefix(open).map(str::trim_start) else { continue };
                match after.chars().next() {
                    Some(q @ ('"' | '\'')) => {
                        if let Some(end) = after[1..].find(q) {
                            out.push((after[1..1 + end].to_owned(), line_no));
                        }
                    }
                    _ if !open.is_empty() => {
                        return Err(escalate(path, line_no, format!("`{word}(` with a computed specifier in a file fcd cannot parse")));
                    }
                    _ => {}
                }
            }
        }
    }
    Ok(out)
}

fn literal(path: &str, n: Node<'_>) -> Result<String, Escalation> {
    string_content(n).ok_or_else(|| escalate(path, n.line(), format!("`{}` is a computed module specifier fcd cannot follow", n.compact_text())))
}

/// Whether an import specifier names a package or a Node builtin (a bare
/// specifier), not a file of the release.
pub(super) fn is_package(spec: &str) -> bool {
    !spec.starts_with("./") && !spec.starts_with("../") && !spec.starts_with('/')
}
