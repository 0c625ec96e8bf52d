//! What every language's loader shares: the release directory as a loader
//! reads it, and what a loader answers.
//!
//! A glob names the file a reviewer read; the runtime or the build decides
//! what runs. A package directory beside a module, a compiled extension of
//! the same name, a startup hook, an entry point into another package, a
//! project file that changes the compile items: each changes the code behind
//! the tool while the globbed file, and so the summary, stay the same. So
//! each language's loader (`fcd_frontend_LANG::loader::load`, picked by the
//! compiler's `languages::load`) derives, from the files the globs selected,
//! what the runtime loads ([`Loaded`]), and escalates any loader construct it
//! cannot interpret. What the loaders read the release with is here, once:
//! a file read as a closure entry ([`read`]), every entry of the release
//! ([`Listing`]) and `/`-separated path helpers.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use walkdir::WalkDir;

use crate::ir::{Escalation, EscalationCode, SourceFile};
use crate::ts::MAX_FILE_BYTES;
use fcd_model::effect::Anchor;
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
    /// Source files of the release the runtime loads with the selected ones
    /// that are read only as the code the regions reach (Go: every other
    /// package of the module): digested and parsed, never
    /// searched for a region nor read by the file-wide checks; the
    /// language's closed call path reads the definitions a region reaches
    /// there ([`crate::frontend::Program::library`]).
    pub libraries: Vec<SourceFile>,
    /// The release's own packages the loader found, by import path, with
    /// their directory in the release (Go: the module path of go.mod joined
    /// with each package directory): a call into one is release code.
    pub packages: BTreeMap<String, String>,
    /// Package directories of the release the loader could not read whole,
    /// each with why (Go: a link, a non-Go source, a file too large): a
    /// question about every package of the module (who implements a method,
    /// who writes a variable) cannot be answered while one is unread.
    pub unread: BTreeMap<String, String>,
}

/// A loader construct fcd does not interpret, at its file and line: it escalates
/// (`shape_mismatch`) instead of being guessed.
pub fn escalate(file: &str, line: u32, detail: String) -> Escalation {
    Escalation::new(EscalationCode::ShapeMismatch, detail, Some(Anchor::at_line(file, line)))
}

/// Reads one file of the release (`relative` to `root`, `/`-separated) as a
/// closure entry; a file too large to analyse is part of the release and
/// cannot be skipped, so it escalates.
pub fn read(root: &Path, relative: &str) -> Result<Result<SourceFile, Escalation>, InputError> {
    let path = root.join(relative);
    let len = path.symlink_metadata().map(|m| m.len()).unwrap_or(0);
    if len > MAX_FILE_BYTES as u64 {
        return Ok(Err(Escalation::new(
            EscalationCode::ParseError,
            format!("file is {len} bytes, more than the {MAX_FILE_BYTES} accepted"),
            Some(Anchor::at_line(relative, 1)),
        )));
    }
    let bytes = std::fs::read(&path).map_err(|e| InputError::new(&path, format!("cannot read: {e}")))?;
    Ok(Ok(SourceFile { path: relative.to_owned(), bytes }))
}

/// Every entry of the release, as `/`-separated relative paths, sorted.
#[derive(Debug, Default)]
pub struct Listing {
    /// Regular files.
    pub files: BTreeSet<String>,
    /// Symbolic links (never followed: a runtime or compiler may follow them).
    pub links: BTreeSet<String>,
    pub dirs: BTreeSet<String>,
}

impl Listing {
    pub fn of(root: &Path) -> Result<Listing, InputError> {
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

/// The directory of a `/`-separated path (`""` at the release root).
pub fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

/// `dir/name`, or `name` at the release root.
pub fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() { name.to_owned() } else { format!("{dir}/{name}") }
}
