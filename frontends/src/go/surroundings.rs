//! What surrounds a Go region, checked before its call sites and facts are trusted.
//!
//! A region's facts are read as spelled; they mean what the reviewer meant
//! only when the names in them are Go's and the region is what the tool runs:
//! - no predeclared identifier (`true`, `false`, `nil`, `string`, `len`, …) is
//!   redeclared at package level or anywhere in the enclosing function;
//! - no local of the enclosing function takes the name of an import of the
//!   file, and the file has no dot import (names from it could be anything);
//! - for a handler literal: the tool name appears as a string literal exactly
//!   once in the package, inside the constructor (no other code registers it);
//!   the literal is passed directly to the reviewed constructor call that the
//!   function returns (`via`), not through a wrapper; and every use of the
//!   constructor in the package puts its result, unwrapped, in a list literal.

use crate::ir::{Escalation, EscalationCode, Identity};
use crate::lang::Region;
use crate::ts::Node;

use super::bindings::Bindings;
use super::scope::{self, is_predeclared};

fn at(file: &str, node: Node<'_>, detail: String) -> Escalation {
    Escalation::new(EscalationCode::ShapeMismatch, detail, Some(crate::ir::Anchor::new(file, node.line(), node.end_line(), node.text())))
}

pub fn check(region: &Region<'_>) -> Result<(), Escalation> {
    predeclared(region)?;
    imports(region)?;
    if region.node.kind() == "func_literal" {
        tool_name(region)?;
        via(region)?;
        constructor_uses(region)?;
    }
    Ok(())
}

/// Every name the enclosing function binds, parameters included.
fn local_names<'a>(enclosing: Node<'a>) -> Vec<(String, Node<'a>)> {
    let b = Bindings::of(enclosing);
    let mut out: Vec<(String, Node<'a>)> = b.all().flat_map(|(n, sites)| sites.iter().map(move |s| (n.clone(), *s))).collect();
    if let Some(params) = enclosing.field_child("parameters") {
        for p in params.named_children() {
            out.extend(p.field_children("name").map(|n| (n.text().to_owned(), n)));
        }
    }
    out
}

fn predeclared(region: &Region<'_>) -> Result<(), Escalation> {
    for (name, decls) in scope::package_decls(region) {
        if let Some(d) = decls.first().filter(|_| is_predeclared(&name)) {
            return Err(at(
                d.file,
                d.name,
                format!("the package redeclares the predeclared identifier `{name}`: every use of it in a region means something else"),
            ));
        }
    }
    for (name, node) in local_names(scope::enclosing(region.node)) {
        if is_predeclared(&name) {
            return Err(at(region.file, node, format!("`{name}` is redeclared at line {}, shadowing the predeclared identifier", node.line())));
        }
    }
    Ok(())
}

fn imports(region: &Region<'_>) -> Result<(), Escalation> {
    let root = region.node.ancestors().last().unwrap_or(region.node);
    let imports = scope::imports(root);
    if let Some((_, (path, spec))) = imports.iter().find(|(name, _)| name.as_str() == ".") {
        return Err(at(region.file, *spec, format!("dot import of `{path}`: any unqualified name could come from it")));
    }
    for (name, node) in local_names(scope::enclosing(region.node)) {
        if let Some((path, _)) = imports.get(&name) {
            return Err(at(region.file, node, format!("`{name}` is bound at line {}, shadowing the import of `{path}`", node.line())));
        }
    }
    Ok(())
}

/// The tool name is registered once, by the region's constructor.
fn tool_name(region: &Region<'_>) -> Result<(), Escalation> {
    let tool = region.env.tool.as_str();
    if tool.is_empty() {
        return Ok(());
    }
    let enclosing = scope::enclosing(region.node);
    let here = scope::dir(region.file);
    let mut inside = 0;
    for (path, syntax) in region.trees.iter().filter(|(p, _)| scope::dir(p) == here) {
        for lit in syntax.root().descendants().filter(|n| super::string_content(*n).as_deref() == Some(tool)) {
            if enclosing.contains(lit) {
                inside += 1;
            } else {
                return Err(at(
                    path,
                    lit,
                    format!("the tool name \"{tool}\" also appears at {path}:{}: another function may register or route the tool", lit.line()),
                ));
            }
        }
    }
    match inside {
        1 => Ok(()),
        n => Err(at(
            region.file,
            enclosing,
            format!("the tool name \"{tool}\" appears {n} times in the region's constructor; the profile accepts one registration"),
        )),
    }
}

/// The literal is an argument of the reviewed constructor call the enclosing function returns.
fn via(region: &Region<'_>) -> Result<(), Escalation> {
    let Some(accepted) = region.env.via.get(region.name) else { return Ok(()) };
    let call = region.node.parent().filter(|p| p.kind() == "argument_list").and_then(|l| l.parent()).filter(|c| c.kind() == "call_expression");
    let Some(call) = call else {
        return Err(at(region.file, region.node, "the handler literal is not passed directly as an argument of a call".into()));
    };
    let returned = call.parent().filter(|p| p.kind() == "expression_list").and_then(|l| l.parent()).is_some_and(|r| r.kind() == "return_statement")
        || call.parent().is_some_and(|r| r.kind() == "return_statement");
    let spelled = match super::identity(call) {
        Identity::Path(p) => p,
        other => other.to_string(),
    };
    let base = spelled.split('[').next().unwrap_or(&spelled).to_owned();
    if !accepted.iter().any(|a| *a == spelled || *a == base) || !returned {
        return Err(at(
            region.file,
            call,
            format!(
                "the handler literal goes through `{spelled}`{}, not directly into a returned call of {accepted:?}",
                if returned { "" } else { " (not returned)" }
            ),
        ));
    }
    Ok(())
}

/// Every use of the constructor puts its result, unwrapped, into a list literal.
fn constructor_uses(region: &Region<'_>) -> Result<(), Escalation> {
    let enclosing = scope::enclosing(region.node);
    let Some(name) = enclosing.field_child("name").filter(|_| enclosing.kind() == "function_declaration") else { return Ok(()) };
    let here = scope::dir(region.file);
    for (path, syntax) in region.trees.iter().filter(|(p, _)| scope::dir(p) == here) {
        for use_ in syntax.root().descendants().filter(|n| n.kind() == "identifier" && n.text() == name.text() && *n != name) {
            let call = use_.parent().filter(|c| c.kind() == "call_expression" && c.field_child("function") == Some(use_));
            let listed = call.and_then(|c| c.parent()).is_some_and(|p| p.kind() == "literal_element");
            if !listed {
                return Err(at(
                    path,
                    use_,
                    format!(
                        "`{}` is used at {path}:{} other than as a plain element of a tool list: its tool may be wrapped or routed",
                        name.text(),
                        use_.line()
                    ),
                ));
            }
        }
    }
    Ok(())
}
