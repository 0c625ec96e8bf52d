//! The source closure: every file of a release that a profile reads.
//!
//! Files are found by walking the release root (never following symbolic
//! links, so a link cannot pull in files from outside the release or loop),
//! matching the profile's globs against `/`-separated relative paths, and
//! sorting by path, so the closure and its digest do not depend on the order
//! the file system lists entries in. The loader (`crate::loader`) then
//! completes the closure to what each ecosystem's runtime actually loads.

use std::path::Path;

use walkdir::WalkDir;

use fcd_frontends::loader::read;
use fcd_frontends::ts::MAX_FILE_BYTES;
use fcd_frontends::{Escalation, EscalationCode, SourceFile};
use fcd_model::effect::Anchor;

use crate::profile::Profile;
use fcd_model::error::InputError;
use fcd_model::summary::Closure;

/// The closure of files read from a release, each with its digest.
pub fn closure(files: &[SourceFile]) -> Closure {
    Closure::of(files.iter().map(|f| (f.path.as_str(), f.bytes.as_slice())))
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
    if let Some(entry) = &profile.entry {
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
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(Ok(files))
}
