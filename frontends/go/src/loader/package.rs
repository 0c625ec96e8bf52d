//! What `go build` compiles for a Go region, beyond the files a profile's globs name.
//!
//! A glob is not a loader: `go build` compiles every non-test `.go` file of a
//! package directory, reads the module's `go.mod` (its `replace` directives can
//! swap a reviewed library for another module) and prefers a `vendor/`
//! directory or a `go.work` workspace when one exists. So the closure of a Go
//! profile is completed here, before any file is parsed: every package
//! directory holding a selected file contributes all of its `.go` files (test
//! files aside, which `go build` never compiles), and the nearest `go.mod`
//! above it. Constructs this module cannot interpret soundly escalate
//! (`shape_mismatch`) instead of being read: a linked `.go` file, non-Go
//! sources compiled into the package, a missing `go.mod`, a `go.work`, a
//! vendor directory. What go.mod and the Go files say (replacements, build
//! constraints) is judged once they are parsed (`super`), go.mod being one
//! more file of the closure.
//!
//! Beyond what the selected packages import, every other package of the
//! module is read too, as a library ([`whole_module`]): any of them is
//! linked into the binary from its `main`, so it may implement an interface
//! a region calls through or write a package variable a pinned closure
//! reads. Those questions are asked of every package (the frontend's
//! `dispatch.rs` and `variables.rs`), and a package that cannot be read
//! whole is recorded as unread, so that they escalate instead of being
//! answered from part of the module.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use fcd_frontends::loader::{Loaded, escalate, join, parent, read};
use fcd_frontends::{Escalation, SourceFile};
use fcd_model::error::InputError;

/// Extensions `go build` compiles into a package besides `.go` (assembly, cgo, objects).
const OTHER_SOURCES: &[&str] =
    &[".s", ".S", ".sx", ".syso", ".c", ".cc", ".cpp", ".cxx", ".m", ".h", ".hh", ".hpp", ".hxx", ".f", ".F", ".for", ".f90", ".swig", ".swigcxx"];

/// The rest of every selected Go package and its go.mod, from the release at
/// `root`; then, as libraries, the module's other packages they import.
pub fn load(root: &Path, selected: &[SourceFile]) -> Result<Result<Loaded, Escalation>, InputError> {
    let mut files = selected.to_vec();
    if let Err(e) = complete(root, &mut files)? {
        return Ok(Err(e));
    }
    let (libraries, packages, unread) = match libraries(root, &files)? {
        Ok(found) => found,
        Err(e) => return Ok(Err(e)),
    };
    let sources = files.into_iter().filter(|f| !selected.iter().any(|s| s.path == f.path)).collect();
    Ok(Ok(Loaded { sources, libraries, packages, unread, ..Loaded::default() }))
}

/// The library files, the release's packages by import path with their
/// directory, and the package directories that could not be read whole, with why.
type Libraries = (Vec<SourceFile>, BTreeMap<String, String>, BTreeMap<String, String>);

