//! Methods that pinned code runs through an interface, bound wherever in
//! the module they are declared.
//!
//! A pin binds the text of a closure ([`super::pinned`]), and a closure
//! takes in the interface types its text names, but an interface declares
//! no code: a call `mgr.Authenticate(…)` on one runs the method of whatever
//! value was put there (github's OAuth tool middleware calls its manager
//! that way; `RequestDeps.GetClient` asks a host resolver the API host).
//! [`super::dispatch`] asks this of the regions' calls; this asks it of the
//! pinned code. For every method an interface type of the module declares,
//! a call `.M(` in the closure of a pin whose digest is listed (any
//! receiver: a sound over-approximation of the calls through an interface,
//! whether its type is in the closure or only in the signature of the code
//! around it) may run every method `M` declared in the module, on any
//! type. Each of those must lie in a region or in the closure of a listed
//! pin, or be pinned itself as `DIR.TYPE.M` (as for dispatch); a method so
//! pinned brings the interfaces of its own closure, until nothing is left.
//! Else registration escalates `inventory_violation` at the method, naming
//! it, the interface method that runs it and the digest to pin. A package
//! of the module fcd could not read leaves the implementations unknown,
//! which escalates too. Methods of library types are trusted by identity.

use std::collections::BTreeSet;

use fcd_frontends::frontend::Program;
use fcd_frontends::ir::{Escalation, EscalationCode, ReachedCode};
use fcd_frontends::ts::Node;
use fcd_model::effect::Anchor;

use super::index::Index;
use super::pinned::{Bound, Pinned};
use super::scope;
use super::settings::Settings;
use super::syntax::receiver_type;

/// A method of the module an interface call of pinned code may run.
struct Implementation<'a> {
    file: &'a str,
    node: Node<'a>,
    /// `DIR.TYPE.M`, as `source.pinned-functions` spells it.
    key: String,
    /// `TYPE.M`, and its package directory.
    dir: String,
    name: String,
    /// The pin whose closure calls it through an interface.
    caller: String,
}

/// What an implementation comes to.
enum Status {
    Bound,
    /// Pinned by a listed digest: its closure.
    Pinned,
    /// Why it is not bound, and the digest to pin where there is one.
    Unbound(String),
}

/// Every method pinned code runs through an interface is bound.
pub(super) fn check(program: &Program<'_, '_>) -> Result<(), Escalation> {
    if program.env.alone {
        return Ok(());
    }
    for (implementation, status) in walk(program) {
        if let Status::Unbound(why) = status {
            return Err(Escalation::new(
                EscalationCode::InventoryViolation,
                format!(
                    "`{}` runs `{}` ({}:{}) through an interface whose method it calls, and no region reads it: {why}",
                    implementation.caller,
                    implementation.name,
                    implementation.file,
                    implementation.node.line()
                ),
                Some(Anchor::at_line(implementation.file, implementation.node.line())),
            ));
        }
    }
    Ok(())
}

/// The methods pinned code runs through an interface, for `fcd debug
/// region`: how each is covered. Checks nothing.
pub(super) fn reached(program: &Program<'_, '_>) -> Vec<ReachedCode> {
    let index = Index::of(program);
    let pinned = &Settings::of(program.env).pinned_functions;
    let mut out = Vec::new();
    for (implementation, status) in walk(program) {
        let closure = index.closure(&implementation.dir, &implementation.name);
        let covered = match status {
            Status::Bound => "in a region or the closure of a listed pin".to_owned(),
            _ => fcd_frontends::pinned::coverage(pinned.get(&implementation.key), closure.as_ref().ok().map(|c| c.digest.as_str()))
                .unwrap_or("unread: escalates")
                .to_owned(),
        };
        out.push(ReachedCode {
            region: implementation.caller.clone(),
            callee: implementation.key.clone(),
            call: Anchor::at_line(implementation.file, implementation.node.line()),
            covered: format!(
                "`{}` ({}:{}), which `{}` may run through an interface: {covered}",
                implementation.name,
                implementation.file,
                implementation.node.line(),
                implementation.caller
            ),
            digest: closure.as_ref().map(|c| c.digest.clone()).map_err(Clone::clone),
            definitions: closure.map(|c| c.anchors()).unwrap_or_default(),
        });
    }
    out
}

