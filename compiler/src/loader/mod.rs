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

use std::path::Path;

use fcd_frontends::loader::Loaded;
use fcd_frontends::{Escalation, Lang, SourceFile};

use crate::profile::Profile;
use fcd_model::error::InputError;

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
