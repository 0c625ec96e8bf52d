//! What the language crates' tests share, each including this file by path
//! (`#[path] mod common`): the callee identities of a region as one string
//! each, so every language's cases read the same way.

use fcd_frontends::{Analysis, Identity};

/// The first region's calls, in source order: `PATH`, `?TOKEN` for an
/// unresolved callee, `dynamic: WHY` for a dynamic one.
pub fn callees_of(analysis: &Analysis) -> Vec<String> {
    analysis.regions[0]
        .calls
        .iter()
        .map(|c| match &c.identity {
            Identity::Path(p) => p.clone(),
            Identity::Unresolved(t) => format!("?{t}"),
            Identity::Dynamic(t) => format!("dynamic: {t}"),
        })
        .collect()
}
