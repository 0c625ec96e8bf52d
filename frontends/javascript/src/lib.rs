//! The JavaScript/TypeScript frontend (tree-sitter-javascript, tree-sitter-typescript).
//!
//! One frontend reads both an npm package's bundled, non-minified `dist/*.js`
//! and the TypeScript source of a git tag: the node kinds that matter are
//! shared, and TypeScript-only wrappers (`x as T`, `x!`, `satisfies`) are
//! looked through. Regions are function declarations (or functions bound to a
//! `const`), methods of a module-level class (`Class.method`) and
//! module-level variables holding data tables. Callee identities
//! are dotted tokens, `a?.b` read as `a.b`, `m[k].f` as `m[].f`, with a
//! receiver spelled by what it is where its one binding says so (a local
//! bound once by its declaration stands for its value, a typed parameter for
//! its type), so renaming a local changes no identity; calling an indexed
//! value, a call's result or `eval` is dynamic.

mod ambient;
mod bindings;
mod closure;
mod control;
mod dispatch;
mod facts;
pub mod loader;
mod members;
mod methods;
mod pinned;
mod reads;
mod route;
mod scope;
mod settings;
mod state;
mod surroundings;
mod syntax;
mod transport;

pub use settings::Settings;

use std::collections::{BTreeMap, BTreeSet};

use fcd_frontends::facts::FactSite;
use fcd_frontends::frontend::{Env, Found, Frontend, Lang, Program, Region};
use fcd_frontends::ir::{Escalation, Identity, SourceFile};
use fcd_frontends::spec::{FactKind, FactSpec, RegionKind};
use fcd_frontends::ts::{Node, Syntax};

use facts::Cx;
use route::{registered_callback, registration_of};
use scope::Scope;
use syntax::{constructor, identity, implicit, iterated_call, iterated_value, iterator_of, string_content};

/// The JavaScript/TypeScript frontend.
pub struct JavaScript;

pub(crate) const FUNCTIONS: &[&str] =
    &["function_declaration", "generator_function_declaration", "function_expression", "arrow_function", "function", "method_definition"];

/// The methods `Class.method` names: each `method` member with a body of each
/// module-level `class Class` (several, or a field of that name beside the
/// method, make the region ambiguous: which one runs is not what was read).
fn class_methods<'a>(syntax: &'a Syntax, name: &str) -> Vec<Node<'a>> {
    // `static Class.method` names the static method `Class.method(…)` runs;
    // `Class.method` the instance method an object of the class runs.
    let (statics, name) = match name.strip_prefix("static ") {
        Some(rest) => (true, rest),
        None => (false, name),
    };
    let Some((class, method)) = name.split_once('.') else { return Vec::new() };
    syntax
        .root()
        .descendants()
        .filter(|n| match n.kind() {
            "class_declaration" => n.field_child("name").is_some_and(|id| id.text() == class),
            // `var Class = class {…}`, as bundlers write a class.
            "class" => {
                n.field_child("name").is_none()
                    && n.parent().is_some_and(|d| d.kind() == "variable_declarator" && d.field_child("name").is_some_and(|id| id.text() == class))
            }
            _ => false,
        })
        .filter_map(|c| c.field_child("body"))
        .flat_map(|body| body.named_children().filter(|m| class_member_name(*m).as_deref() == Some(method) && is_static(*m) == statics).collect::<Vec<_>>())
        .collect()
}

/// Whether a class member is `static`.
pub(crate) fn is_static(member: Node<'_>) -> bool {
    member.children().take_while(|c| Some(*c) != member.field_child("name")).any(|c| c.kind() == "static")
}

/// The name of a class member: a method, accessor or field.
pub(crate) fn class_member_name(member: Node<'_>) -> Option<String> {
    let name = match member.kind() {
        "method_definition" | "abstract_method_signature" | "method_signature" => member.field_child("name"),
        "field_definition" => member.field_child("property"),
        "public_field_definition" => member.field_child("name"),
        _ => None,
    }?;
    Some(string_content(name).unwrap_or_else(|| name.text().to_owned()))
}

impl Frontend for JavaScript {
    fn lang(&self) -> Lang {
        Lang::JavaScript
    }

