//! State a factory keeps for its handlers: a `state:NAME` fact argument.
//!
//! A server built in a factory (`function createServer(dirs) { let allowed
//! = [...dirs]; … server.registerTool("write_file", {…}, async (a) =>
//! validatePath(a.path, allowed)) }`) keeps what its handlers check in a
//! local of the factory, not at module level, so the module-state check of
//! [`super::surroundings`] never sees it. Every handler of the factory, and
//! every function nested in it, can reach that local: one that assigns it,
//! pushes into it or hands it to unread code changes what the reviewed
//! handler checks against, in code no region shows.
//!
//! So a fact argument `state:NAME` matches the name only when a function
//! around the region declares it once, and every use of it in that function
//! (its nested functions included, unless they bind the name themselves) is
//! a reviewed one:
//!
//! - anything inside a region the profile pins with a `body` fact (a reviewer
//!   read its writes: the roots update that replaces the list);
//! - a read: `.length`, a method that only reads an array (`join`,
//!   `includes`, …), a copying spread `[...NAME]`;
//! - the value handed, as a plain argument, to a callee reviewed as only
//!   reading (`source.read-only-callees`), to a function region pinned by a
//!   `body` fact, or to a function pinned with the digest of its closure
//!   (`source.pinned-functions`).
//!
//! Anything else (an assignment, `NAME.push(…)`, `NAME[0] = …`, the array
//! put in an object or returned) escalates `shape_mismatch`, naming the
//! line. What the local starts as (the factory's parameter) is the
//! envelope's to state.

use fcd_frontends::frontend::{Program, Region};
use fcd_frontends::ir::{Escalation, EscalationCode};
use fcd_frontends::spec::{ArgShape, FactKind};
use fcd_frontends::ts::Node;
use fcd_model::effect::Anchor;

use super::FUNCTIONS;
use super::bindings::pattern_names;
use super::loader::{is_package, resolve};
use super::methods::READ_METHODS;
use super::scope::TopLevel;
use super::settings::Settings;
use super::surroundings::handed_to_read_only;
use super::syntax::bare;

/// Checks every `state:NAME` argument of the program's call facts.
pub fn check(program: &Program<'_, '_>) -> Result<(), Escalation> {
    // Two facts of a region naming the same local (move_file's two checks) check it once.
    let mut checked: std::collections::BTreeSet<(&str, &str)> = std::collections::BTreeSet::new();
    for fact in program.facts {
        let FactKind::Call { args: Some(args), .. } = &fact.kind else { continue };
        let Some(region) = program.regions.iter().find(|r| r.name == fact.region) else { continue };
        for name in args.iter().filter_map(|p| if let ArgShape::State(n) = &p.shape { Some(n.as_str()) } else { None }) {
            if !checked.insert((region.name, name)) {
                continue;
            }
            let fail = |line: u32, file: &str, detail: String| {
                Escalation::new(EscalationCode::ShapeMismatch, format!("fact `{}`: `state:{name}` {detail}", fact.name), Some(Anchor::at_line(file, line)))
            };
            let Some(factory) = region.node.ancestors().filter(|a| FUNCTIONS.contains(&a.kind())).find(|f| binds(*f, name)) else {
                return Err(fail(region.node.line(), region.file, format!("names no local of a function around region `{}`", region.name)));
            };
            let declared = declarations(factory, name);
            if params(factory, name) > 0 || declared.len() != 1 {
                return Err(fail(
                    factory.line(),
                    region.file,
                    "is not declared exactly once by the function around the region that binds it (a parameter, or declared twice): which binding a use reads is not fixed"
                        .to_owned(),
                ));
            }
            let check = Uses { program, file: region.file, factory, declared: declared[0], name };
            for used in factory.descendants().filter(|n| matches!(n.kind(), "identifier" | "shorthand_property_identifier") && n.text() == name) {
                if let Err(detail) = check.use_ok(used) {
                    return Err(fail(used.line(), region.file, detail));
                }
            }
        }
    }
    Ok(())
}

struct Uses<'p, 'a, 'e> {
    program: &'p Program<'a, 'e>,
    file: &'a str,
    factory: Node<'a>,
    /// The factory's one declaration of the name.
    declared: Node<'a>,
    name: &'p str,
}

