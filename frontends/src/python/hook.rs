//! `hook` facts: a callback installed on the object a sink call goes
//! through, before the call (`client.event_hooks = {"request": [check]}`,
//! then `client.get(url)`).
//!
//! A library that calls back into the release before each request (httpx's
//! request hooks, a session's `before_request`) runs reviewed code on the
//! sink's path, and what it refuses is part of what the sink does. The fact
//! says exactly which functions are installed, on which object, under which
//! condition, and that nothing else touches the attribute: the sink is a
//! method call on a local `X` bound once; the function assigns `X.ATTR`
//! exactly once, in a statement that runs before the sink in a block around
//! it (directly, or as the whole body of an `if` there, whose test is the
//! fact's `condition`); the value is a literal (dicts with string keys,
//! lists, tuples) whose only other leaves are names of functions the module
//! defines, each a region of the profile (so its body is read and pinned).
//! Any other use of `X.ATTR` in the function escalates.

use std::collections::{BTreeMap, BTreeSet};

use crate::facts::FactSite;
use crate::frontend::Found;
use crate::ir::Escalation;
use crate::spec::FactKind;
use crate::ts::Node;
use fcd_model::effect::FactValue;

use super::facts::Cx;
use super::{plain_string, route};

pub fn extract<'a>(cx: &Cx<'_, 'a>, site: &FactSite<'_, 'a>, found: &BTreeMap<String, Found<'a>>) -> Result<Option<Found<'a>>, Escalation> {
    let FactKind::Hook { before, attribute, installs } = &site.spec.kind else {
        return Err(site.mismatch(site.region.node, "not a hook fact".into()));
    };
    let Some(sink) = found.get(before) else { return Ok(None) };
    let receiver = sink.node.field_child("function").filter(|f| f.kind() == "attribute").and_then(|f| f.field_child("object"));
    let Some(receiver) = receiver.filter(|r| r.kind() == "identifier") else {
        return Err(site.mismatch(sink.node, format!("the call of `{before}` is not a method call on a local, so no hook can be said to be on its object")));
    };
    let name = receiver.text();
    if cx.names.is_param(name) || cx.names.bindings(name).len() != 1 {
        return Err(site.mismatch(sink.node, format!("`{name}` is not a local bound exactly once, so the object the hook is installed on may not be the sink's")));
    }
    let func = route::function_of(site.region.node);
    let binding = cx.names.bindings(name).first().map(|b| b.node);
    for u in func.descendants().filter(|n| n.kind() == "identifier" && n.text() == name && Some(*n) != binding) {
        if let Some(why) = not_through_attributes(u, attribute) {
            return Err(site.mismatch(u, format!("`{name}` {why} (line {}), which may change the hooks the sink runs", u.line())));
        }
    }
    let uses: Vec<Node<'a>> = func
        .descendants()
        .filter(|n| n.kind() == "attribute")
        .filter(|n| n.field_child("object").is_some_and(|o| o.kind() == "identifier" && o.text() == name))
        .filter(|n| n.field_child("attribute").is_some_and(|a| a.text() == attribute))
        .collect();
    let mut writes = Vec::new();
    for u in &uses {
        let assignment = u.parent().filter(|p| p.kind() == "assignment" && p.field_child("left") == Some(*u) && p.field_child("right").is_some());
        match assignment {
            Some(a) => writes.push(a),
            None => return Err(site.mismatch(*u, format!("`{name}.{attribute}` is used other than assigned (line {}): what the installed hooks are is not what the assignment says", u.line()))),
        }
    }
    let assignment = match writes.as_slice() {
        [] => return Ok(None),
        [one] => *one,
        [_, second, ..] => return Err(site.mismatch(*second, format!("`{name}.{attribute}` is assigned {} times; the profile accepts one", writes.len()))),
    };
    let Some(statement) = assignment.parent().filter(|p| p.kind() == "expression_statement") else {
        return Err(site.mismatch(assignment, "the hook is not installed by a statement of its own".into()));
    };
    let condition = placement(statement, sink.node).map_err(|why| site.mismatch(statement, why))?;
    let mut named = BTreeSet::new();
    let value = assignment.field_child("right").unwrap_or(assignment);
    functions_of(value, &mut named).map_err(|n| site.mismatch(n, format!("the installed value holds `{}`, which is neither a literal nor a function's name", n.text())))?;
    let want: BTreeSet<&str> = installs.iter().map(String::as_str).collect();
    if named != want {
        let got: Vec<&str> = named.iter().copied().collect();
        return Err(site.mismatch(value, format!("the installed value names [{}], the profile [{}]", got.join(", "), installs.join(", "))));
    }
    for function in &named {
        let reviewed = site.region.env.reviewed.iter().any(|r| r == function);
        if !cx.names.is_module_definition(function) || !reviewed {
            return Err(site.mismatch(value, format!("`{function}` is not a function the module defines and the profile reads as a region")));
        }
    }
    let mut values = BTreeMap::new();
    values.insert("attribute".into(), FactValue::Text(attribute.clone()));
    values.insert("installs".into(), FactValue::List(named.iter().map(|n| FactValue::Text((*n).to_owned())).collect()));
    values.insert("condition".into(), FactValue::Text(condition));
    Ok(Some(site.fact(statement, values)))
}

