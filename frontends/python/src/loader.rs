//! Python's loading rules, as the import system and installers apply them.
//!
//! - The whole top-level package of each selected module is loaded with it
//!   (`__init__.py` runs first and can patch anything), so every `.py` file of
//!   the package is analysed.
//! - A module `D/name.py` is shadowed by a package directory `D/name/` and by
//!   a compiled extension `D/name*.so` / `.pyd`: either escalates.
//! - `*.pth` files and `sitecustomize` / `usercustomize` modules run at
//!   interpreter start: any of them in the release escalates.
//! - What an installer places and runs is decided by the packaging files
//!   (`pyproject.toml`, `setup.cfg`, `PKG-INFO`), which are digested; an entry
//!   point outside the package, a build backend we do not know, a wheel layout
//!   that remaps files, or an executable `setup.py` escalates.
//!
//! The compiler calls [`load`] before any file is parsed (its
//! `languages::load`), with what the profile and the compiler contribute as
//! plain data: the profile's `source.exclude` and a reader of TOML, which no
//! frontend parses itself.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use fcd_frontends::loader::{Listing, Loaded, escalate, join, parent, read};
use fcd_frontends::{Escalation, EscalationCode, SourceFile};
use fcd_model::effect::Anchor;
use fcd_model::error::InputError;

const BACKENDS: &[&str] = &["hatchling.build", "setuptools.build_meta", "flit_core.buildapi", "poetry.core.masonry.api", "pdm.backend", "uv_build"];
const MANIFESTS: &[&str] = &["pyproject.toml", "setup.cfg", "PKG-INFO"];

/// Reads a TOML document (`pyproject.toml`) as a data tree, or says why it is
/// not TOML. The compiler, which reads the profiles' TOML, passes its reader
/// in: no frontend parses TOML itself.
pub type ReadToml = fn(&str) -> Result<Value, String>;

/// The package around the `selected` files and the packaging files that
/// install it, from the release at `root`; `excluded` says which files the
/// profile leaves out of the closure (`source.exclude`).
pub fn load(root: &Path, selected: &[SourceFile], excluded: &dyn Fn(&str) -> bool, toml: ReadToml) -> Result<Result<Loaded, Escalation>, InputError> {
    let listing = Listing::of(root)?;
    // A symbolic link counts as a file here: a link named like a module shadows it too.
    let files: BTreeSet<String> = listing.files.union(&listing.links).cloned().collect();
    let dirs = listing.dirs;
    if let Some(hook) = files.iter().find(|f| {
        let name = f.rsplit('/').next().unwrap_or(f);
        name.ends_with(".pth") || name == "sitecustomize.py" || name == "usercustomize.py"
    }) {
        return Ok(Err(escalate(hook, 1, format!("`{hook}` runs when the interpreter starts, before any module fcd reads"))));
    }
    let chosen: BTreeSet<&str> = selected.iter().map(|f| f.path.as_str()).collect();
    let mut packages = BTreeSet::new();
    for file in selected.iter().filter(|f| f.path.ends_with(".py")) {
        if let Some(e) = shadowed(&file.path, &files, &dirs) {
            return Ok(Err(e));
        }
        packages.insert(top_package(&file.path, &files));
    }
    let mut loaded = Loaded::default();
    for f in &files {
        let in_package = packages.iter().any(|p| !p.is_empty() && f.starts_with(&format!("{p}/")));
        if in_package && f.ends_with(".py") && !chosen.contains(f.as_str()) && !excluded(f) {
            match read(root, f)? {
                Ok(file) => loaded.sources.push(file),
                Err(e) => return Ok(Err(e)),
            }
        }
    }
    for package in &packages {
        match manifests(root, package, &files, toml)? {
            Ok(found) => loaded.manifests.extend(found),
            Err(e) => return Ok(Err(e)),
        }
    }
    loaded.manifests.sort_by(|a, b| a.path.cmp(&b.path));
    loaded.manifests.dedup_by(|a, b| a.path == b.path);
    Ok(Ok(loaded))
}

/// `D/name.py` is not what `import D.name` loads when a package directory or
/// a compiled extension of the same name sits beside it.
fn shadowed(module: &str, files: &BTreeSet<String>, dirs: &BTreeSet<String>) -> Option<Escalation> {
    let dir = parent(module);
    let stem = module.rsplit('/').next().unwrap_or(module).trim_end_matches(".py");
    let package = join(dir, stem);
    if dirs.contains(&package) {
        return Some(escalate(module, 1, format!("the directory `{package}/` beside `{module}` is what `import` loads, not the module")));
    }
    let prefix = format!("{package}.");
    let extension = files.iter().find(|f| parent(f) == dir && f.starts_with(&prefix) && (f.ends_with(".so") || f.ends_with(".pyd")));
    extension.map(|ext| escalate(ext, 1, format!("the compiled extension `{ext}` is loaded instead of `{module}`")))
}