/// Every implementation the listed pins' closures may run through an
/// interface, to a fixpoint, each with what it comes to.
fn walk<'a>(program: &Program<'_, 'a>) -> Vec<(Implementation<'a>, Status)> {
    let index = Index::of(program);
    // The function literals the call path receives, so `DIR.FUNC#NAME` pins have closures too.
    super::pinned::values(program, &index);
    let pinned = &Settings::of(program.env).pinned_functions;
    let listed = |key: &str, c: &Pinned<'_>| pinned.get(key).is_some_and(|digests| digests.contains(&c.digest));
    let mut bound = Bound::of_regions(program);
    let interfaces = interface_methods(&index);
    // The closures of every listed pin this release has: what is read.
    let mut todo: Vec<(String, BTreeSet<String>)> = Vec::new();
    for key in pinned.keys() {
        let Some((dir, name)) = index.unspelled(key) else { continue };
        let Ok(closure) = index.closure(&dir, &name) else { continue };
        if listed(key, &closure) {
            bound.add(&closure);
            todo.push((key.clone(), closure.interface_calls(&interfaces)));
        }
    }
    let mut out: Vec<(Implementation<'a>, Status)> = Vec::new();
    let mut asked: BTreeSet<String> = BTreeSet::new();
    let mut pending: Vec<Implementation<'a>> = Vec::new();
    loop {
        while let Some((caller, methods)) = todo.pop() {
            for method in methods {
                if asked.insert(method.clone()) {
                    pending.extend(declared(&index, &method, &caller));
                }
            }
        }
        // Each pass settles what is covered or pinned; a pinned one's closure
        // may cover others, or call more through interfaces.
        let mut progress = false;
        for implementation in std::mem::take(&mut pending) {
            if bound.covers(implementation.file, implementation.node) {
                out.push((implementation, Status::Bound));
                progress = true;
                continue;
            }
            match index.closure(&implementation.dir, &implementation.name) {
                Ok(c) if listed(&implementation.key, &c) => {
                    bound.add(&c);
                    todo.push((implementation.key.clone(), c.interface_calls(&interfaces)));
                    out.push((implementation, Status::Pinned));
                    progress = true;
                }
                _ => pending.push(implementation),
            }
        }
        if !progress {
            break;
        }
    }
    for implementation in pending {
        let why = match index.whole_module() {
            Err(why) => format!("which methods it may run cannot be told: {why}"),
            Ok(()) => unbound(&index, pinned.get(&implementation.key), &implementation),
        };
        out.push((implementation, Status::Unbound(why)));
    }
    // A package not read may declare more of them.
    if let (Err(why), Some(caller), Some(region)) = (index.whole_module(), asked.first(), program.regions.first()) {
        let implementation =
            Implementation { file: region.file, node: region.node, key: String::new(), dir: String::new(), name: caller.clone(), caller: caller.clone() };
        out.push((implementation, Status::Unbound(format!("which methods pinned code runs through an interface cannot be told: {why}"))));
    }
    out
}

/// Why an implementation no listed pin covers is unbound.
fn unbound(index: &Index<'_, '_>, listed: Option<&Vec<String>>, implementation: &Implementation<'_>) -> String {
    let key = &implementation.key;
    if implementation.name.starts_with('.') {
        return "its receiver's type is not a plain name fcd reads".to_owned();
    }
    match (listed, index.closure(&implementation.dir, &implementation.name)) {
        (Some(_), Ok(c)) => format!(
            "`{key}` is pinned (`source.pinned-functions`), and the release code it reaches has digest {}, which no reviewer listed: \
             read it (`fcd debug region --closure {key}` prints it), and list the digest if it does what the assumptions say",
            c.digest
        ),
        (Some(_), Err(why)) => format!("`{key}` is pinned (`source.pinned-functions`), but {why}"),
        (None, Ok(c)) => format!("read it and pin `{key}` in `source.pinned-functions`, whose closure has digest {}", c.digest),
        (None, Err(why)) => format!("read it and pin `{key}` in `source.pinned-functions`; it cannot be pinned: {why}"),
    }
}

/// Every method declaration named `method` in the module.
fn declared<'a>(index: &Index<'_, 'a>, method: &str, caller: &str) -> Vec<Implementation<'a>> {
    let mut out = Vec::new();
    for (file, syntax) in index.all_files() {
        for m in syntax.root().named_children().filter(|m| m.kind() == "method_declaration") {
            if m.field_child("name").is_none_or(|n| n.text() != method) {
                continue;
            }
            let dir = scope::dir(file).to_owned();
            // A receiver whose type is not read is kept with no type name: it escalates.
            let name = format!("{}.{method}", receiver_type(m).unwrap_or_default());
            let key = index.spelled(&dir, &name);
            out.push(Implementation { file, node: m, key, dir, name, caller: caller.to_owned() });
        }
    }
    out
}

/// The names of the methods every interface type of the module declares.
fn interface_methods(index: &Index<'_, '_>) -> BTreeSet<String> {
    index
        .all_files()
        .flat_map(|(_, syntax)| syntax.root().descendants().filter(|t| t.kind() == "interface_type"))
        .flat_map(|t| t.named_children().filter(|m| m.kind() == "method_elem"))
        .filter_map(|m| m.field_child("name").map(|n| n.text().to_owned()))
        .collect()
}
