//! The npm manifest, read as data: which file a package's runtime starts from.
//!
//! A glob selects files; Node runs what `package.json` names. The closure a
//! JavaScript profile analyses therefore starts at the manifest's entry
//! points (`main`, `module`, `bin`, every string of `exports`): each must be
//! one and the same file the profile selects, or — in a git tag without a
//! build — the TypeScript source a reviewed `built` mapping names, and then
//! `tsconfig.json` must not remap modules or write elsewhere. Anything fcd
//! cannot interpret escalates. The frontend then follows the imports of that
//! one file (`Env::entries` of `fcd_frontends::analyze_with`).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use fcd_frontends::loader::escalate;
use fcd_frontends::{Escalation, SourceFile, normalize_path as normalize};

use crate::profile::EntrySpec;

/// The manifest fields Node (and bundlers) start loading from.
const ENTRY_FIELDS: &[&str] = &["main", "module", "bin", "exports"];

/// The entry file of the release (as a one-element list), from the manifest
/// among `files`; `sources` says which files are source the frontend parses.
pub fn entry_files(entry: &EntrySpec, files: &[SourceFile], sources: impl Fn(&str) -> bool) -> Result<Vec<String>, Escalation> {
    let known: BTreeSet<&str> = files.iter().map(|f| f.path.as_str()).filter(|p| sources(p)).collect();
    let manifests: BTreeMap<&str, &[u8]> = files.iter().filter(|f| !sources(&f.path)).map(|f| (f.path.as_str(), f.bytes.as_slice())).collect();
    entries(entry, &manifests, &known)
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
    let config: Value = serde_json::from_slice(bytes)
        .map_err(|e| escalate(&file, e.line() as u32, format!("not plain JSON, so fcd cannot read how the build maps modules: {e}")))?;
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
