//! Every parsed file of a Go release by package, and the names each
//! package declares: what the closed call path ([`super::pinned`]), the
//! dispatch check and the function-value check ask of the whole module.

use std::cell::OnceCell;
use std::collections::{BTreeMap, BTreeSet};

use fcd_frontends::frontend::Program;
use fcd_frontends::ts::{Node, Syntax};

use super::loader::release_dir;
use super::scope;

/// Function literals by `(DIR, FUNC#NAME)`, each with its file, in source order.
type Literals<'a> = BTreeMap<(String, String), Vec<(&'a str, Node<'a>)>>;

/// Every parsed file of the release by package directory: the analysed ones and the libraries.
pub(super) struct Index<'p, 'a> {
    pub(super) dirs: BTreeMap<&'a str, Vec<(&'a str, &'a Syntax)>>,
    /// The top-level names each package declares.
    pub(super) declared: BTreeMap<&'a str, BTreeSet<&'a str>>,
    pub(super) unparsed: BTreeSet<&'a str>,
    /// `MODULE/...` -> module root, import path -> directory (the loader's).
    pub(super) packages: &'p BTreeMap<String, String>,
    /// Why not every package of the module is read, when one is not: a
    /// package the loader could not read whole, a file that does not parse.
    pub(super) incomplete: Option<String>,
    /// The function literals the call path receives as values, by
    /// `(DIR, FUNC#NAME)`: what a `DIR.FUNC#NAME` pin binds, once the pin
    /// check has found them ([`Self::seed`]).
    literals: OnceCell<Literals<'a>>,
}

impl<'p, 'a> Index<'p, 'a> {
    pub(super) fn of(program: &Program<'p, 'a>) -> Index<'p, 'a> {
        let mut dirs: BTreeMap<&'a str, Vec<(&'a str, &'a Syntax)>> = BTreeMap::new();
        for (file, syntax) in program.trees.iter().chain(program.library) {
            dirs.entry(scope::dir(file)).or_default().push((*file, *syntax));
        }
        let declared = dirs
            .iter()
            .map(|(dir, files)| {
                let names = files.iter().flat_map(|(_, s)| s.root().named_children().flat_map(scope::top_level_names)).map(|(_, n)| n.text()).collect();
                (*dir, names)
            })
            .collect();
        let incomplete = program
            .env
            .unread
            .iter()
            .map(|(dir, why)| format!("package {dir} is not read ({why})"))
            .chain(program.library_unparsed.iter().chain(program.opaque.iter().map(|(f, _)| f)).map(|f| format!("{f} does not parse")))
            .next();
        Index {
            dirs,
            declared,
            unparsed: program.library_unparsed.iter().map(|f| scope::dir(f)).collect(),
            packages: &program.env.packages,
            incomplete,
            literals: OnceCell::new(),
        }
    }

    /// Every package of the module is read and parsed, so a question about
    /// all of them (who implements a method, who writes a variable) has an
    /// answer; else why not.
    pub(super) fn whole_module(&self) -> Result<(), String> {
        self.incomplete.as_ref().map_or(Ok(()), |why| Err(format!("not every package of the module is read: {why}")))
    }