impl Uses<'_, '_, '_> {
    /// Whether one use of the name in the factory is reviewed; `Err` says why not.
    fn use_ok(&self, used: Node<'_>) -> Result<(), String> {
        // A nested function binding the name itself is another variable.
        if used.ancestors().take_while(|a| *a != self.factory).any(|f| FUNCTIONS.contains(&f.kind()) && binds(f, self.name)) {
            return Ok(());
        }
        if self.pinned_region(|r| r.file == self.file && r.node.contains(used)) {
            return Ok(());
        }
        let Some(parent) = used.parent() else { return Ok(()) };
        let what = parent.compact_text();
        // Why a callee the value is handed to is not reviewed code, with the digest to read.
        let mut unpinned = String::new();
        let reviewed = match parent.kind() {
            "variable_declarator" => used == self.declared,
            "spread_element" => parent.parent().is_some_and(|a| a.kind() == "array"),
            "member_expression" if parent.field_child("object") == Some(used) => {
                let member = parent.field_child("property").map(|p| p.text()).unwrap_or_default();
                member == "length"
                    || (READ_METHODS.contains(&member)
                        && parent.parent().is_some_and(|c| c.kind() == "call_expression" && c.field_child("function") == Some(parent)))
            }
            "arguments" if handed_to_read_only(&Settings::of(self.program.env).read_only_callees, used) => true,
            "arguments" => match self.handed_to_reviewed(parent) {
                Ok(reviewed) => reviewed,
                Err(why) => {
                    unpinned = format!(": {why}");
                    false
                }
            },
            _ => false,
        };
        if reviewed {
            return Ok(());
        }
        Err(format!(
            "is used outside the reviewed regions in a way that may change it (`{}`){unpinned}; only a region pinned by a `body` fact may write it",
            what.chars().take(80).collect::<String>()
        ))
    }

    /// Whether a region the profile pins with a `body` fact satisfies `holds`.
    fn pinned_region(&self, holds: impl Fn(&Region<'_>) -> bool) -> bool {
        self.program.regions.iter().any(|r| holds(r) && self.program.facts.iter().any(|f| f.region == r.name && matches!(f.kind, FactKind::Body { .. })))
    }

    /// Whether the call whose argument list is `args` calls, by a plain name
    /// no function around it binds, a function region pinned by a `body`
    /// fact or a function pinned by the digest of its closure. `Err` says
    /// what a reviewer could pin.
    fn handed_to_reviewed(&self, args: Node<'_>) -> Result<bool, String> {
        let Some(call) = args.parent().filter(|c| c.kind() == "call_expression" && c.field_child("arguments") == Some(args)) else { return Ok(false) };
        let Some(callee) = call.field_child("function").map(bare).filter(|f| f.kind() == "identifier") else { return Ok(false) };
        let name = callee.text();
        if call.ancestors().filter(|a| FUNCTIONS.contains(&a.kind())).any(|f| binds(f, name)) {
            return Ok(false);
        }
        // The file and top-level name the call reaches: its own declaration, or an import of the release.
        let Some((_, syntax)) = self.program.trees.iter().find(|(f, _)| *f == self.file) else { return Ok(false) };
        let top = TopLevel::of(syntax.root());
        let known: std::collections::BTreeSet<&str> = self.program.trees.iter().map(|(f, _)| *f).collect();
        let (home, definition) = match top.imports.get(name) {
            Some((spec, _)) if is_package(spec) => return Ok(false),
            Some((spec, orig)) => match resolve(self.file, spec, &known) {
                Some(home) => (home, orig.clone()),
                None => return Ok(false),
            },
            None if top.declared.contains(name) => (self.file.to_owned(), name.to_owned()),
            None => return Ok(false),
        };
        let region = |r: &Region<'_>| {
            r.file == home
                && super::closure::function_name(r.node).as_deref() == Some(definition.as_str())
                && r.node.parent().is_some_and(|p| matches!(p.kind(), "program" | "export_statement" | "lexical_declaration" | "variable_declaration"))
        };
        if self.pinned_region(region) {
            return Ok(true);
        }
        let Some(home) = known.get(home.as_str()).copied() else { return Ok(false) };
        let closure = super::pinned::closure(self.program, home, &definition).map_err(|why| format!("`{definition}` cannot be pinned: {why}"))?;
        match Settings::of(self.program.env).pinned_functions.get(&definition) {
            Some(digests) if digests.contains(&closure.digest) => {
                closure.check_uses(self.program).map(|()| true).map_err(|why| format!("`{definition}` is pinned, but {why}"))
            }
            _ => Err(format!(
                "`{definition}`, which it is handed to, is neither a region pinned by a `body` fact nor pinned: the code it reaches has digest {}",
                closure.digest
            )),
        }
    }
}

/// Whether `function` binds `name` itself: a parameter or a declaration of its own.
fn binds(function: Node<'_>, name: &str) -> bool {
    params(function, name) > 0 || !declarations(function, name).is_empty()
}

/// The parameters of `function` named `name` (0 or 1).
fn params(function: Node<'_>, name: &str) -> usize {
    let mut names = Vec::new();
    if let Some(ps) = function.field_child("parameters") {
        for p in ps.named_children() {
            pattern_names(p, &mut names);
        }
    }
    if let Some(p) = function.field_child("parameter") {
        pattern_names(p, &mut names);
    }
    names.iter().filter(|n| n.text() == name).count()
}

/// The names `function` itself declares as `name` (a declarator, a nested
/// function's or class's name, a `catch` parameter), its nested functions'
/// own declarations aside.
fn declarations<'a>(function: Node<'a>, name: &str) -> Vec<Node<'a>> {
    let own = |n: Node<'a>| n.ancestors().find(|a| FUNCTIONS.contains(&a.kind())) == Some(function);
    let mut out = Vec::new();
    for n in function.descendants().filter(|n| *n != function && own(*n)) {
        let mut names = Vec::new();
        match n.kind() {
            "variable_declarator" => {
                if let Some(p) = n.field_child("name") {
                    pattern_names(p, &mut names);
                }
            }
            "catch_clause" => {
                if let Some(p) = n.field_child("parameter") {
                    pattern_names(p, &mut names);
                }
            }
            _ => {}
        }
        out.extend(names.into_iter().filter(|i| i.text() == name));
    }
    // A nested function or class declaration binds its name in `function`.
    for n in function.descendants().filter(|n| matches!(n.kind(), "function_declaration" | "generator_function_declaration" | "class_declaration")) {
        let outer = n.ancestors().find(|a| FUNCTIONS.contains(&a.kind()));
        if outer == Some(function)
            && let Some(i) = n.field_child("name").filter(|i| i.text() == name)
        {
            out.push(i);
        }
    }
    out
}
