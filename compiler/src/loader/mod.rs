//! What the runtime loads, for the one language whose loading rules are
//! still read here: npm (`npm.rs`). It moves into its language's crate, as
//! Python's, Go's and C#'s did (`fcd_frontend_LANG::loader`);
//! `crate::languages::load` picks the loader of a profile's language.

mod npm;

use fcd_frontends::loader::Loaded;
use fcd_frontends::{Escalation, SourceFile};

use crate::profile::Profile;
use fcd_model::error::InputError;

/// JavaScript: the entry file package.json names. Node starts from it; the
/// frontend follows its imports from there (`javascript::loader`).
pub(crate) fn npm(profile: &Profile, selected: &[SourceFile]) -> Result<Result<Loaded, Escalation>, InputError> {
    let parses = |p: &str| profile.language.parses(p);
    match profile.entry.as_ref().map(|e| npm::entry_files(e, selected, parses)).transpose() {
        Ok(entries) => Ok(Ok(Loaded { entries, ..Loaded::default() })),
        Err(e) => Ok(Err(e)),
    }
}