    fn find_regions<'a>(&self, syntax: &'a Syntax, kind: &RegionKind) -> Vec<Node<'a>> {
        match kind {
            RegionKind::Function(name) if name.contains('.') => class_methods(syntax, name),
            RegionKind::Function(name) => syntax
                .root()
                .descendants()
                .filter(|n| {
                    let named = |f: Node<'_>| f.field_child("name").is_some_and(|id| id.text() == name);
                    match n.kind() {
                        "function_declaration" | "generator_function_declaration" => named(*n),
                        // `const name = function () {…}` or `= () => {…}`
                        "variable_declarator" => named(*n) && n.field_child("value").is_some_and(|v| FUNCTIONS.contains(&v.kind())),
                        _ => false,
                    }
                })
                .collect(),
            RegionKind::Variable(name) => syntax
                .root()
                .descendants()
                .filter(|n| n.kind() == "variable_declarator" && n.field_child("name").is_some_and(|id| id.text() == name))
                .filter(|n| n.ancestors().all(|a| !FUNCTIONS.contains(&a.kind()) && a.kind() != "class_body"))
                .collect(),
            RegionKind::Callback(tool) => syntax.root().descendants().filter_map(|n| registered_callback(n, tool)).collect(),
            RegionKind::Case(tool) => syntax.root().descendants().filter_map(|n| route::tool_case(n, tool)).collect(),
            RegionKind::Literal(_) | RegionKind::Route(_) => Vec::new(),
        }
    }

    fn calls<'a>(&self, region: &Region<'a>) -> Vec<(Node<'a>, Identity)> {
        let scope = Scope::of(region);
        // A registered callback or dispatcher runs as its registering call decides: that
        // call is reviewed too. A dispatcher case runs with the handler's statements
        // around the `switch`, and those are its code; other clauses are not.
        let registration = registration_of(region.node).or_else(|| route::case_registration(region.node));
        // What the registering call is handed besides the handler (a request schema) is reviewed too.
        let handed = registration.into_iter().flat_map(|call| {
            let args = syntax::arguments(call);
            let n = args.len().saturating_sub(1);
            args.into_iter().take(n).filter_map(|a| match scope.resolve(Identity::Path(syntax::dotted(syntax::bare(a))?)) {
                Identity::Path(p) => Some((a, Identity::Path(format!("handed {p}")))),
                other => Some((a, other)),
            })
        });
        let code = route::owner(region.node);
        registration
            .map(|call| (call, scope.module_call(identity(call), call)))
            .into_iter()
            .chain(handed)
            .chain(code.descendants().filter(|n| route::runs_for_case(region.node, *n)).filter_map(|n| match n.kind() {
                "call_expression" => Some((n, scope.resolve_at(identity(n), Some(n)))),
                "new_expression" => Some((n, scope.resolve_at(constructor(n), Some(n)))),
                // The iterator's identity follows its call's: a shadowed callee stays unresolved.
                "for_in_statement" | "spread_element" if iterated_call(n).is_some() => {
                    iterated_call(n).map(|call| (n, iterator_of(scope.resolve_at(identity(call), Some(call)))))
                }
                // Iterating a name or member chain: the iterator of what it is.
                _ => match iterated_value(n).map(|v| (v, syntax::dotted(v))) {
                    Some((v, Some(path))) => Some((n, scope.resolve_at(Identity::Path(format!("{path}[Symbol.iterator]")), Some(v)))),
                    _ => implicit(n).map(|why| (n, Identity::Dynamic(why))),
                },
            }))
            .collect()
    }

    /// Only what the package's entries import, when its manifest names them.
    fn loaded(&self, _files: &[SourceFile], trees: &[(&str, &Syntax)], opaque: &[(&str, &str)], env: &Env) -> Result<Option<BTreeSet<String>>, Escalation> {
        let program = Program { regions: &[], calls: &[], facts: &[], trees, env, opaque, library: &[], library_unparsed: &[] };
        let reviewed = |file: &str, node: Node<'_>| pinned::pinned_around(&program, file, node);
        env.entries.as_ref().map(|entries| loader::loaded(entries, trees, opaque, &reviewed)).transpose()
    }

    fn ambient<'a>(&self, _file: &str, syntax: &'a Syntax) -> Vec<fcd_frontends::ambient::Op<'a>> {
        ambient::ops(syntax, ambient::TABLE.writes_first_argument)
    }

    fn pinned_code(&self, program: &Program<'_, '_>, file: &str, node: Node<'_>) -> Result<(), String> {
        pinned::pinned_around(program, file, node)
    }

    fn check_program(&self, program: &Program<'_, '_>) -> Result<(), Escalation> {
        surroundings::check(program.trees, program.opaque, program.regions)?;
        route::check_unique(program.trees, program.regions)?;
        state::check(program)?;
        transport::check(program.trees)?;
        closure::check(program)
    }

    fn reached(&self, program: &Program<'_, '_>) -> Vec<fcd_frontends::ir::ReachedCode> {
        closure::reached(program)
    }

    fn extract<'a>(&self, region: &Region<'a>, spec: &FactSpec, found: &BTreeMap<String, Found<'a>>) -> Result<Option<Found<'a>>, Escalation> {
        let scope = Scope::of(region);
        let cx = Cx { site: FactSite { region, spec }, names: &scope };
        match &spec.kind {
            FactKind::Call { callee, args, keywords, matching } => {
                fcd_frontends::facts::call_fact(&cx, &cx.site, callee, args.as_deref(), keywords.as_ref(), *matching)
            }
            FactKind::Guard { .. } => fcd_frontends::guard::extract(&cx, &cx.site, found),
            FactKind::Default { .. } => fcd_frontends::default::extract(&cx, &cx.site),
            FactKind::Field { .. } => fcd_frontends::field::extract(&cx, &cx.site, found),
            FactKind::Table { row, member } => cx.table_fact(row, member),
            FactKind::Exit { returns, conditions } => cx.exit_fact(returns, conditions),
            _ => Err(fcd_frontends::facts::unsupported(region, spec, "JavaScript")),
        }
    }

    fn ambient_table(&self) -> &'static fcd_frontends::ambient::Table {
        &ambient::TABLE
    }
}