/// The module's own packages that the loaded ones import, transitively, as
/// `go build` compiles them, then every other package of the module
/// ([`whole_module`]): read only as the code a region may reach (the
/// closed call path, `pinned.rs`) or that the whole module is asked about,
/// never searched for regions. Each module is named by `MODULE/...` (Go's
/// pattern for every package under it) with its root directory, each
/// package found by its import path with its directory. A package this
/// loader cannot read whole (a link, a non-Go source, a file too large, a
/// nested module) is left out and recorded with why: code a region reaches
/// there escalates as unloaded, and so does any question about the whole
/// module.
fn libraries(root: &Path, files: &[SourceFile]) -> Result<Result<Libraries, Escalation>, InputError> {
    let mut packages: BTreeMap<String, String> = BTreeMap::new();
    let mut library: Vec<SourceFile> = Vec::new();
    let mut done: BTreeSet<String> = BTreeSet::new();
    let mut todo: Vec<String> = Vec::new();
    let mut unread: BTreeMap<String, String> = BTreeMap::new();
    let mut modules: BTreeMap<String, String> = BTreeMap::new();
    for dir in files.iter().filter(|f| f.path.ends_with(".go")).map(|f| parent(&f.path).to_owned()).collect::<BTreeSet<_>>() {
        let Some(module) = module_root(root, &dir) else { continue };
        let gomod = join(&module, "go.mod");
        let Some(text) = files.iter().find(|f| f.path == gomod).map(|f| String::from_utf8_lossy(&f.bytes).into_owned()) else { continue };
        let Some(path) = module_path(&text) else {
            return Ok(Err(escalate(&gomod, 1, "go.mod declares no module path: which imports are the release's own code is unknown".into())));
        };
        packages.insert(format!("{path}/..."), module.clone());
        packages.insert(import_path(&path, &module, &dir), dir.clone());
        modules.insert(module.clone(), path.clone());
        done.insert(dir.clone());
        todo.push(dir);
    }
    while let Some(dir) = todo.pop() {
        let texts: Vec<String> = files
            .iter()
            .chain(&library)
            .filter(|f| f.path.ends_with(".go") && parent(&f.path) == dir)
            .map(|f| String::from_utf8_lossy(&f.bytes).into_owned())
            .collect();
        for text in texts {
            let Ok(syntax) = fcd_frontends::ts::Syntax::parse(fcd_frontends::Lang::Go, text) else { continue };
            for (import, _) in crate::scope::imports(syntax.root()).into_values() {
                let Some((target, module)) = release_dir(&packages, &import) else { continue };
                if !done.insert(target.clone()) {
                    continue;
                }
                match library_package(root, &target, &module)? {
                    Ok(read) => {
                        packages.insert(import, target.clone());
                        library.extend(read);
                        todo.push(target);
                    }
                    Err(why) => {
                        unread.insert(target, why);
                    }
                }
            }
        }
    }
    for (module, path) in &modules {
        for (dir, why) in whole_module(root, module)? {
            if let Some(why) = why {
                unread.entry(dir).or_insert(why);
                continue;
            }
            if !has_go_files(root, &dir) || !done.insert(dir.clone()) {
                continue;
            }
            match library_package(root, &dir, module)? {
                Ok(read) if read.is_empty() => {}
                Ok(read) => {
                    packages.insert(import_path(path, module, &dir), dir.clone());
                    library.extend(read);
                }
                Err(why) => {
                    unread.insert(dir, why);
                }
            }
        }
    }
    library.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(Ok((library, packages, unread)))
}

/// Whether directory `dir` holds a `.go` file `go build` compiles (a test
/// file or a name starting with `.` or `_` aside): only then is it a package,
/// whose other sources (assembly, C) are compiled with it.
fn has_go_files(root: &Path, dir: &str) -> bool {
    let Ok(entries) = std::fs::read_dir(root.join(dir)) else { return true };
    entries.filter_map(Result::ok).any(|e| {
        let name = e.file_name().to_string_lossy().into_owned();
        name.ends_with(".go") && !name.ends_with("_test.go") && !name.starts_with(['.', '_'])
    })
}

