//! A Go release written to a temporary directory as module `example.com/m`
//! and loaded as the compiler loads one: the selected files, then the
//! module's packages they import, as libraries.

use std::collections::{BTreeMap, BTreeSet};

use fcd_frontends::SourceFile;

/// What the loader gives the analysis: every file to analyse (the selected
/// ones first), which of them are libraries, and the release's packages.
pub(crate) struct Loaded {
    pub(crate) files: Vec<SourceFile>,
    pub(crate) libraries: BTreeSet<String>,
    pub(crate) packages: BTreeMap<String, String>,
    pub(crate) unread: BTreeMap<String, String>,
}

/// Writes `go.mod` and `files` (path, text), then loads the `selected` ones.
pub(crate) fn load(files: &[(&str, &str)], selected: &[&str]) -> Loaded {
    load_with(files, selected, |_| ())
}

/// [`load`], with `more` changing the module on disk before it is loaded.
pub(crate) fn load_with(files: &[(&str, &str)], selected: &[&str], more: impl FnOnce(&std::path::Path)) -> Loaded {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let write = |path: &str, text: &str| {
        let full = dir.path().join(path);
        std::fs::create_dir_all(full.parent().expect("a parent")).expect("creates");
        std::fs::write(full, text).expect("writes");
    };
    write("go.mod", "module example.com/m\n\ngo 1.24\n");
    for (path, text) in files {
        write(path, text);
    }
    more(dir.path());
    let text = |path: &str| files.iter().find(|(p, _)| *p == path).expect("a selected file is written").1;
    let selected: Vec<SourceFile> = selected.iter().map(|p| SourceFile { path: (*p).into(), bytes: text(p).as_bytes().to_vec() }).collect();
    let loaded = fcd_frontend_go::loader::load(dir.path(), &selected).expect("reads").expect("loads");
    let mut all = selected;
    all.extend(loaded.sources);
    let libraries = loaded.libraries.iter().map(|f| f.path.clone()).collect();
    all.extend(loaded.libraries);
    Loaded { files: all, libraries, packages: loaded.packages, unread: loaded.unread }
}
