//! The npm manifest, read as data: which file a package's runtime starts from.
//!
//! A glob selects files; Node runs what `package.json` names. The closure a
//! JavaScript profile analyses therefore starts at the manifest's entry
//! points (`main`, `module`, `bin`, every string of `exports`): each must be
//! one and the same file the profile selects, or — in a git tag without a
//! build — the TypeScript source a reviewed `built` mapping names, and then
//! `tsconfig.json` must not remap modules or write elsewhere. Anything fcd
//! cannot interpret escalates. The manifest (and the `tsconfig.json` beside
//! it) join the selected files ([`read_manifests`]), the entry file is found
//! before any file is parsed ([`load`]), and the frontend then follows the
//! imports of that one file (`Env::entries`, `super::loaded`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::Value;

use fcd_frontends::loader::{Loaded, escalate};
use fcd_frontends::ts::MAX_FILE_BYTES;
use fcd_frontends::{Escalation, EscalationCode, Lang, SourceFile, normalize_path as normalize};
use fcd_model::effect::Anchor;
use fcd_model::error::InputError;

/// Where the runtime starts loading a package: the npm manifest whose entry
/// points (`main`, `module`, `bin`, `exports`) must name one file fcd reads,
/// from which every static relative import is followed. A profile's
/// `source.package` and `source.built` (the compiler builds it).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EntrySpec {
    /// The manifest's path in the release root (`package.json`).
    pub manifest: String,
    /// Reviewed build mappings: a built entry (`dist/index.js`) that, when
    /// absent from the release (a git tag), stands for its TypeScript source.
    pub built: Vec<(String, String)>,
}

/// The manifest fields Node (and bundlers) start loading from.
const ENTRY_FIELDS: &[&str] = &["main", "module", "bin", "exports"];

/// Adds the manifest `entry` names, and the `tsconfig.json` beside it when
/// there is one, to the `files` a profile's globs selected from the release
/// at `root`: they are part of the closure, digested and read as data. A
/// manifest that is not a regular file of the release escalates.
pub fn read_manifests(root: &Path, entry: &EntrySpec, files: &mut Vec<SourceFile>) -> Result<Result<(), Escalation>, InputError> {
    let mut manifests = vec![entry.manifest.clone()];
    let dir = entry.manifest.rsplit_once('/').map(|(d, _)| format!("{d}/")).unwrap_or_default();
    manifests.push(format!("{dir}tsconfig.json"));
    for (i, path) in manifests.iter().enumerate() {
        let full = root.join(path);
        // Never through a link: the manifest is part of the release, as every file is.
        let meta = std::fs::symlink_metadata(&full);
        match meta {
            Ok(m) if m.is_file() && m.len() <= MAX_FILE_BYTES as u64 => {
                if files.iter().any(|f| &f.path == path) {
                    continue;
                }
                let bytes = std::fs::read(&full).map_err(|e| InputError::new(&full, format!("cannot read: {e}")))?;
                files.push(SourceFile { path: path.clone(), bytes });
            }
            Err(_) if i > 0 => {}
            _ => {
                return Ok(Err(Escalation::new(
                    EscalationCode::RegionMissing,
                    format!("`{path}`, the npm manifest whose entry points the closure starts from, is not a regular file of the release"),
                    Some(Anchor::at_line(path, 1)),
                )));
            }
        }
    }
    Ok(Ok(()))
}

/// The entry file the runtime starts from (`Loaded::entries`), from the
/// manifest among the `selected` files, when the profile names one; the
/// language `lang` says which files are source the frontend parses.
pub fn load(entry: Option<&EntrySpec>, selected: &[SourceFile], lang: Lang) -> Result<Loaded, Escalation> {
    let entries = entry.map(|e| entry_files(e, selected, |p| lang.parses(p))).transpose()?;
    Ok(Loaded { entries, ..Loaded::default() })
}

/// The entry file of the release (as a one-element list), from the manifest
/// among `files`; `sources` says which files are source the frontend parses.
fn entry_files(entry: &EntrySpec, files: &[SourceFile], sources: impl Fn(&str) -> bool) -> Result<Vec<String>, Escalation> {
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