/// Every directory of the module rooted at `module` that may hold a package
/// `go build` links into the binary: all of them but those whose name starts
/// with `.` (no import path names one) and nested modules (their own go.mod:
/// another module, reached only as a dependency). A linked directory cannot
/// be told apart from the code it points to, so it comes with why it is
/// unread. Sorted.
fn whole_module(root: &Path, module: &str) -> Result<Vec<(String, Option<String>)>, InputError> {
    let mut out = Vec::new();
    let mut todo = vec![module.to_owned()];
    while let Some(dir) = todo.pop() {
        out.push((dir.clone(), None));
        let path = root.join(&dir);
        let entries = std::fs::read_dir(&path).map_err(|e| InputError::new(&path, format!("cannot list the module directory: {e}")))?;
        for entry in entries {
            let entry = entry.map_err(|e| InputError::new(&path, format!("cannot list the module directory: {e}")))?;
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                return Err(InputError::new(entry.path(), "the path is not UTF-8"));
            };
            let kind = entry.file_type().map_err(|e| InputError::new(entry.path(), format!("cannot stat: {e}")))?;
            let sub = join(&dir, &name);
            if name.starts_with('.') {
                continue;
            }
            if kind.is_symlink() && entry.path().is_dir() {
                out.push((sub, Some("the directory is a link: `go build` would compile what it points to".into())));
            } else if kind.is_dir() && !root.join(join(&sub, "go.mod")).exists() {
                todo.push(sub);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The one `module` directive of a go.mod (quoted or not); `None` when
/// there is none, more than one, a block, or a path with characters a module
/// path does not have (then which imports are the release's is unknown).
fn module_path(text: &str) -> Option<String> {
    let directives: Vec<&str> = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or("").trim())
        .filter(|l| {
            l.strip_prefix("module").is_some_and(|rest| rest.is_empty() || rest.starts_with(|c: char| c.is_whitespace() || c == '(' || c == '"' || c == '`'))
        })
        .collect();
    let [line] = directives.as_slice() else { return None };
    let rest = line["module".len()..].trim();
    let path = rest.strip_prefix('"').and_then(|r| r.strip_suffix('"')).or_else(|| rest.strip_prefix('`').and_then(|r| r.strip_suffix('`'))).unwrap_or(rest);
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '~' | '/' | '+');
    (!path.is_empty() && path.chars().all(plain) && !path.starts_with('/') && !path.ends_with('/')).then(|| path.to_owned())
}

/// The import path of package directory `dir` in the module `path` rooted at `module`.
fn import_path(path: &str, module: &str, dir: &str) -> String {
    let rel = if module.is_empty() { dir } else { dir.strip_prefix(module).and_then(|r| r.strip_prefix('/')).unwrap_or("") };
    if rel.is_empty() { path.to_owned() } else { format!("{path}/{rel}") }
}

/// The release directory an import path names, when it is under a module of
/// the release (`packages` holds `MODULE/...` with the module's root) and
/// every segment is a plain name (`..`, `.` or an empty one is no package).
/// With the directory, the module root it belongs to.
pub fn release_dir(packages: &BTreeMap<String, String>, import: &str) -> Option<(String, String)> {
    packages.iter().find_map(|(pattern, module)| {
        let module_path = pattern.strip_suffix("/...")?;
        let rel = if import == module_path { "" } else { import.strip_prefix(module_path)?.strip_prefix('/')? };
        if rel.split('/').any(|s| matches!(s, "." | "..") || (s.is_empty() && !rel.is_empty()) || s.contains('\\')) {
            return None;
        }
        Some((if rel.is_empty() { module.clone() } else { join(module, rel) }, module.clone()))
    })
}

/// Every `.go` file of a library package, or why it cannot be read whole
/// as `go build` compiles it (then nothing of it is loaded).
fn library_package(root: &Path, dir: &str, module: &str) -> Result<Result<Vec<SourceFile>, String>, InputError> {
    // A directory of the module, not a link, and not inside a nested module.
    let real_dirs = {
        let mut d = dir.to_owned();
        let mut ok = true;
        while d.len() > module.len() {
            ok &= root.join(&d).symlink_metadata().is_ok_and(|m| m.is_dir());
            d = parent(&d).to_owned();
        }
        ok
    };
    if !real_dirs {
        return Ok(Err("a directory on its path is missing or a link".into()));
    }
    if module_root(root, dir).as_deref() != Some(module) {
        return Ok(Err("it is inside a nested module".into()));
    }
    let mut have = BTreeSet::new();
    let mut files = Vec::new();
    match package_files(root, dir, &mut have, &mut files) {
        Ok(Ok(())) => Ok(Ok(files)),
        Ok(Err(e)) => Ok(Err(e.detail)),
        Err(e) => Ok(Err(e.to_string())),
    }
}

/// Adds the rest of every selected Go package and its go.mod to `files`.
fn complete(root: &Path, files: &mut Vec<SourceFile>) -> Result<Result<(), Escalation>, InputError> {
    let dirs: BTreeSet<String> = files.iter().filter(|f| f.path.ends_with(".go")).map(|f| parent(&f.path).to_owned()).collect();
    let mut have: BTreeSet<String> = files.iter().map(|f| f.path.clone()).collect();
    let mut modules = BTreeSet::new();
    for dir in &dirs {
        if let Err(e) = package_files(root, dir, &mut have, files)? {
            return Ok(Err(e));
        }
        match module_root(root, dir) {
            Some(m) => {
                modules.insert(m);
            }
            None => {
                return Ok(Err(escalate(
                    &join(dir, "."),
                    1,
                    format!("no go.mod between package `{dir}` and the release root: its module and replacements are unknown"),
                )));
            }
        }
    }
    for module in &modules {
        if let Err(e) = module_files(root, module, &mut have, files)? {
            return Ok(Err(e));
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(Ok(()))
}

/// Every `.go` file of one package directory that `go build` compiles.
fn package_files(root: &Path, dir: &str, have: &mut BTreeSet<String>, files: &mut Vec<SourceFile>) -> Result<Result<(), Escalation>, InputError> {
    let path = root.join(dir);
    let entries = std::fs::read_dir(&path).map_err(|e| InputError::new(&path, format!("cannot list the package directory: {e}")))?;
    let mut names: Vec<(String, std::fs::FileType)> = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| InputError::new(&path, format!("cannot list the package directory: {e}")))?;
        let kind = entry.file_type().map_err(|e| InputError::new(entry.path(), format!("cannot stat: {e}")))?;
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            return Err(InputError::new(entry.path(), "the path is not UTF-8"));
        };
        names.push((name, kind));
    }
    names.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, kind) in names {
        let rel = join(dir, &name);
        if name.ends_with("_test.go") || name.starts_with('.') || name.starts_with('_') {
            continue; // go build ignores test files and names starting with `.` or `_`
        }
        if kind.is_dir() {
            continue;
        }
        if OTHER_SOURCES.iter().any(|ext| name.ends_with(ext)) {
            return Ok(Err(escalate(&rel, 1, format!("`{name}` is a non-Go source `go build` compiles into the package; fcd reads only Go"))));
        }
        if !name.ends_with(".go") {
            continue;
        }
        if !kind.is_file() {
            return Ok(Err(escalate(&rel, 1, format!("`{name}` is a link or special file; `go build` would compile what it points to"))));
        }
        if have.insert(rel.clone()) {
            match read(root, &rel)? {
                Ok(f) => files.push(f),
                Err(e) => return Ok(Err(e)),
            }
        }
    }
    Ok(Ok(()))
}

