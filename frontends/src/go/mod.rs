//! The Go frontend (tree-sitter-go).
//!
//! Regions are function declarations by name, or the outermost function
//! literal inside one (the handler closure a tool constructor receives). An
//! outermost literal whose whole body is `return func(…) {…}` is a handler
//! factory (`func(deps T) R { return HANDLER }`): the region is the handler it
//! returns, and [`surroundings`] accepts that only where the profile reviews
//! the factory (`factory`).
//! Callee identities are dotted tokens as written (`client.Repositories.Create`),
//! with generic instantiations kept and normalized (`OptionalParam[bool]`).
//! Go's grammar cannot tell `F[T](x)` (an instantiation) from `m[k](x)` (a
//! call of a map value): an index whose text is not type-like is a dynamic callee.

mod ambient;
mod bindings;
mod control;
mod facts;
mod loader;
mod receiver;
mod scope;
mod surroundings;

use std::collections::BTreeMap;

use crate::facts::FactSite;
use crate::frontend::{Env, Found, Frontend, Region};
use crate::ir::SourceFile;
use crate::ir::{Escalation, Identity};
use crate::spec::{FactKind, FactSpec, RegionKind};
use crate::ts::{Node, Syntax};
use fcd_model::effect::FactValue;

use bindings::Bindings;
use facts::Cx;
use scope::Scope;

/// The Go frontend.
pub struct Go;

impl Frontend for Go {
    fn find_regions<'a>(&self, syntax: &'a Syntax, kind: &RegionKind) -> Vec<Node<'a>> {
        let (RegionKind::Function(name) | RegionKind::Literal(name)) = kind else { return Vec::new() };
        let functions = syntax
            .root()
            .descendants()
            .filter(|n| matches!(n.kind(), "function_declaration" | "method_declaration"))
            .filter(|n| n.field_child("name").is_some_and(|id| id.text() == name));
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
        region.node.descendants().filter(|n| is_call(*n)).map(|c| (c, typed(c, scope.resolve(identity(c))))).collect()
    }

    fn check_package(&self, files: &[SourceFile], trees: &[(&str, &Syntax)], _env: &Env) -> Result<(), Escalation> {
        loader::check(files, trees)
    }

    fn check_region(&self, region: &Region<'_>) -> Result<(), Escalation> {
        surroundings::check(region)
    }

    fn ambient<'a>(&self, _file: &str, syntax: &'a Syntax) -> Vec<crate::ambient::Op<'a>> {
        ambient::ops(syntax)
    }

    fn extract<'a>(&self, region: &Region<'a>, spec: &FactSpec, found: &BTreeMap<String, Found<'a>>) -> Result<Option<Found<'a>>, Escalation> {
        let bindings = Bindings::of(region.node);
        let cx = Cx { site: FactSite { region, spec }, names: &bindings };
        match &spec.kind {
            FactKind::Call { callee, args, keywords, matching } => {
                crate::facts::call_fact(&cx, &cx.site, callee, args.as_deref(), keywords.as_ref(), *matching)
            }
            FactKind::Guard { .. } => crate::guard::extract(&cx, &cx.site, found),
            FactKind::Default { .. } => crate::default::extract(&cx, &cx.site),
            FactKind::Field { .. } => crate::field::extract(&cx, &cx.site, found),
            _ => Err(crate::facts::unsupported(region, spec, "Go")),
        }
    }
}

fn is_call(n: Node<'_>) -> bool {
    matches!(n.kind(), "call_expression" | "type_conversion_expression")
}

/// Whether a type argument list's text names types, not values.
fn type_like(text: &str) -> bool {
    text.split(',').map(str::trim).all(|part| {
        let part = part.trim_start_matches(['*', '[', ']']);
        let last = part.rsplit('.').next().unwrap_or(part);
        scope::PREDECLARED_TYPES.contains(&part) || last.chars().next().is_some_and(char::is_uppercase) || part.starts_with("map[")
    })
}

