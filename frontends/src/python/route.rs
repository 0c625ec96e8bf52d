//! Routes: the code that runs when a tool is called by name.
//!
//! A handler's facts say what the handler does; they say nothing about
//! whether the tool's name reaches the handler, or with which arguments. A
//! route region is where that happens, in one of the two shapes Python MCP
//! servers use:
//!
//! - a dispatcher's `match name:` branch whose pattern is the tool's name
//!   (a string, or an enum member `Tools.DIFF` / `Tools.DIFF.value` whose
//!   value is that string); the region is the branch, and the statements of
//!   the dispatcher outside every branch run too (they are its call sites);
//! - a function registered for the name (`@server.tool(name=…)`).
//!
//! A branch is only the route when nothing before it can take the call: every
//! earlier pattern must be a value pattern with a known, different string, and
//! the subject must be the dispatcher's own parameter, unchanged.

use crate::ir::{Anchor, Escalation, EscalationCode};
use crate::lang::Region;
use crate::ts::{Node, Syntax};

use super::binding;

/// Every route of `tool` in one file: matching `case` branches and functions
/// whose registration decorator names the tool.
pub fn find<'a>(syntax: &'a Syntax, tool: &str) -> Vec<Node<'a>> {
    let root = syntax.root();
    root.descendants()
        .filter(|n| match n.kind() {
            "case_clause" => case_values(root, *n).is_some_and(|vs| vs.iter().any(|v| v.as_deref() == Some(tool))),
            "function_definition" => registered_name(root, *n).as_deref() == Some(tool),
            _ => false,
        })
        .collect()
}

/// The function a route's names resolve in: the dispatcher of a branch, or the
/// registered function itself.
pub fn function_of(node: Node<'_>) -> Node<'_> {
    if node.kind() == "case_clause" {
        return node.ancestors().find(|a| a.kind() == "function_definition").unwrap_or(node);
    }
    node
}

/// The call sites a branch route runs besides its own body: the dispatcher's
/// decorators and every statement outside the `match` branches, except the
/// bodies of `if NAME == OTHER:` tests that only another tool's name enters.
pub fn shared<'a>(route: Node<'a>, tool: &str) -> Vec<Node<'a>> {
    if route.kind() != "case_clause" {
        return Vec::new();
    }
    let func = function_of(route);
    let in_other_branch = |n: &Node<'a>| n.ancestors().take_while(|a| *a != func).any(|a| a.kind() == "case_clause" || other_tool_only(func, a, tool));
    let decorators = func
        .parent()
        .filter(|p| p.kind() == "decorated_definition")
        .into_iter()
        .flat_map(|d| d.named_children().filter(|c| c.kind() == "decorator").collect::<Vec<_>>());
    decorators.chain(func.descendants().filter(|n| *n != func && n.kind() != "case_clause" && !in_other_branch(n))).collect()
}

/// A branch route is reached only by its tool: checks the subject and every
/// earlier branch.
pub fn check(region: &Region<'_>) -> Result<(), Escalation> {
    let route = region.node;
    if route.kind() != "case_clause" {
        return Ok(());
    }
    let root = route.ancestors().last().unwrap_or(route);
    let escalate = |node: Node<'_>, detail: String| {
        Escalation::new(
            EscalationCode::ShapeMismatch,
            format!("region `{}`: {detail}", region.name),
            Some(Anchor::new(region.file, node.line(), node.end_line(), node.text())),
        )
    };
    let Some(statement) = route.ancestors().find(|a| a.kind() == "match_statement") else { return Ok(()) };
    let func = function_of(route);
    let subject = statement.field_child("subject");
    let rebound = binding::bindings_at(func, None);
    let subject_ok = subject.is_some_and(|s| s.kind() == "identifier" && is_param(func, s.text()) && !rebound.contains_key(s.text()));
    if !subject_ok {
        return Err(escalate(statement, "the dispatcher matches something other than its own, unchanged name parameter".into()));
    }
    let tool = region.env.tool.clone();
    if let Some(guard) = route.ancestors().take_while(|a| *a != func).find(|a| other_tool_only(func, *a, &tool)) {
        return Err(escalate(guard, format!("the tool's branch is inside a test (line {}) that only another tool's name passes", guard.line())));
    }
    for earlier in statement.descendants().filter(|c| c.kind() == "case_clause" && c.precedes(route)) {
        match case_values(root, earlier) {
            Some(values) if values.iter().all(|v| v.as_deref().is_some_and(|v| v != tool)) => {}
            _ => return Err(escalate(earlier, format!("an earlier branch (line {}) may take the call before the tool's own branch", earlier.line()))),
        }
    }
    Ok(())
}

/// Whether `block` is the body of an `if`/`elif` whose test is
/// `NAME == VALUE`: NAME the dispatcher's own, unchanged parameter and VALUE a
/// known string other than `tool` (a literal, or a member of a plain string
/// enum). Only a call for another tool runs such a body.
fn other_tool_only(func: Node<'_>, block: Node<'_>, tool: &str) -> bool {
    let Some(test) = block.parent().filter(|p| matches!(p.kind(), "if_statement" | "elif_clause")) else { return false };
    if test.field_child("consequence") != Some(block) {
        return false;
    }
    let Some(condition) = test.field_child("condition").filter(|c| c.kind() == "comparison_operator") else { return false };
    let operands: Vec<Node<'_>> = condition.named_children().filter(|c| c.kind() != "comment").collect();
    let operators: Vec<&str> = condition.children().filter(|c| !c.is_named()).map(|c| c.text()).collect();
    let ([name, value], ["=="]) = (operands.as_slice(), operators.as_slice()) else { return false };
    let root = func.ancestors().last().unwrap_or(func);
    let unchanged = name.kind() == "identifier" && is_param(func, name.text()) && !binding::bindings_at(func, None).contains_key(name.text());
    unchanged && expr_value(root, *value).is_some_and(|v| v != tool)
}

