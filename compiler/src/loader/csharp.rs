//! C#: what compiles is decided by the project, not by the globs.
//!
//! The SDK compiles every `.cs` file under a project's folder and reads
//! `Directory.Build.*` files above it; a `<Compile Remove/Include>` or an
//! import changes the code behind the tool while the globbed files stay the
//! same. The C# frontend interprets those build files (`csharp::loader`):
//! here the release is listed (regular files and links alike) and the build
//! files it names join the closure, to be checked by the frontend and digested.

use std::path::Path;

use fcd_frontends::loader::{Listing, Loaded, read};
use fcd_frontends::{Escalation, Lang, SourceFile};
use fcd_model::error::InputError;

pub fn load(root: &Path, selected: &[SourceFile]) -> Result<Result<Loaded, Escalation>, InputError> {
    let listing = Listing::of(root)?;
    let all: Vec<String> = listing.files.iter().cloned().collect();
    let links: Vec<String> = listing.links.iter().cloned().collect();
    let chosen: Vec<String> = selected.iter().map(|f| f.path.clone()).collect();
    let build = match crate::languages::frontend(Lang::CSharp).build_closure(&all, &links, &chosen) {
        Ok(build) => build,
        Err(e) => return Ok(Err(e)),
    };
    let mut sources = Vec::new();
    for relative in build.iter().filter(|b| !chosen.contains(b)) {
        match read(root, relative)? {
            Ok(f) => sources.push(f),
            Err(e) => return Ok(Err(e)),
        }
    }
    Ok(Ok(Loaded { sources, ..Loaded::default() }))
}
