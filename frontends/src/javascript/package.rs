//! What the runtime loads: an npm package's entry points and the files they import.
//!
//! A glob selects files; Node runs what `package.json` names. So the closure
//! a JavaScript profile analyses starts at the manifest's entry points
//! (`main`, `module`, `bin`, every string of `exports`), each of which must
//! be a file fcd reads (or, in a git tag without a build, the TypeScript
//! source a reviewed `built` mapping names), and follows every static
//! relative `import`, `export … from`, `import("…")` and `require("…")`.
//! A loader fcd cannot interpret — a computed specifier, a `require` used as
//! a value, a `#` import map, an entry outside the files, a `tsconfig.json`
//! that remaps modules — escalates instead of being guessed.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::ir::{Anchor, Escalation, EscalationCode};
use crate::spec::EntrySpec;
use crate::ts::{Node, Syntax};

use super::string_content;

/// The manifest fields Node (and bundlers) start loading from.
const ENTRY_FIELDS: &[&str] = &["main", "module", "bin", "exports"];

fn escalate(file: &str, line: u32, detail: String) -> Escalation {
    Escalation::new(EscalationCode::ShapeMismatch, detail, Some(Anchor::at_line(file, line)))
}

/// The paths of `trees` that the package loads, starting at its entry points.
///
/// A file that did not parse (`opaque`: tree-sitter's grammar lags the
/// language) is still loaded; its specifiers are read lexically, and any
/// loader call in it that is not `import("…")`/`require("…")` with a literal escalates.
pub fn loaded(entry: &EntrySpec, manifests: &BTreeMap<&str, &[u8]>, trees: &[(&str, &Syntax)], opaque: &[(&str, &str)]) -> Result<BTreeSet<String>, Escalation> {
    let known: BTreeSet<&str> = trees.iter().map(|(p, _)| *p).chain(opaque.iter().map(|(p, _)| *p)).collect();
    let mut todo: Vec<String> = entries(entry, manifests, &known)?;
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
                    return Err(escalate(&path, line, format!("imports `{spec}`, which is not a file fcd reads: the code that runs would not be the code analysed")));
                }
            }
        }
    }
    Ok(seen)
}

/// Every entry point of the manifest, as a path fcd reads.
fn entries(entry: &EntrySpec, manifests: &BTreeMap<&str, &[u8]>, known: &BTreeSet<&str>) -> Result<Vec<String>, Escalation> {
    let file = entry.manifest.as_str();
    let Some(bytes) = manifests.get(file) else {
        return Err(escalate(file, 1, "the npm manifest is missing".into()));
    };
    let manifest: Value = serde_json::from_slice(bytes).map_err(|e| escalate(file, e.line() as u32, format!("the npm manifest is not JSON: {e}")))?;
    let Some(object) = manifest.as_object() else { return Err(escalate(file, 1, "the npm manifest is not a JSON object".into())) };
    let dir = file.rsplit_once('/').map(|(d, _)| format!("{d}/")).unwrap_or_default();
    let mut leaves = Vec::new();
    for field in ENTRY_FIELDS {
        if let Some(v) = object.get(*field) {
            strings(v, field, &mut leaves).map_err(|d| escalate(file, 1, d))?;
        }
    }
    if !object.keys().any(|k| ENTRY_FIELDS.contains(&k.as_str())) {
        leaves.push(("main (default)".to_owned(), "index.js".to_owned()));
    }
    let mut out = Vec::new();
    let mut built_used = false;
    for (field, leaf) in leaves {
        // A data file or a type declaration runs no code.
        if [".json", ".d.ts", ".d.mts", ".d.cts"].iter().any(|s| leaf.ends_with(s)) {
            continue;
        }
        let Some(path) = normalize(&format!("{dir}{}", leaf.trim_start_matches("./"))) else {
            return Err(escalate(file, 1, format!("entry point `{leaf}` ({field}) leaves the package")));
        };
        if leaf.contains('*') {
            return Err(escalate(file, 1, format!("entry point `{leaf}` ({field}) is a pattern fcd does not expand")));
        }
        if known.contains(path.as_str()) {
            out.push(path);
        } else if let Some((_, source)) = entry.built.iter().find(|(b, _)| *b == path).filter(|(_, s)| known.contains(s.as_str())) {
            built_used = true;
            out.push(source.clone());
        } else {
            return Err(escalate(file, 1, format!("entry point `{leaf}` ({field}) is not a file fcd reads, nor a reviewed build of one")));
        }
    }
    if built_used {
        tsconfig(entry, manifests, &dir)?;
    }
    // Two entry files are two programs: the one a host starts may not be the one analysed.
    out.sort();
    out.dedup();
    if out.len() > 1 {
        return Err(escalate(file, 1, format!("the entry points name {} different files ({}); fcd follows one program", out.len(), out.join(", "))));
    }
    Ok(out)
}

/// Every string leaf of an entry field with the key path that leads to it.
fn strings(v: &Value, at: &str, out: &mut Vec<(String, String)>) -> Result<(), String> {
    match v {
        Value::String(s) => out.push((at.to_owned(), s.clone())),
        Value::Object(m) => {
            for (k, x) in m {
                strings(x, &format!("{at}.{k}"), out)?;
            }
        }
        Value::Array(a) => {
            for x in a {
                strings(x, at, out)?;
            }
        }
        Value::Null => {}
        other => return Err(format!("`{at}` is `{other}`, not an entry path")),
    }
    Ok(())
}

/// A TypeScript build stands for its source only when `tsconfig.json` does not
/// remap modules and writes where the reviewed mapping says.
fn tsconfig(entry: &EntrySpec, manifests: &BTreeMap<&str, &[u8]>, dir: &str) -> Result<(), Escalation> {
    let file = format!("{dir}tsconfig.json");
    let Some(bytes) = manifests.get(file.as_str()) else { return Ok(()) };
    let config: Value =
        serde_json::from_slice(bytes).map_err(|e| escalate(&file, e.line() as u32, format!("not plain JSON, so fcd cannot read how the build maps modules: {e}")))?;
    if config.get("extends").is_some() {
        return Err(escalate(&file, 1, "`extends` another configuration fcd does not read".into()));
    }
    let options = config.get("compilerOptions").cloned().unwrap_or(Value::Null);
    for key in ["paths", "baseUrl", "rootDirs"] {
        if options.get(key).is_some() {
            return Err(escalate(&file, 1, format!("compilerOptions.{key} remaps module specifiers, which fcd does not follow")));
        }
    }
    let out_dir = options.get("outDir").and_then(Value::as_str).map(|d| d.trim_start_matches("./").trim_end_matches('/').to_owned());
    if let Some(out) = out_dir {
        for (built, _) in &entry.built {
            let built_dir = built.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
            if normalize(&format!("{dir}{out}")).as_deref() != Some(built_dir) {
                return Err(escalate(&file, 1, format!("compilerOptions.outDir `{out}` is not where the reviewed build `{built}` is written")));
            }
        }
    }
    Ok(())
}

/// `a/./b/../c` as `a/c`; `None` when it climbs out of the root.
fn normalize(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

/// The file a relative specifier names: as written, with an extension, as a
/// directory index, or (TypeScript source) `.js` written for a `.ts` file.
fn resolve(from: &str, spec: &str, known: &BTreeSet<&str>) -> Option<String> {
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
                let source = n.field_child("source").or_else(|| {
                    n.named_children().find(|c| c.kind() == "import_require_clause").and_then(|c| c.field_child("source"))
                });
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