    /// Every parsed file of the release, by package directory.
    pub(super) fn all_files(&self) -> impl Iterator<Item = (&'a str, &'a Syntax)> + '_ {
        self.dirs.values().flatten().copied()
    }

    /// How `source.pinned-functions` spells `name` of package `dir`: the
    /// directory relative to its module's root, a dot, the name.
    pub(super) fn spelled(&self, dir: &str, name: &str) -> String {
        let rel = self
            .packages
            .iter()
            .filter(|(p, _)| p.ends_with("/..."))
            .filter_map(|(_, module)| match module.as_str() {
                "" => Some(dir),
                m if dir == m => Some(""),
                m => dir.strip_prefix(m).and_then(|r| r.strip_prefix('/')),
            })
            .min_by_key(|r| r.len())
            .unwrap_or(dir);
        if rel.is_empty() { name.to_owned() } else { format!("{rel}.{name}") }
    }

    /// The package directory and name a `source.pinned-functions` key
    /// spells ([`Self::spelled`]'s inverse), when a loaded package has it.
    pub(super) fn unspelled(&self, key: &str) -> Option<(String, String)> {
        self.dirs
            .keys()
            .filter_map(|dir| {
                let prefix = self.spelled(dir, "_");
                let name = key.strip_prefix(prefix.strip_suffix('_')?)?;
                (!name.is_empty() && !name.contains('/')).then(|| (prefix.len(), dir.to_string(), name.to_owned()))
            })
            .max_by_key(|(len, _, _)| *len)
            .map(|(_, dir, name)| (dir, name))
    }

    /// The package directory an import path of the release names, or `None`
    /// for a path outside the release (the standard library, a dependency).
    pub(super) fn release(&self, import: &str) -> Option<String> {
        release_dir(self.packages, import).map(|(dir, _)| dir)
    }

    /// The parsed files of package `dir`, every one of them, with no dot import.
    pub(super) fn package(&self, dir: &str, spelled: &str) -> Result<&Vec<(&'a str, &'a Syntax)>, String> {
        if self.unparsed.contains(dir) {
            return Err(format!("`{spelled}` is in package {dir}, a file of which does not parse, so what it runs is unread"));
        }
        let files = self
            .dirs
            .get(dir)
            .ok_or_else(|| format!("`{spelled}` is in package {dir}, which is not among the loaded files (missing, or not readable whole)"))?;
        for (file, syntax) in files {
            if let Some((_, (path, spec))) = scope::imports(syntax.root()).iter().find(|(n, _)| n.as_str() == ".") {
                return Err(format!("{file}:{} dot-imports `{path}`: any name of package {dir} could come from it", spec.line()));
            }
        }
        Ok(files)
    }

    /// The parsed files of package `dir` (none when it is not loaded).
    pub(super) fn files(&self, dir: &str) -> &[(&'a str, &'a Syntax)] {
        self.dirs.get(dir).map_or(&[], Vec::as_slice)
    }

    pub(super) fn root_of(&self, file: &str) -> Option<Node<'a>> {
        self.dirs.get(scope::dir(file))?.iter().find(|(f, _)| *f == file).map(|(_, s)| s.root())
    }

    /// Whether package `dir` declares a function (not a variable) `name`.
    pub(super) fn declares_function(&self, dir: &str, name: &str) -> bool {
        self.files(dir).iter().any(|(_, s)| {
            s.root().named_children().any(|top| top.kind() == "function_declaration" && top.field_child("name").is_some_and(|n| n.text() == name))
        })
    }

    /// Whether package `dir` declares `name` at top level.
    pub(super) fn declares(&self, dir: &str, name: &str) -> bool {
        // `var _ I = (*T)(nil)` declares nothing: the blank identifier is no name.
        name != "_" && self.declared.get(dir).is_some_and(|names| names.contains(name))
    }

    /// Records the function literals the call path receives as values,
    /// each under its `(DIR, FUNC#NAME)`; the first record holds.
    pub(super) fn seed(&self, literals: impl IntoIterator<Item = (String, String, &'a str, Node<'a>)>) {
        let mut by_key: Literals<'a> = BTreeMap::new();
        for (dir, key, file, node) in literals {
            let nodes = by_key.entry((dir, key)).or_default();
            if !nodes.iter().any(|(f, n)| *f == file && n.byte_range() == node.byte_range()) {
                nodes.push((file, node));
            }
        }
        for nodes in by_key.values_mut() {
            nodes.sort_by_key(|(f, n)| (*f, n.byte_range().start));
        }
        let _ = self.literals.set(by_key);
    }

    /// The function literals recorded under `(dir, key)` ([`Self::seed`]).
    pub(super) fn literals(&self, dir: &str, key: &str) -> &[(&'a str, Node<'a>)] {
        self.literals.get().and_then(|m| m.get(&(dir.to_owned(), key.to_owned()))).map_or(&[], Vec::as_slice)
    }
}
