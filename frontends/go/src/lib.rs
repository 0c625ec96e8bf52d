//! The Go frontend (tree-sitter-go).
//!
//! Regions are function declarations by name (`T.Method` for a method of
//! `T`, as the methods Go calls by itself are named, [`implicit`]), or the outermost function
//! literal inside one (the handler closure a tool constructor receives). An
//! outermost literal whose whole body is `return func(…) {…}` is a handler
//! factory (`func(deps T) R { return HANDLER }`): the region is the handler it
//! returns, and [`surroundings`] accepts that only where the profile reviews
//! the factory (`factory`).
//! Callee identities are dotted tokens as written (`client.Repositories.Create`),
//! with generic instantiations kept and normalized (`OptionalParam[bool]`).
//! Go's grammar cannot tell `F[T](x)` (an instantiation) from `m[k](x)` (a
//! call of a map value): an index whose text is not type-like is a dynamic callee.
//! What `go build` compiles around the selected files is read before parsing
//! and judged before any region ([`loader`]).

mod ambient;
mod bindings;
mod control;
mod dispatch;
mod facts;
mod function_values;
mod implementations;
mod implicit;
mod index;
pub mod loader;
mod middleware;
mod pinned;
mod receiver;
mod scope;
mod settings;
mod surroundings;
mod syntax;
mod variables;
mod wrappers;

pub use settings::{Handoff, Settings};

use std::collections::{BTreeMap, BTreeSet};

use fcd_frontends::facts::FactSite;
use fcd_frontends::frontend::{Env, Found, Frontend, Lang, Program, Region};
use fcd_frontends::ir::SourceFile;
use fcd_frontends::ir::{Escalation, Identity};
use fcd_frontends::spec::{FactKind, FactSpec, RegionKind};
use fcd_frontends::ts::{Node, Syntax};

use bindings::Bindings;
use facts::Cx;
use scope::Scope;
use syntax::{factory_product, identity, is_call};

/// The Go frontend.
pub struct Go;

impl Frontend for Go {
    fn lang(&self) -> Lang {
        Lang::Go
    }

