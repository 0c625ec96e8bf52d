//! Methods a region calls through a value of a type of the release, bound
//! wherever in the module they are declared.
//!
//! A callee whose receiver is a typed parameter is spelled by the type
//! ([`super::receiver`]): `deps.GetClient(ctx)` with `deps ToolDependencies`
//! is `ToolDependencies#GetClient`. When that type is the release's, the
//! identity names no code: for an interface, Go runs the method of whatever
//! value the caller put there, and any package of the module (its `cmd/`,
//! an `internal/` package the binary's `main` wires in) may declare a type
//! with that method and hand a value of it over; for a type the release
//! defines, the method is release code whose body can change under the
//! same name. So every method of that name declared anywhere in the module,
//! on any type (a sound over-approximation of the types that could
//! implement the interface: no signature is compared), must be a region of
//! the profile or be pinned in `source.pinned-functions` by the digest of
//! its closure, spelled `DIR.TYPE.METHOD` (`pkg/github.BaseDeps.GetClient`:
//! the method's declaration and what it reaches, its receiver's other
//! methods and fields where it uses them, [`super::pinned`]); else registration
//! escalates `inventory_violation` at the method, naming it, the call that
//! dispatches to it and the digest to pin. The question is asked of every
//! package of the module, so a package the loader could not read whole, or
//! a file that does not parse, escalates too. Methods promoted from a
//! library type embedded in a release type are library code, trusted by
//! identity like every library callee.

use std::collections::BTreeSet;

use fcd_frontends::frontend::Program;
use fcd_frontends::ir::{Escalation, EscalationCode, Identity, ReachedCode};
use fcd_frontends::ts::Node;
use fcd_model::effect::Anchor;

use super::implicit::declared_type;
use super::index::Index;
use super::scope;
use super::settings::Settings;
use super::syntax::receiver_type;

/// A call of a region through a value of a release type.
struct Dispatched<'a> {
    region: usize,
    node: Node<'a>,
    /// As the inventory spells it (`ToolDependencies#GetClient`).
    callee: String,
    /// The type's package directory and name.
    ty: (String, String),
    method: String,
}

/// A method declaration of the module.
struct Method<'a> {
    file: &'a str,
    node: Node<'a>,
    /// The receiver's type: its package directory and name.
    ty: (String, String),
}

/// Every method a region dispatches to is a region, or its type is pinned by a listed digest.
pub(super) fn check(program: &Program<'_, '_>) -> Result<(), Escalation> {
    if program.env.alone {
        return Ok(());
    }
    let index = Index::of(program);
    let pinned = &Settings::of(program.env).pinned_functions;
    let mut done: BTreeSet<String> = BTreeSet::new();
    for call in dispatched(program, &index) {
        if !done.insert(call.method.clone()) {
            continue;
        }
        let region = &program.regions[call.region];
        let head = format!(
            "region `{}` calls `{}` ({}:{}), a method of the release's type `{}`, which runs the `{}` of whatever value it is handed",
            region.name,
            call.callee,
            region.file,
            call.node.line(),
            call.ty.1,
            call.method
        );
        if let Err(why) = index.whole_module() {
            return Err(Escalation::new(
                EscalationCode::InventoryViolation,
                format!("{head}: which methods those are cannot be told: {why}"),
                Some(Anchor::at_line(region.file, call.node.line())),
            ));
        }
        for found in methods(&index, &call.method) {
            if program.regions.iter().any(|r| r.file == found.file && r.node == found.node) {
                continue;
            }
            let name = format!("{}.{}", found.ty.1, call.method);
            let key = index.spelled(&found.ty.0, &name);
            let fail = |why: String| {
                Err(Escalation::new(
                    EscalationCode::InventoryViolation,
                    format!("{head}: `{}.{}` ({}:{}) is one, which no region reads: {why}", found.ty.1, call.method, found.file, found.node.line()),
                    Some(Anchor::at_line(found.file, found.node.line())),
                ))
            };
            if found.ty.1.is_empty() {
                return fail("its receiver's type is not a plain name fcd reads".into());
            }
            match (pinned.get(&key), index.closure(&found.ty.0, &name)) {
                (Some(listed), Ok(c)) if listed.contains(&c.digest) => {}
                (Some(_), Ok(c)) => {
                    return fail(format!(
                        "`{key}` is pinned (`source.pinned-functions`), and the release code it reaches has digest {}, which no reviewer listed: \
                         read it (`fcd debug region --closure {key}` prints it), and list the digest if it does what the assumptions say",
                        c.digest
                    ));
                }
                (Some(_), Err(why)) => return fail(format!("`{key}` is pinned (`source.pinned-functions`), but {why}")),
                (None, closure) => {
                    let digest =
                        closure.map(|c| format!(", whose closure has digest {}", c.digest)).unwrap_or_else(|why| format!("; it cannot be pinned: {why}"));
                    return fail(format!("read it and pin `{key}` in `source.pinned-functions`{digest}"));
                }
            }
        }
    }
    Ok(())
}

