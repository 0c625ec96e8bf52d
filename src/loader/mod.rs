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

mod go;
mod python;

use std::path::Path;

use fcd_frontends::{Escalation, Lang, SourceFile};

use crate::error::InputError;
use crate::profile::Profile;

/// What the runtime loads beyond the selected files.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Source files loaded with the selected ones: analysed, digested.
    pub sources: Vec<SourceFile>,
    /// Packaging and build files that decide what is loaded: digested, not parsed as source.
    pub manifests: Vec<SourceFile>,
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
            Ok(Ok(Loaded { sources, manifests: Vec::new() }))
        }
        // The other languages' loading rules are read by their own modules as
        // they are written; until then the globbed files are the closure.
        _ => Ok(Ok(Loaded::default())),
    }
}

/// Reads a file of the release as a closure entry (`relative` is `/`-separated);
/// one too large to analyse escalates.
fn read(root: &Path, relative: &str) -> Result<Result<SourceFile, Escalation>, InputError> {
    crate::source::read_one(root, relative)
}
