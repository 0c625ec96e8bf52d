//! What the runtime loads: the files an npm package's entry imports.
//!
//! A glob selects files; Node runs what `package.json` names. Before any file
//! is parsed, the manifest is read as data and names the entry file
//! ([`manifest`]); from it this module follows every static relative
//! `import`, `export … from`, `import("…")` and `require("…")` once the files
//! are parsed. A loader fcd cannot interpret — a computed specifier, a
//! `require` used as a value, a `#` import map, an import of a file the
//! profile does not select — escalates instead of being guessed.

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
pub(crate) fn loaded(entries: &[String], trees: &[(&str, &Syntax)], opaque: &[(&str, &str)]) -> Result<BTreeSet<String>, Escalation> {
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
            (Some((_, syntax)), _) => imports(&path, syntax.root())?,
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
/// whose specifier is computed escalates.
fn imports(path: &str, root: Node<'_>) -> Result<Vec<(String, u32)>, Escalation> {
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
                    out.push((literal(path, s)?, n.line()));
                }
            }
            "call_expression" => {
                let Some(f) = n.field_child("function") else { continue };
                if f.kind() == "import" || (f.kind() == "identifier" && f.text() == "require") {
                    let args = n.items("arguments");
                    match args.as_slice() {
                        [one] => out.push((literal(path, *one)?, n.line())),
                        _ => return Err(escalate(path, n.line(), format!("`{}` loads a module fcd cannot name", n.compact_text()))),
                    }
                }
            }
            "identifier" if n.text() == "require" || n.text() == "createRequire" => {
                let called = n.parent().is_some_and(|p| p.kind() == "call_expression" && p.field_child("function") == Some(n));
                if !called || n.text() == "createRequire" {
                    return Err(escalate(path, n.line(), format!("`{}` is used as a value: a loader fcd cannot follow", n.text())));
                }
            }
            _ => {}
        }
    }
    Ok(out)
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
