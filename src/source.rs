//! The source closure: every file of a release that a profile reads.
//!
//! Files are found by walking the release root (never following symbolic
//! links, so a link cannot pull in files from outside the release or loop),
//! matching the profile's globs against `/`-separated relative paths, and
//! sorting by path, so the closure and its digest do not depend on the order
//! the file system lists entries in.

use std::path::Path;

use serde::{Deserialize, Serialize};
use walkdir::WalkDir;

use fcd_frontends::{Anchor, Escalation, EscalationCode, SourceFile};
use fcd_frontends::ts::MAX_FILE_BYTES;

use crate::canon;
use crate::error::InputError;
use crate::profile::Profile;

/// One file of the closure and its digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileDigest {
    pub path: String,
    pub digest: String,
}

/// The files a summary was computed from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Closure {
    /// Digest of `files` (canonical JSON).
    pub digest: String,
    pub files: Vec<FileDigest>,
}

impl Closure {
    pub fn of(files: &[SourceFile]) -> Closure {
        let files: Vec<FileDigest> = files
            .iter()
            .map(|f| FileDigest { path: f.path.clone(), digest: canon::sha256(&f.bytes) })
            .collect();
        Closure { digest: canon::digest(&files), files }
    }
}

/// Reads every regular file under `root` that the profile's globs select.
///
/// The outer error is an input problem (no such directory, unreadable file);
/// the inner one an escalation: a selected file too large to analyze is part
/// of the release and cannot be skipped.
pub fn collect(root: &Path, profile: &Profile) -> Result<Result<Vec<SourceFile>, Escalation>, InputError> {
    if !root.is_dir() {
        return Err(InputError::new(root, "the release source is not a directory"));
    }
    let frontend = profile.language.frontend();
    let mut files = Vec::new();
    let mut all = Vec::new();
    let mut build = Vec::new();
    let mut links = Vec::new();
    for entry in WalkDir::new(root).follow_links(false).sort_by_file_name() {
        let entry = entry.map_err(|e| {
            InputError::new(e.path().unwrap_or(root), format!("cannot walk the release source: {e}"))
        })?;
        let kind = entry.file_type();
        if !kind.is_file() && !kind.is_symlink() {
            continue;
        }
        let Ok(relative) = entry.path().strip_prefix(root) else { continue };
        let Some(relative) = relative.to_str() else {
            return Err(InputError::new(entry.path(), "the path is not UTF-8"));
        };
        let relative = relative.replace(std::path::MAIN_SEPARATOR, "/");
        if kind.is_symlink() {
            // Never followed, but the frontend must know: a compiler follows it.
            links.push(relative);
            continue;
        }
        all.push(relative.clone());
        if frontend.is_build_file(&relative) {
            build.push((relative.clone(), entry.path().to_owned()));
        }
        if !profile.globs.is_match(&relative) || profile.excluded.is_match(&relative) {
            continue;
        }
        match read(entry.path(), &relative)? {
            Ok(f) => files.push(f),
            Err(e) => return Ok(Err(e)),
        }
    }
    // What compiles is decided by build files the globs need not name: the
    // frontend says which ones, and whether the selection is what compiles.
    let selected: Vec<String> = files.iter().map(|f| f.path.clone()).collect();
    let extra = match frontend.build_closure(&all, &links, &selected) {
        Ok(extra) => extra,
        Err(e) => return Ok(Err(e)),
    };
    for (relative, path) in build.iter().filter(|(r, _)| extra.contains(r)) {
        match read(path, relative)? {
            Ok(f) => files.push(f),
            Err(e) => return Ok(Err(e)),
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(Ok(files))
}

/// Reads one file of the closure; one too large to analyze is an escalation.
fn read(path: &Path, relative: &str) -> Result<Result<SourceFile, Escalation>, InputError> {
    let len = std::fs::symlink_metadata(path).map(|m| m.len()).unwrap_or(0);
    if len > MAX_FILE_BYTES as u64 {
        return Ok(Err(Escalation::new(
            EscalationCode::ParseError,
            format!("file is {len} bytes, more than the {MAX_FILE_BYTES} accepted"),
            Some(Anchor::at_line(relative, 1)),
        )));
    }
    let bytes = std::fs::read(path).map_err(|e| InputError::new(path, format!("cannot read: {e}")))?;
    Ok(Ok(SourceFile { path: relative.to_owned(), bytes }))
}
