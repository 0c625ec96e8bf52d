//! The closed call path for Python: a function, class or method the release
//! defines is only as reviewed as its body.
//!
//! A bare call of the module's own function already needs a region
//! ([`super::unreviewed_local`]). This pass covers the other spellings that
//! reach release code by a dotted path, which an inventory would otherwise
//! trust by name: a function of another module of the release
//! (`from .paths import check`, `from pkg.paths import check`,
//! `paths.check(…)`), a module definition named through its module
//! (`server.helper`), a nested definition (`server.<locals>.open_repo`), a
//! class of the release, and the call that yields an object whose method is
//! then called (`server.create_server().run`: `create_server`). A path is
//! release code when it is relative or its first name is a package, module
//! or directory of the release's files; it must then name a located region
//! (by its definition's name, which the region finder holds unique across
//! the files). Methods of the object a release call returns are not
//! followed: the assumptions say what that object is.

use std::collections::BTreeSet;

use fcd_frontends::frontend::Program;
use fcd_frontends::ir::{Escalation, EscalationCode, Identity};
use fcd_model::effect::Anchor;

/// Checks that every dotted path to release code names a located region.
pub(super) fn check(program: &Program<'_, '_>) -> Result<(), Escalation> {
    if program.env.alone {
        return Ok(());
    }
    let release: BTreeSet<&str> = program
        .trees
        .iter()
        .flat_map(|(path, _)| path.split('/').map(|part| part.trim_end_matches(".py")))
        .filter(|part| !part.is_empty() && *part != "__init__")
        .collect();
    let mut located: BTreeSet<&str> = program.regions.iter().filter_map(|r| r.node.field_child("name")).map(|n| n.text()).collect();
    // A route registered inside a function (`create_server`) is read with
    // what that function does to the server object it builds and returns:
    // its constructor, its method calls, the calls of the function's result
    // ([`super::route::shared`]).
    for region in program.regions.iter().filter(|r| !super::route::shared(r.node, &r.env.tool).is_empty()) {
        located.extend(region.node.ancestors().filter(|a| a.kind() == "function_definition").filter_map(|f| f.field_child("name")).map(|n| n.text()));
    }
    for (region, calls) in program.regions.iter().zip(program.calls) {
        for (node, identity) in calls {
            let Identity::Path(path) = identity else { continue };
            let Some(name) = release_definition(path, &release) else { continue };
            if !located.contains(name) {
                return Err(Escalation::new(
                    EscalationCode::InventoryViolation,
                    format!(
                        "region `{}` calls `{path}`: `{name}` is defined in the release, and no region of the profile reads its body, \
                         so what it does is unread (make it a region with its own inventory)",
                        region.name
                    ),
                    Some(Anchor::at_line(region.file, node.line())),
                ));
            }
        }
    }
    Ok(())
}

/// The name of the release definition a resolved identity calls, if it
/// reaches release code: the last name before the first call.
fn release_definition<'p>(path: &'p str, release: &BTreeSet<&str>) -> Option<&'p str> {
    let path = ["@", "handed ", "with "].iter().fold(path, |p, prefix| p.strip_prefix(prefix).unwrap_or(p));
    if path.starts_with("param:") || path.starts_with("import ") {
        return None;
    }
    let called = path.split('(').next().unwrap_or(path);
    let first = called.split('.').next().unwrap_or_default();
    let local = called.starts_with('.') || release.contains(first);
    // A dotted path of one name is a builtin or a bare name the scope checks.
    (local && called.contains('.')).then(|| called.rsplit('.').next().unwrap_or(called)).filter(|n| !n.is_empty())
}
