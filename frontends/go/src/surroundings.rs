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
//!   function returns (`via`), or returned beside it as the constructor's
//!   only statement (`beside`), not through a wrapper; and every use of the
//!   constructor in the package puts its result, unwrapped, in a list
//!   literal, or whole into a reviewed wrapper (`wrapped-by`) whose result
//!   goes into a list or a reviewed registration method (`registered-by`),
//!   or, without a wrapper, is the whole argument list of such a method.

use fcd_frontends::frontend::Region;
use fcd_frontends::ir::{Escalation, EscalationCode, Identity};
use fcd_frontends::ts::Node;

use super::bindings::Bindings;
use super::scope::{self, is_predeclared};
use super::settings::{Handoff, Settings};

fn at(file: &str, node: Node<'_>, detail: String) -> Escalation {
    Escalation::new(EscalationCode::ShapeMismatch, detail, Some(fcd_model::effect::Anchor::new(file, node.line(), node.end_line(), node.text())))
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
        for lit in syntax.root().descendants().filter(|n| super::syntax::string_content(*n).as_deref() == Some(tool)) {
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

/// The literal reaches the tool the way the profile reviewed: passed directly
/// to the constructor call the enclosing function returns (`via`), or
/// returned beside one as the function's one statement (`beside`).
fn via(region: &Region<'_>) -> Result<(), Escalation> {
    let handoff = Settings::of(region.env).handoff.get(region.name);
    let handed = factory(region, handoff)?;
    let Some(handoff) = handoff else { return Ok(()) };
    if !handoff.beside.is_empty() {
        return beside(region, handoff);
    }
    let accepted = &handoff.via;
    if accepted.is_empty() {
        return Ok(());
    }
    let call = handed.parent().filter(|p| p.kind() == "argument_list").and_then(|l| l.parent()).filter(|c| c.kind() == "call_expression");
    let Some(call) = call else {
        return Err(at(region.file, handed, "the handler literal is not passed directly as an argument of a call".into()));
    };
    let returned = call.parent().filter(|p| p.kind() == "expression_list").and_then(|l| l.parent()).is_some_and(|r| r.kind() == "return_statement")
        || call.parent().is_some_and(|r| r.kind() == "return_statement");
    let spelled = spelled(call);
    if !reviewed_call(accepted, &spelled) || !returned {
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

/// What is handed to the constructor call: the region's literal, or the
/// factory literal that returns it when the profile reviews the factory's
/// result type (`factory`, with `via`). A factory the profile does not
/// review, or one with a result type it does not list, escalates: the code
/// that turns the factory into a handler is not what the reviewer read; and
/// where the profile reviews a factory, a literal handed over without one
/// escalates too (that is another shape).
fn factory<'a>(region: &Region<'a>, handoff: Option<&Handoff>) -> Result<Node<'a>, Escalation> {
    let accepted = handoff.map(|h| h.factory.as_slice()).unwrap_or_default();
    let outer = region.node.ancestors().find(|a| a.kind() == "func_literal");
    let Some(outer) = outer.filter(|o| super::syntax::factory_product(*o) == Some(region.node)) else {
        return match accepted {
            [] => Ok(region.node),
            _ => Err(at(region.file, region.node, format!("the handler literal is handed over itself, not returned by a factory of {accepted:?}"))),
        };
    };
    let result = outer.field_child("result").map(|r| r.compact_text()).unwrap_or_default();
    if accepted.is_empty() || handoff.is_some_and(|h| h.via.is_empty()) {
        return Err(at(
            region.file,
            outer,
            format!("the handler literal is returned by a factory literal (result `{result}`) that the profile does not review (`factory`, with `via`)"),
        ));
    }
    if !reviewed_call(accepted, &result) {
        return Err(at(region.file, outer, format!("the handler factory's result type `{result}` is not one of {accepted:?}")));
    }
    // The result type's package, as the file imports it.
    if let Some((package, _)) = result.split_once('.') {
        let root = outer.ancestors().last().unwrap_or(outer);
        let imports = scope::imports(root);
        if !imports.get(package).is_some_and(|(p, _)| Settings::of(region.env).accepts_import(package, p)) {
            return Err(at(
                region.file,
                outer,
                format!("the handler factory's result type `{result}`: `{package}` is not imported from a path [imports] accepts"),
            ));
        }
    }
    Ok(outer)
}

/// A call's callee as spelled, for matching against the profile's lists.
fn spelled(call: Node<'_>) -> String {
    match super::syntax::identity(call) {
        Identity::Path(p) => p,
        other => other.to_string(),
    }
}

/// Whether a spelled callee is one of `accepted`, type arguments aside.
fn reviewed_call(accepted: &[String], spelled: &str) -> bool {
    let base = spelled.split('[').next().unwrap_or(spelled);
    accepted.iter().any(|a| a == spelled || a == base)
}

/// `return CALL(…), func(…) {…}` is the constructor's only statement, CALL one
/// of `beside`: the tool and its handler leave together, and no other
/// statement (a `defer` that rewrites a named result, an early return of
/// another handler) runs in the constructor. Either operand may instead be a
/// local the constructor binds just before, once, with `:=`: the tool to such
/// a call or to a composite literal of a `beside` type (`mcp.Tool{…}`), the
/// handler to a `converted-by` call whose only argument is the literal.
fn beside(region: &Region<'_>, handoff: &Handoff) -> Result<(), Escalation> {
    let accepted = &handoff.beside;
    let fail = |n: Node<'_>, why: &str| Err(at(region.file, n, format!("the handler literal is not returned beside a call of {accepted:?}: {why}")));
    let enclosing = scope::enclosing(region.node);
    let statements = super::syntax::statements(enclosing);
    let Some((ret, declarations)) = statements.split_last().filter(|(r, _)| r.kind() == "return_statement") else {
        return fail(enclosing, "the constructor does not end in a return");
    };
    // Each earlier statement binds one fresh name to one value with `:=`.
    let mut locals: Vec<(String, Node<'_>)> = Vec::new();
    for d in declarations {
        let one = |field: &str| d.field_child(field).map(|l| l.named_children().filter(|c| c.kind() != "comment").collect::<Vec<_>>());
        match (d.kind(), one("left").as_deref(), one("right").as_deref()) {
            ("short_var_declaration", Some([name]), Some([value])) if name.kind() == "identifier" && !locals.iter().any(|(n, _)| n == name.text()) => {
                locals.push((name.text().to_owned(), *value));
            }
            _ => return fail(*d, "the constructor has other statements than `NAME := VALUE` bindings and that return"),
        }
    }
    let operands = super::syntax::returned(*ret);
    let [tool, handler] = operands.as_slice() else {
        return fail(*ret, "the return is not exactly the tool and the handler, in that order");
    };
    let bound = |n: Node<'_>| (n.kind() == "identifier").then(|| locals.iter().find(|(name, _)| name == n.text()).map(|(_, v)| *v)).flatten();
    let tool_value = bound(*tool).unwrap_or(*tool);
    let tool_ok = match tool_value.kind() {
        "call_expression" => reviewed_call(accepted, &spelled(tool_value)),
        "composite_literal" => tool_value.field_child("type").is_some_and(|t| accepted.contains(&t.compact_text())),
        _ => false,
    };
    let handler_value = bound(*handler).unwrap_or(*handler);
    let handler_ok = handler_value == region.node || {
        let is_conversion = matches!(handler_value.kind(), "call_expression" | "type_conversion_expression");
        let args: Vec<Node<'_>> = match handler_value.kind() {
            "call_expression" => super::syntax::arguments(handler_value),
            _ => handler_value.field_child("operand").into_iter().collect(),
        };
        is_conversion && args.as_slice() == [region.node] && reviewed_call(&handoff.converted_by, &spelled(handler_value))
    };
    let used = [*tool, *handler].iter().filter(|o| bound(**o).is_some()).count();
    if !tool_ok || !handler_ok || used != locals.len() {
        return fail(*ret, "the return is not the reviewed tool and the handler literal (or locals bound to them), in that order");
    }
    Ok(())
}

/// Every use of the constructor puts its result, unwrapped, into a list
/// literal; or, when the profile reviews a wrapper (`wrapped-by`), whole into
/// that wrapper, whose own result is then a list element or an argument of a
/// reviewed registration method (`registered-by`); or, with `registered-by`
/// alone, whole as the argument list of such a method (`s.AddTool(C(…))`). A wrapper's package name
/// must be imported from a path `[imports]` accepts.
fn constructor_uses(region: &Region<'_>) -> Result<(), Escalation> {
    let enclosing = scope::enclosing(region.node);
    let Some(name) = enclosing.field_child("name").filter(|_| enclosing.kind() == "function_declaration") else { return Ok(()) };
    let handoff = Settings::of(region.env).handoff.get(region.name);
    let here = scope::dir(region.file);
    for (path, syntax) in region.trees.iter().filter(|(p, _)| scope::dir(p) == here) {
        for use_ in syntax.root().descendants().filter(|n| n.kind() == "identifier" && n.text() == name.text() && *n != name) {
            let call = use_.parent().filter(|c| c.kind() == "call_expression" && c.field_child("function") == Some(use_));
            let listed = call.and_then(|c| c.parent()).is_some_and(|p| p.kind() == "literal_element");
            let wrapped = match (call, handoff) {
                (Some(call), Some(h)) if !h.wrapped_by.is_empty() => wrapped_and_registered(region, syntax.root(), call, h),
                (Some(call), Some(h)) if !h.registered_by.is_empty() => registered(call, h),
                _ => false,
            };
            if !listed && !wrapped {
                return Err(at(
                    path,
                    use_,
                    format!(
                        "`{}` is used at {path}:{} other than as a plain element of a tool list{}: its tool may be wrapped or routed",
                        name.text(),
                        use_.line(),
                        match handoff {
                            Some(h) if !h.wrapped_by.is_empty() => " or through a reviewed wrapper",
                            Some(h) if !h.registered_by.is_empty() => " or the whole argument list of a reviewed registration method",
                            _ => "",
                        }
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// `RECEIVER.METHOD(CONSTRUCTOR(…))`: the constructor's results are the
/// registration method's whole argument list (Go passes a multi-value call's
/// results as the arguments), METHOD one of `registered-by`; no wrapper between.
fn registered(call: Node<'_>, handoff: &Handoff) -> bool {
    let Some(registrar) = call.parent().filter(|l| l.kind() == "argument_list").and_then(|l| l.parent()).filter(|c| c.kind() == "call_expression") else {
        return false;
    };
    if super::syntax::arguments(registrar).as_slice() != [call] || registrar.field_child("arguments").is_some_and(|l| l.children().any(|c| c.kind() == "...")) {
        return false;
    }
    let method = spelled(registrar);
    method.contains('.') && handoff.registered_by.iter().any(|m| method.rsplit('.').next() == Some(m.as_str()))
}

/// `WRAPPER(CONSTRUCTOR(…))` with WRAPPER reviewed and its package imported
/// from an accepted path, placed as a list element or a plain argument of a
/// reviewed registration method.
fn wrapped_and_registered(region: &Region<'_>, root: Node<'_>, call: Node<'_>, handoff: &Handoff) -> bool {
    let Some(wrapper) = call.parent().filter(|l| l.kind() == "argument_list").and_then(|l| l.parent()).filter(|c| c.kind() == "call_expression") else {
        return false;
    };
    if super::syntax::arguments(wrapper).as_slice() != [call] || wrapper.field_child("arguments").is_some_and(|l| l.children().any(|c| c.kind() == "...")) {
        return false;
    }
    let name = spelled(wrapper);
    if !handoff.wrapped_by.contains(&name) {
        return false;
    }
    // The wrapper's package, as the file imports it.
    if let Some((package, _)) = name.split_once('.') {
        let imports = scope::imports(root);
        if !imports.get(package).is_some_and(|(p, _)| Settings::of(region.env).accepts_import(package, p)) {
            return false;
        }
    }
    let Some(parent) = wrapper.parent() else { return false };
    if parent.kind() == "literal_element" {
        return true;
    }
    let registrar = Some(parent).filter(|l| l.kind() == "argument_list").and_then(|l| l.parent()).filter(|c| c.kind() == "call_expression");
    registrar.is_some_and(|r| {
        let method = spelled(r);
        let last = method.rsplit('.').next().unwrap_or(&method);
        handoff.registered_by.iter().any(|m| m == last)
    })
}