/// The methods the regions dispatch to, for `fcd debug region`
/// (`--closure pkg/github.BaseDeps.GetClient` prints what pinning one
/// binds). Checks nothing.
pub(super) fn reached(program: &Program<'_, '_>) -> Vec<ReachedCode> {
    let index = Index::of(program);
    let pinned = &Settings::of(program.env).pinned_functions;
    let mut out: Vec<ReachedCode> = Vec::new();
    for call in dispatched(program, &index) {
        for found in methods(&index, &call.method) {
            let name = format!("{}.{}", found.ty.1, call.method);
            let key = index.spelled(&found.ty.0, &name);
            if out.iter().any(|r| r.callee == key) {
                continue;
            }
            let closure = index.closure(&found.ty.0, &name);
            let covered = fcd_frontends::pinned::coverage(pinned.get(&key), closure.as_ref().ok().map(|c| c.digest.as_str()))
                .unwrap_or("unread: escalates unless a region");
            let at = &program.regions[call.region];
            out.push(ReachedCode {
                region: at.name.to_owned(),
                callee: key,
                call: Anchor::at_line(at.file, call.node.line()),
                covered: format!("`{}.{}` ({}:{}), which `{}` may run: {covered}", found.ty.1, call.method, found.file, found.node.line(), call.callee),
                digest: closure.as_ref().map(|c| c.digest.clone()).map_err(Clone::clone),
                definitions: closure.map(|c| c.anchors()).unwrap_or_default(),
            });
        }
    }
    out
}

/// Every call of the regions whose identity starts with a type of the
/// release and `#` (a method called through a typed parameter, or through
/// a local bound to one's result: the first method is the one dispatched).
fn dispatched<'a>(program: &Program<'_, 'a>, index: &Index<'_, 'a>) -> Vec<Dispatched<'a>> {
    let mut out = Vec::new();
    for (i, (region, calls)) in program.regions.iter().zip(program.calls).enumerate() {
        let dir = scope::dir(region.file);
        let root = region.node.ancestors().last().unwrap_or(region.node);
        let imports = scope::imports(root);
        for (node, identity) in calls {
            let Identity::Path(path) = identity else { continue };
            let Some((ty, rest)) = path.split_once('#') else { continue };
            let method = rest.split(['.', '(', '[', '@']).next().unwrap_or(rest);
            let ty = ty.split('[').next().unwrap_or(ty);
            let resolved = match ty.split_once('.') {
                None => declared_type(index, dir, ty),
                Some((package, name)) => imports.get(package).and_then(|(p, _)| index.release(p)).and_then(|d| declared_type(index, &d, name)),
            };
            let Some(resolved) = resolved else { continue };
            let callee = format!("{ty}#{method}");
            out.push(Dispatched { region: i, node: *node, callee, ty: resolved, method: method.to_owned() });
        }
    }
    out
}

/// Every method declaration named `name` in the module, in file order.
fn methods<'a>(index: &Index<'_, 'a>, name: &str) -> Vec<Method<'a>> {
    let mut out = Vec::new();
    for (file, syntax) in index.all_files() {
        for m in syntax.root().named_children().filter(|m| m.kind() == "method_declaration") {
            if m.field_child("name").is_none_or(|n| n.text() != name) {
                continue;
            }
            // A receiver whose type is not read is kept with no name: it escalates.
            let ty = receiver_type(m).unwrap_or_default();
            out.push(Method { file, node: m, ty: (scope::dir(file).to_owned(), ty.to_owned()) });
        }
    }
    out
}
