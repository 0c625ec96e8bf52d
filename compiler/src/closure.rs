//! The source closure: every file of a release that a profile reads.
//!
//! Files are found by walking the release root (never following symbolic
//! links, so a link cannot pull in files from outside the release or loop),
//! matching the profile's globs against `/`-separated relative paths, and
//! sorting by path, so the closure and its digest do not depend on the order
//! the file system lists entries in. The language's loader (picked by
//! `crate::languages`) then completes the closure to what its runtime
//! actually loads.

use std::path::Path;

use walkdir::WalkDir;

use fcd_frontends::loader::read;
use fcd_frontends::{Escalation, SourceFile};

use crate::profile::Profile;
use fcd_model::error::InputError;
use fcd_model::summary::Closure;

/// The closure of files read from a release, each with its digest.
pub fn closure(files: &[SourceFile]) -> Closure {
    Closure::of(files.iter().map(|f| (f.path.as_str(), f.bytes.as_slice())))
}

/// Reads every regular file under `root` that the profile's globs select,
/// and the files the profile names beyond them (an npm manifest,
/// [`crate::languages::named`]).
///
/// The outer error is an input problem (no such directory, unreadable file);
/// the inner one an escalation: a selected file too large to analyze is part
/// of the release and cannot be skipped.
pub fn collect(root: &Path, profile: &Profile) -> Result<Result<Vec<SourceFile>, Escalation>, InputError> {
    if !root.is_dir() {
        return Err(InputError::new(root, "the release source is not a directory"));
    }
    let mut files = Vec::new();
    for entry in WalkDir::new(root).follow_links(false).sort_by_file_name() {
        let entry = entry.map_err(|e| InputError::new(e.path().unwrap_or(root), format!("cannot walk the release source: {e}")))?;
        if !entry.file_type().is_file() {
            continue;
        }
        let Ok(relative) = entry.path().strip_prefix(root) else { continue };
        let Some(relative) = relative.to_str() else {
            return Err(InputError::new(entry.path(), "the path is not UTF-8"));
        };
        let relative = relative.replace(std::path::MAIN_SEPARATOR, "/");
        if !profile.globs.is_match(&relative) || profile.excluded.is_match(&relative) {
            continue;
        }
        match read(root, &relative)? {
            Ok(f) => files.push(f),
            Err(e) => return Ok(Err(e)),
        }
    }
    if let Err(e) = crate::languages::named(root, profile, &mut files)? {
        return Ok(Err(e));
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(Ok(files))
}