/// Why one use of the sink's object could change its hooks other than by
/// the reviewed assignment, if it could: the object handed on or aliased
/// (anything but `X.member`), or a member of it written (`X._hooks = …`,
/// `X.headers["a"] = …`, `del X.y`) other than the hook attribute itself.
fn not_through_attributes(use_: Node<'_>, attribute: &str) -> Option<&'static str> {
    let Some(member) = use_.parent().filter(|p| p.kind() == "attribute" && p.field_child("object") == Some(use_)) else {
        return Some("is used other than through its members");
    };
    if member.field_child("attribute").is_some_and(|a| a.text() == attribute) {
        return None;
    }
    let mut top = member;
    while let Some(p) = top.parent().filter(|p| matches!(p.kind(), "attribute" | "subscript") && p.named_children().next() == Some(top)) {
        top = p;
    }
    let written = top.parent().is_some_and(|p| {
        (matches!(p.kind(), "assignment" | "augmented_assignment") && p.field_child("left") == Some(top)) || p.kind() == "delete_statement"
    });
    written.then_some("has a member written")
}

/// Where the installing statement runs, as the condition under which it
/// runs before the sink ("" for always): in a block that also holds the
/// sink (or a statement around it), before it; or as the only statement of
/// the body of an `if` standing so, the `if` with no other branch.
fn placement(statement: Node<'_>, sink: Node<'_>) -> Result<String, String> {
    let block = statement.parent().ok_or("the statement stands in no block")?;
    if !statement.precedes(sink) {
        return Err(format!("the hook is installed at line {}, after the sink at line {}", statement.line(), sink.line()));
    }
    if block.kind() == "block" && block.contains(sink) {
        return Ok(String::new());
    }
    let branch = block.parent().filter(|p| p.kind() == "if_statement" && p.field_child("consequence") == Some(block));
    let Some(branch) = branch else { return Err("the hook is installed in a block that does not hold the sink".into()) };
    let only = block.named_children().filter(|c| c.kind() != "comment").count() == 1;
    let plain = branch.field_child("alternative").is_none() && branch.named_children().all(|c| !matches!(c.kind(), "elif_clause" | "else_clause"));
    let around = branch.parent().is_some_and(|b| b.kind() == "block" && b.contains(sink));
    if !(only && plain && around) {
        return Err("the hook is installed under an `if` that is not a plain one-statement branch in a block holding the sink".into());
    }
    let test = branch.field_child("condition").ok_or("an `if` without a test")?;
    Ok(test.token_text())
}

/// The function names a literal value holds; `Err` at the first node that is
/// neither a container literal, a string key nor a plain name.
fn functions_of<'a>(value: Node<'a>, out: &mut BTreeSet<&'a str>) -> Result<(), Node<'a>> {
    match value.kind() {
        "identifier" => {
            out.insert(value.text());
            Ok(())
        }
        "list" | "tuple" | "set" | "parenthesized_expression" => value.named_children().filter(|c| c.kind() != "comment").try_for_each(|c| functions_of(c, out)),
        "dictionary" => value.named_children().filter(|c| c.kind() != "comment").try_for_each(|pair| {
            let (Some(key), Some(v)) = (pair.field_child("key"), pair.field_child("value")) else { return Err(pair) };
            if pair.kind() != "pair" || plain_string(key).is_none() {
                return Err(pair);
            }
            functions_of(v, out)
        }),
        _ => Err(value),
    }
}