    fn find_regions<'a>(&self, syntax: &'a Syntax, kind: &RegionKind) -> Vec<Node<'a>> {
        let (RegionKind::Function(name) | RegionKind::Literal(name)) = kind else { return Vec::new() };
        // `T.Method` names the method of that name whose receiver is `T` or `*T`.
        let (receiver, name) = match name.split_once('.') {
            Some((t, m)) => (Some(t), m),
            None => (None, name.as_str()),
        };
        let functions = syntax
            .root()
            .descendants()
            .filter(|n| matches!(n.kind(), "function_declaration" | "method_declaration"))
            .filter(move |n| receiver.is_none_or(|t| n.kind() == "method_declaration" && syntax::receiver_type(*n) == Some(t)))
            .filter(move |n| n.field_child("name").is_some_and(|id| id.text() == name));
        match kind {
            RegionKind::Function(_) => functions.collect(),
            _ => functions
                .flat_map(|f| {
                    f.descendants().filter(move |n| n.kind() == "func_literal" && n.ancestors().take_while(|a| *a != f).all(|a| a.kind() != "func_literal"))
                })
                .map(|literal| factory_product(literal).unwrap_or(literal))
                .collect(),
        }
    }

    /// Every call, `defer` and `go` statements included (their call is a
    /// call expression), with the identity its head resolves to by declaration.
    fn calls<'a>(&self, region: &Region<'a>) -> Vec<(Node<'a>, Identity)> {
        let scope = Scope::of(region);
        let calls = region.node.descendants().filter(|n| is_call(*n)).map(|c| (c, typed(c, scope.resolve(identity(c)))));
        let handed = region.node.descendants().filter(|n| n.kind() == "identifier" && is_value(*n)).filter_map(|n| scope.handed(n.text()).map(|id| (n, id)));
        calls.chain(handed).collect()
    }

    /// Every file counts (`None`) once nothing that decides what compiles
    /// escalates. The libraries (the module's other packages) are judged
    /// only where a pinned closure reads them ([`pinned`]).
    fn loaded(&self, files: &[SourceFile], trees: &[(&str, &Syntax)], _opaque: &[(&str, &str)], env: &Env) -> Result<Option<BTreeSet<String>>, Escalation> {
        loader::check(files.iter().filter(|f| !env.libraries.contains(&f.path)), trees).map(|()| None)
    }

    fn check_region(&self, region: &Region<'_>) -> Result<(), Escalation> {
        surroundings::check(region)
    }

    /// The closed call path into the release's other packages ([`pinned`]),
    /// through the methods a region calls on values of the release's types,
    /// wherever in the module they are declared ([`dispatch`]), through the
    /// methods pinned code calls through an interface ([`implementations`]),
    /// and through the methods Go calls by itself on the release's types ([`implicit`]).
    fn check_program(&self, program: &Program<'_, '_>) -> Result<(), Escalation> {
        pinned::check(program)?;
        dispatch::check(program)?;
        implementations::check(program)?;
        implicit::check(program)
    }

    fn reached(&self, program: &Program<'_, '_>) -> Vec<fcd_frontends::ir::ReachedCode> {
        let mut out = pinned::reached(program);
        for more in [dispatch::reached(program), implementations::reached(program), implicit::reached(program)] {
            out.extend(more.into_iter().filter(|r| !out.iter().any(|o| o.callee == r.callee)).collect::<Vec<_>>());
        }
        out
    }

    fn ambient<'a>(&self, _file: &str, syntax: &'a Syntax) -> Vec<fcd_frontends::ambient::Op<'a>> {
        ambient::ops(syntax)
    }

    fn extract<'a>(&self, region: &Region<'a>, spec: &FactSpec, found: &BTreeMap<String, Found<'a>>) -> Result<Option<Found<'a>>, Escalation> {
        let bindings = Bindings::of(region.node);
        let cx = Cx { site: FactSite { region, spec }, names: &bindings };
        match &spec.kind {
            FactKind::Call { callee, args, keywords, matching } => {
                fcd_frontends::facts::call_fact(&cx, &cx.site, callee, args.as_deref(), keywords.as_ref(), *matching)
            }
            FactKind::Guard { .. } => fcd_frontends::guard::extract(&cx, &cx.site, found),
            FactKind::Default { .. } => fcd_frontends::default::extract(&cx, &cx.site),
            FactKind::Field { .. } => fcd_frontends::field::extract(&cx, &cx.site, found),
            _ => Err(fcd_frontends::facts::unsupported(region, spec, "Go")),
        }
    }

    fn ambient_table(&self) -> &'static fcd_frontends::ambient::Table {
        &ambient::TABLE
    }
}

/// Whether an identifier stands where a value is read and handed on: an
/// argument, an element or value of a composite literal, a returned or
/// assigned value, an operand of `&` or of parentheses. Not a callee, a
/// selector's operand or field, a name being declared or assigned, a key.
fn is_value(n: Node<'_>) -> bool {
    let Some(parent) = n.parent() else { return false };
    match parent.kind() {
        "argument_list" | "parenthesized_expression" | "unary_expression" => true,
        // `{key: value}`: the key of a keyed element names a field (a function cannot key a map).
        "literal_element" => !parent.parent().is_some_and(|k| k.kind() == "keyed_element" && k.named_children().next() == Some(parent)),
        "keyed_element" => parent.named_children().last() == Some(n),
        "expression_list" => {
            let declared = parent.parent().is_some_and(|g| {
                matches!(g.kind(), "assignment_statement" | "short_var_declaration" | "range_clause") && g.field_child("left") == Some(parent)
            });
            !declared
        }
        _ => false,
    }
}

/// An accepted identity with its receiver spelled by its declared type when
/// the head is a parameter bound once ([`receiver`]); anything else unchanged.
pub(crate) fn typed(call: Node<'_>, identity: Identity) -> Identity {
    match &identity {
        Identity::Path(path) => receiver::typed(call, path).map_or(identity, Identity::Path),
        _ => identity,
    }
}