fn is_param(func: Node<'_>, name: &str) -> bool {
    func.field_child("parameters").is_some_and(|ps| {
        ps.named_children().any(|p| {
            let id = if p.kind() == "identifier" { Some(p) } else { p.field_child("name").or_else(|| p.named_children().find(|c| c.kind() == "identifier")) };
            id.is_some_and(|i| i.text() == name)
        })
    })
}

/// The values a branch's pattern compares with: `Some` strings for value
/// patterns (a union gives several); `None` inside when one part is not a
/// known string; `None` for a branch with a guard or a capturing pattern.
fn case_values(root: Node<'_>, case: Node<'_>) -> Option<Vec<Option<String>>> {
    if case.field_child("guard").is_some() {
        return None;
    }
    let pattern = case.named_children().find(|c| c.kind() == "case_pattern")?;
    let inner = pattern.named_children().next()?;
    let parts: Vec<Node<'_>> = if inner.kind() == "union_pattern" { inner.named_children().collect() } else { vec![inner] };
    Some(parts.into_iter().map(|p| pattern_value(root, p)).collect())
}

fn pattern_value(root: Node<'_>, p: Node<'_>) -> Option<String> {
    match p.kind() {
        "string" => plain(p),
        "case_pattern" => pattern_value(root, p.named_children().next()?),
        // A dotted value pattern (`Tools.DIFF`); a bare name would be a capture.
        "dotted_name" => {
            let parts: Vec<&str> = p.named_children().map(|c| c.text()).collect();
            (parts.len() >= 2).then(|| member_value(root, &parts)).flatten()
        }
        _ => None,
    }
}

/// The name a registration decorator gives a function: `@x.tool(name=VALUE)`.
fn registered_name(root: Node<'_>, func: Node<'_>) -> Option<String> {
    let decorated = func.parent().filter(|p| p.kind() == "decorated_definition")?;
    decorated.named_children().filter(|c| c.kind() == "decorator").find_map(|d| {
        let call = d.named_children().find(|c| c.kind() == "call")?;
        let args = call.field_child("arguments")?;
        args.named_children()
            .filter(|a| a.kind() == "keyword_argument")
            .find_map(|kw| (kw.field_child("name")?.text() == "name").then(|| expr_value(root, kw.field_child("value")?)).flatten())
    })
}

/// A string an expression certainly has: a plain literal or an enum member.
fn expr_value(root: Node<'_>, e: Node<'_>) -> Option<String> {
    match e.kind() {
        "string" => plain(e),
        "attribute" => {
            let parts: Vec<String> = binding::compact(e.text()).split('.').map(str::to_owned).collect();
            let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
            member_value(root, &parts)
        }
        _ => None,
    }
}

/// `Class.MEMBER` or `Class.MEMBER.value`, where `Class` is defined once at
/// module level and assigns `MEMBER` exactly once, to a plain string.
fn member_value(root: Node<'_>, parts: &[&str]) -> Option<String> {
    let (class, member) = match parts {
        [c, m] | [c, m, "value"] => (*c, *m),
        _ => return None,
    };
    let module = binding::bindings_at(root, Some(class));
    let [binding] = module.get(class)?.as_slice() else { return None };
    let def = binding.node.parent().filter(|d| d.kind() == "class_definition")?;
    if !plain_enum(root, def) {
        return None;
    }
    let body = binding::bindings_at(def, Some(member));
    let [assigned] = body.get(member)?.as_slice() else { return None };
    match assigned.kind {
        binding::BindingKind::Value(v) => plain(v),
        _ => None,
    }
}

/// Whether a class is a plain string enum: comparing with one of its members
/// compares strings. Its bases are `str`, `Enum` or `StrEnum` as imported from
/// `enum` (no metaclass, no decorator), and its body only assigns plain strings
/// to names: a method (`__eq__`, `__hash__`, `_missing_`, …) or any other
/// statement could make a member compare equal to another tool's name.
fn plain_enum(root: Node<'_>, def: Node<'_>) -> bool {
    if def.parent().is_some_and(|p| p.kind() == "decorated_definition") {
        return false;
    }
    let module = binding::bindings_at(root, None);
    let imported_as =
        |name: &str, path: &str| module.get(name).is_some_and(|bs| bs.iter().all(|b| matches!(&b.kind, binding::BindingKind::Import(p) if p == path)));
    let base_ok = |b: Node<'_>| match b.text() {
        "str" => !module.contains_key("str"),
        "Enum" | "StrEnum" => imported_as(b.text(), &format!("enum.{}", b.text())),
        "enum.Enum" | "enum.StrEnum" => imported_as("enum", "enum"),
        _ => false,
    };
    let bases_ok = def.field_child("superclasses").is_none_or(|a| a.named_children().filter(|c| c.kind() != "comment").all(base_ok));
    let Some(body) = def.field_child("body") else { return false };
    let statement_ok = |st: Node<'_>| match st.kind() {
        "comment" | "pass_statement" => true,
        "expression_statement" => st.named_children().all(|e| match e.kind() {
            "string" => true,
            "assignment" => {
                e.field_child("left").is_some_and(|l| l.kind() == "identifier")
                    && e.field_child("type").is_none()
                    && e.field_child("right").is_some_and(|r| plain(r).is_some())
            }
            _ => false,
        }),
        _ => false,
    };
    bases_ok && body.named_children().all(statement_ok)
}

/// The content of a plain string literal without escapes or interpolation.
fn plain(node: Node<'_>) -> Option<String> {
    super::plain_string(node)
}