/// The directory of the outermost package holding `module` (the highest
/// directory that still has an `__init__.py`), or the module's own directory.
fn top_package(module: &str, files: &BTreeSet<String>) -> String {
    let mut top = parent(module).to_owned();
    let mut dir = top.clone();
    while !dir.is_empty() && files.contains(&join(&dir, "__init__.py")) {
        top = dir.clone();
        dir = parent(&dir).to_owned();
    }
    top
}

/// The packaging files from the package's parent up to the release root.
fn manifests(root: &Path, package: &str, files: &BTreeSet<String>, toml: ReadToml) -> Result<Result<Vec<SourceFile>, Escalation>, InputError> {
    let name = package.rsplit('/').next().unwrap_or(package).to_owned();
    let mut found = Vec::new();
    let mut dir = parent(package).to_owned();
    loop {
        let setup = join(&dir, "setup.py");
        if files.contains(&setup) {
            return Ok(Err(escalate(&setup, 1, format!("`{setup}` is code that decides what is installed; fcd does not run it"))));
        }
        for m in MANIFESTS {
            let path = join(&dir, m);
            if files.contains(&path) {
                let file = match read(root, &path)? {
                    Ok(file) => file,
                    Err(e) => return Ok(Err(e)),
                };
                if *m == "pyproject.toml"
                    && let Err(e) = pyproject(&file, &name, toml)
                {
                    return Ok(Err(e));
                }
                found.push(file);
            }
        }
        if dir.is_empty() {
            break;
        }
        dir = parent(&dir).to_owned();
    }
    Ok(Ok(found))
}

/// Checks what `pyproject.toml` tells an installer about the package `name`.
fn pyproject(file: &SourceFile, name: &str, toml: ReadToml) -> Result<(), Escalation> {
    let text = String::from_utf8_lossy(&file.bytes);
    let doc = toml(&text).map_err(|message| {
        Escalation::new(EscalationCode::ParseError, format!("`{}` is not TOML: {message}", file.path), Some(Anchor::at_line(&file.path, 1)))
    })?;
    let path = file.path.as_str();
    let get = |keys: &[&str]| keys.iter().try_fold(&doc, |v, k| v.get(k)).cloned();
    if let Some(backend) = get(&["build-system", "build-backend"]) {
        let backend = backend.as_str().unwrap_or_default().to_owned();
        if !BACKENDS.contains(&backend.as_str()) {
            return Err(escalate(path, 1, format!("build backend `{backend}` is not one fcd knows the file layout of")));
        }
    }
    let mut entries: Vec<(String, String)> = Vec::new();
    for group in ["scripts", "gui-scripts"] {
        if let Some(t) = get(&["project", group]).and_then(|v| v.as_object().cloned()) {
            entries.extend(t.iter().map(|(k, v)| (format!("project.{group}.{k}"), v.as_str().unwrap_or_default().to_owned())));
        }
    }
    if let Some(groups) = get(&["project", "entry-points"]).and_then(|v| v.as_object().cloned()) {
        for (g, t) in &groups {
            for (k, v) in t.as_object().into_iter().flatten() {
                entries.push((format!("project.entry-points.{g}.{k}"), v.as_str().unwrap_or_default().to_owned()));
            }
        }
    }
    for (key, target) in entries {
        let module = target.split(':').next().unwrap_or_default().trim();
        if module.split('.').next() != Some(name) {
            return Err(escalate(path, 1, format!("entry point `{key}` runs `{target}`, outside the package `{name}` fcd analyses")));
        }
    }
    // Wheel layouts that add, drop or move files change what is installed.
    let remaps = ["sources", "force-include", "only-include", "include", "exclude", "artifacts", "dev-mode-dirs"];
    for table in [vec!["tool", "hatch", "build"], vec!["tool", "hatch", "build", "targets", "wheel"], vec!["tool", "hatch", "build", "targets", "sdist"]] {
        if let Some(t) = get(&table).and_then(|v| v.as_object().cloned())
            && let Some(key) = remaps.iter().find(|k| t.contains_key(**k))
        {
            return Err(escalate(path, 1, format!("`{}.{key}` changes which files are installed", table.join("."))));
        }
    }
    if let Some(packages) = get(&["tool", "hatch", "build", "targets", "wheel", "packages"]).and_then(|v| v.as_array().cloned()) {
        let ours = packages.iter().all(|p| p.as_str().is_some_and(|p| p.trim_end_matches('/').rsplit('/').next() == Some(name)));
        if !ours {
            return Err(escalate(path, 1, format!("the wheel's packages are not only `{name}`")));
        }
    }
    for key in ["package-dir", "py-modules", "packages"] {
        if get(&["tool", "setuptools", key]).is_some() {
            return Err(escalate(path, 1, format!("`tool.setuptools.{key}` changes which files are installed")));
        }
    }
    if get(&["tool", "poetry", "packages"]).is_some() {
        return Err(escalate(path, 1, "`tool.poetry.packages` changes which files are installed".into()));
    }
    Ok(())
}