/// The nearest directory at or above `dir` (inside the root) holding go.mod.
fn module_root(root: &Path, dir: &str) -> Option<String> {
    let mut d = dir.to_owned();
    loop {
        if root.join(join(&d, "go.mod")).is_file() {
            return Some(d);
        }
        if d.is_empty() {
            return None;
        }
        d = parent(&d).to_owned();
    }
}

/// go.mod into the closure; a workspace or vendor directory escalates.
fn module_files(root: &Path, module: &str, have: &mut BTreeSet<String>, files: &mut Vec<SourceFile>) -> Result<Result<(), Escalation>, InputError> {
    let vendor = join(module, "vendor");
    if root.join(&vendor).symlink_metadata().is_ok() {
        return Ok(Err(escalate(
            &vendor,
            1,
            format!("`{vendor}` exists: `go build` would compile vendored copies of the dependencies instead of the reviewed libraries"),
        )));
    }
    let mut d = module.to_owned();
    loop {
        let work = join(&d, "go.work");
        if root.join(&work).symlink_metadata().is_ok() {
            return Ok(Err(escalate(&work, 1, format!("`{work}` makes a workspace that can replace any module; fcd does not read workspaces"))));
        }
        if d.is_empty() {
            break;
        }
        d = parent(&d).to_owned();
    }
    let gomod = join(module, "go.mod");
    if have.insert(gomod.clone()) {
        match read(root, &gomod)? {
            Ok(f) => files.push(f),
            Err(e) => return Ok(Err(e)),
        }
    }
    Ok(Ok(()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_plain_module_directive_names_the_module() {
        assert_eq!(super::module_path("// c\nmodule example.com/m // x\n\ngo 1.24\n").as_deref(), Some("example.com/m"));
        assert_eq!(super::module_path("module \"example.com/m\"\n").as_deref(), Some("example.com/m"));
        for hostile in ["go 1.24\n", "module (\n\texample.com/m\n)\n", "module a.com/x\nmodule b.com/y\n", "module \"a b\"\n", "module\n", "modules x\n"] {
            assert_eq!(super::module_path(hostile), None, "{hostile:?}");
        }
    }
}