/// A dotted token for an operand chain, or `None` when its root is not a name.
fn dotted(n: Node<'_>) -> Option<String> {
    match n.kind() {
        "identifier" | "package_identifier" | "type_identifier" | "field_identifier" => Some(n.text().to_owned()),
        "selector_expression" => Some(format!("{}.{}", dotted(n.field_child("operand")?)?, n.field_child("field")?.text())),
        "qualified_type" => Some(n.compact_text()),
        "call_expression" => Some(format!("{}()", dotted(n.field_child("function")?)?)),
        "parenthesized_expression" => dotted(n.named_children().find(|c| c.kind() != "comment")?),
        "index_expression" => {
            let index = n.field_child("index")?;
            type_like(index.text()).then(|| Some(format!("{}[{}]", dotted(n.field_child("operand")?)?, index.compact_text())))?
        }
        _ => None,
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

/// The identity of a call site's callee.
pub(crate) fn identity(call: Node<'_>) -> Identity {
    if call.kind() == "type_conversion_expression" {
        let Some(ty) = call.field_child("type") else { return Identity::Dynamic("a conversion without a type".into()) };
        let args = ty.field_child("type_arguments").map(|a| a.text().trim_matches(['[', ']']).to_owned());
        return match args {
            Some(a) if !type_like(&a) => Identity::Dynamic(format!("calls an indexed value (`{}`)", ty.compact_text())),
            _ => Identity::Path(ty.compact_text()),
        };
    }
    let Some(function) = call.field_child("function") else { return Identity::Dynamic("a call without a callee".into()) };
    match function.kind() {
        "func_literal" => Identity::Path("func()".into()),
        "call_expression" => Identity::Dynamic(format!("calls the result of `{}`", function.compact_text())),
        "index_expression" if !function.field_child("index").is_some_and(|i| type_like(i.text())) => {
            Identity::Dynamic(format!("calls an indexed value (`{}`)", function.compact_text()))
        }
        "identifier" | "selector_expression" | "index_expression" | "parenthesized_expression" => match dotted(function) {
            Some(path) => Identity::Path(path),
            None => Identity::Unresolved(function.compact_text()),
        },
        other => Identity::Dynamic(format!("calls a {other} (`{}`)", function.compact_text())),
    }
}

/// The statement holding a node, for messages.
fn enclosing_statement(n: Node<'_>) -> Node<'_> {
    std::iter::once(n).chain(n.ancestors()).find(|a| a.kind().ends_with("_statement") || a.kind() == "short_var_declaration").unwrap_or(n)
}

/// A function's statements, comments left out (the body's own statement list unwrapped).
fn statements(function: Node<'_>) -> Vec<Node<'_>> {
    let mut statements: Vec<Node<'_>> =
        function.field_child("body").map(|b| b.named_children().filter(|c| c.kind() != "comment").collect()).unwrap_or_default();
    if let [list] = statements.as_slice()
        && list.kind() == "statement_list"
    {
        statements = list.named_children().filter(|c| c.kind() != "comment").collect();
    }
    statements
}

/// The operands of a `return` statement, comments left out.
fn returned(ret: Node<'_>) -> Vec<Node<'_>> {
    ret.named_children()
        .filter(|c| c.kind() != "comment")
        .flat_map(|c| if c.kind() == "expression_list" { c.named_children().filter(|o| o.kind() != "comment").collect() } else { vec![c] })
        .collect()
}

/// The literal a function literal makes when its one statement is `return
/// func(…) {…}`: the handler of a factory. `None` for any other body.
pub(crate) fn factory_product(literal: Node<'_>) -> Option<Node<'_>> {
    let body = statements(literal);
    let [ret] = body.as_slice() else { return None };
    if ret.kind() != "return_statement" {
        return None;
    }
    match returned(*ret).as_slice() {
        [product] if product.kind() == "func_literal" => Some(*product),
        _ => None,
    }
}

/// A call's arguments, comments left out.
fn arguments(call: Node<'_>) -> Vec<Node<'_>> {
    call.items("arguments")
}

/// The content of a string literal (interpreted without escapes, or raw).
pub(crate) fn string_content(n: Node<'_>) -> Option<String> {
    match n.kind() {
        "interpreted_string_literal" => {
            let inner = n.text().strip_prefix('"')?.strip_suffix('"')?;
            (!inner.contains('\\')).then(|| inner.to_owned())
        }
        "raw_string_literal" => Some(n.text().strip_prefix('`')?.strip_suffix('`')?.to_owned()),
        _ => None,
    }
}

/// A literal's value: booleans, integers and strings.
fn literal(n: Node<'_>) -> Option<FactValue> {
    match n.kind() {
        "true" => Some(FactValue::Bool(true)),
        "false" => Some(FactValue::Bool(false)),
        "int_literal" => n.text().replace('_', "").parse().ok().map(FactValue::Int),
        _ => string_content(n).map(FactValue::Text),
    }
}
