//! What the runtime loads: the closure follows each ecosystem's loading
//! rules, not only the profile's globs.
//!
//! A glob names the file a reviewer read; the interpreter decides what runs.
//! A package directory beside the module, a compiled extension with the same
//! name, a startup hook or an entry point into another package all change the
//! code behind the tool while the globbed file, and so the summary, stay the
//! same. Each language module here derives, from the files the globs selected,
//! (1) the other source files the runtime loads with them, which are analysed
//! too, (2) the packaging files that decide what is loaded, which are digested
//! into the closure, and escalates any loader construct it cannot interpret.

mod csharp;
mod go;
mod npm;
mod python;

use std::collections::BTreeSet;
use std::path::Path;

use walkdir::WalkDir;

use fcd_frontends::{Escalation, Lang, SourceFile};

use crate::profile::Profile;
use fcd_model::error::InputError;

/// What the runtime loads beyond the selected files.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Source files loaded with the selected ones: analysed, digested.
    pub sources: Vec<SourceFile>,
    /// Packaging and build files that decide what is loaded: digested, not parsed as source.
    pub manifests: Vec<SourceFile>,
    /// The files the runtime starts from, when a package manifest names them
    /// (npm): the frontend analyses only what they load.
    pub entries: Option<Vec<String>>,
}

/// Applies the loading rules of the profile's language to the selected files.
pub fn load(root: &Path, profile: &Profile, selected: &[SourceFile]) -> Result<Result<Loaded, Escalation>, InputError> {
    match profile.language {
        Lang::Python => python::load(root, profile, selected),
        Lang::Go => {
            let mut files = selected.to_vec();
            if let Err(e) = go::complete(root, &mut files)? {
                return Ok(Err(e));
            }
            let sources = files.into_iter().filter(|f| !selected.iter().any(|s| s.path == f.path)).collect();
            Ok(Ok(Loaded { sources, ..Loaded::default() }))
        }
        Lang::CSharp => csharp::load(root, selected),
        // Node starts from what package.json names; the frontend follows its
        // imports from there (`javascript::loader`).
        Lang::JavaScript | Lang::TypeScript => {
            let parses = |p: &str| profile.language.parses(p);
            match profile.entry.as_ref().map(|e| npm::entry_files(e, selected, parses)).transpose() {
                Ok(entries) => Ok(Ok(Loaded { entries, ..Loaded::default() })),
                Err(e) => Ok(Err(e)),
            }
        }
    }
}

/// Reads a file of the release as a closure entry (`relative` is `/`-separated);
/// one too large to analyse escalates.
fn read(root: &Path, relative: &str) -> Result<Result<SourceFile, Escalation>, InputError> {
    crate::closure::read_one(root, relative)
}

/// Every entry of the release, as `/`-separated relative paths, sorted.
#[derive(Debug, Default)]
struct Listing {
    /// Regular files.
    files: BTreeSet<String>,
    /// Symbolic links (never followed: a runtime or compiler may follow them).
    links: BTreeSet<String>,
    dirs: BTreeSet<String>,
}

impl Listing {
    fn of(root: &Path) -> Result<Listing, InputError> {
        let mut listing = Listing::default();
        for entry in WalkDir::new(root).follow_links(false).sort_by_file_name() {
            let entry = entry.map_err(|e| InputError::new(e.path().unwrap_or(root), format!("cannot walk the release source: {e}")))?;
            let Ok(rel) = entry.path().strip_prefix(root) else { continue };
            let Some(rel) = rel.to_str() else {
                return Err(InputError::new(entry.path(), "the path is not UTF-8"));
            };
            let rel = rel.replace(std::path::MAIN_SEPARATOR, "/");
            if rel.is_empty() {
                continue;
            }
            let kind = entry.file_type();
            if kind.is_dir() {
                listing.dirs.insert(rel);
            } else if kind.is_symlink() {
                listing.links.insert(rel);
            } else {
                listing.files.insert(rel);
            }
        }
        Ok(listing)
    }
}

fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() { name.to_owned() } else { format!("{dir}/{name}") }
}
