//! `hook` facts: callbacks installed on the object a sink call goes
//! through, before the call (`client.event_hooks = {"request": [check]}`,
//! then `client.get(url)`).
//!
//! A library that calls back into the release before each request (httpx's
//! request hooks, a session's `before_request`) runs reviewed code on the
//! sink's path, and what it refuses is part of what the sink does. The fact
//! says exactly which functions are installed, each under which condition,
//! on which object, and that nothing else touches the attribute: the sink is
//! a method call on a local `X` bound once, never aliased or handed on, no
//! other member of it written; the function assigns `X.ATTR` exactly once,
//! before the sink, in a block around it (directly, or as the only statement
//! of a plain `if` there); the value is a literal (dicts with string keys,
//! lists, tuples) of function names, or of a local list of them that only
//! `L.append(F)` statements (each maybe under a plain `if`) fill before the
//! assignment. Every installed function is a region of the profile or
//! defined in the region itself, and every condition tests only parameters
//! of the function that nothing rebinds. The profile lists the functions
//! with their conditions; anything else escalates.

use std::collections::BTreeMap;

use fcd_frontends::facts::FactSite;
use fcd_frontends::frontend::Found;
use fcd_frontends::ir::Escalation;
use fcd_frontends::spec::FactKind;
use fcd_frontends::ts::Node;
use fcd_model::effect::FactValue;

use super::facts::Cx;
use super::route;
use super::syntax::plain_string;

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
        return Err(
            site.mismatch(sink.node, format!("`{name}` is not a local bound exactly once, so the object the hook is installed on may not be the sink's"))
        );
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
            None => {
                return Err(site.mismatch(
                    *u,
                    format!(
                        "`{name}.{attribute}` is used other than assigned (line {}): what the installed hooks are is not what the assignment says",
                        u.line()
                    ),
                ));
            }
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
    let assigned_under = placement(statement, sink.node).map_err(|why| site.mismatch(statement, why))?;
    let value = assignment.field_child("right").unwrap_or(assignment);
    let found = installed(cx, func, statement, value, &assigned_under).map_err(|(n, why)| site.mismatch(n, why))?;
    for (function, condition) in &found {
        let nested = cx.names.is_nested_definition(function)
            && func.descendants().any(|d| d.kind() == "function_definition" && d.field_child("name").is_some_and(|n| n.text() == function.as_str()));
        let reviewed = cx.names.is_module_definition(function) && site.region.env.reviewed.iter().any(|r| r == function);
        if !nested && !reviewed {
            return Err(site.mismatch(
                value,
                format!("`{function}` is neither a function the module defines and the profile reads as a region nor one defined in the region"),
            ));
        }
        for word in condition.split_whitespace().filter(|w| !matches!(*w, "not" | "and" | "or" | "(" | ")")) {
            if !cx.names.is_param(word) || cx.names.rebinding(word).is_some() {
                return Err(site.mismatch(
                    value,
                    format!("`{function}` is installed under `{condition}`, whose `{word}` is not a parameter of the function that nothing rebinds"),
                ));
            }
        }
    }
    let spell = |installs: &BTreeMap<String, String>| -> Vec<String> {
        installs.iter().map(|(f, c)| if c.is_empty() { f.clone() } else { format!("{f} if {c}") }).collect()
    };
    if &found != installs {
        return Err(
            site.mismatch(value, format!("the hooks installed are [{}], the profile reviewed [{}]", spell(&found).join(", "), spell(installs).join(", ")))
        );
    }
    let mut values = BTreeMap::new();
    values.insert("attribute".into(), FactValue::Text(attribute.clone()));
    values.insert("installs".into(), FactValue::List(spell(&found).into_iter().map(FactValue::Text).collect()));
    Ok(Some(site.fact(statement, values)))
}

/// The functions the assigned value installs, each with the condition it is
/// installed under: names in the literal itself take the assignment's own
/// condition; a local list in it (`hooks`, bound once to a list literal)
/// adds what its `hooks.append(F)` statements put in, each standing before
/// the assignment in the assignment's block, directly or as the only
/// statement of a plain `if` there (its test the condition). An assignment
/// under `if hooks:` runs whenever the list holds anything, which installs
/// the same hooks as an empty list would not: it is read as unconditional.
fn installed<'a>(cx: &Cx<'_, 'a>, func: Node<'a>, statement: Node<'a>, value: Node<'a>, under: &str) -> Result<BTreeMap<String, String>, (Node<'a>, String)> {
    let mut names = Vec::new();
    functions_of(value, &mut names).map_err(|n| (n, format!("the installed value holds `{}`, which is neither a literal nor a name", n.text())))?;
    let mut out = BTreeMap::new();
    let mut lists = Vec::new();
    for name in names {
        let is_list = cx.names.bindings(name.text()).iter().any(|b| matches!(b.kind, super::bindings::BindingKind::Value(v) if v.kind() == "list"));
        if is_list {
            lists.push(name);
        } else if out.insert(name.text().to_owned(), under.to_owned()).is_some() {
            return Err((name, format!("`{}` is installed twice", name.text())));
        }
    }
    let neutral = lists.len() == 1 && lists.iter().all(|l| l.text() == under);
    if !lists.is_empty() && !under.is_empty() && !neutral {
        return Err((
            value,
            format!("a list of hooks is installed under `{under}`: the profile reads a list only unconditionally or under a test of the list itself"),
        ));
    }
    let under = if neutral { "" } else { under };
    for k in out.values_mut() {
        *k = under.to_owned();
    }
    let block = statement.parent().filter(|b| b.kind() == "block");
    let block = match block.and_then(|b| b.parent()).filter(|p| p.kind() == "if_statement") {
        Some(branch) => branch.parent().unwrap_or(statement),
        None => block.unwrap_or(statement),
    };
    for list in lists {
        let [binding] = cx.names.bindings(list.text()) else { return Err((list, format!("`{}` is bound more than once", list.text()))) };
        let super::bindings::BindingKind::Value(initial) = binding.kind else { return Err((list, format!("`{}` is not bound to a list", list.text()))) };
        let mut first = Vec::new();
        functions_of(initial, &mut first).map_err(|n| (n, format!("the list holds `{}`, which is not a function's name", n.text())))?;
        for f in first {
            out.insert(f.text().to_owned(), String::new());
        }
        for u in func.descendants().filter(|n| n.kind() == "identifier" && n.text() == list.text() && *n != binding.node && *n != list) {
            // `if hooks:` around the assignment reads the list.
            if u.parent().is_some_and(|p| p.kind() == "if_statement" && p.field_child("condition") == Some(u) && p.contains(statement)) {
                continue;
            }
            let (function, condition) =
                appended(u, block).ok_or((u, format!("`{}` is used other than appended to before the hooks are installed", list.text())))?;
            if !u.precedes(statement) {
                return Err((u, format!("`{}` is changed after the hooks are installed", list.text())));
            }
            if out.insert(function.to_owned(), condition).is_some() {
                return Err((u, format!("`{function}` is put in the list twice")));
            }
        }
    }
    Ok(out)
}

/// `L.append(F)` as an expression statement of `block`, or as the only
/// statement of a plain `if` (no other branch) there: F and the condition.
fn appended<'a>(use_: Node<'a>, block: Node<'a>) -> Option<(&'a str, String)> {
    let member = use_.parent().filter(|p| p.kind() == "attribute" && p.field_child("attribute").is_some_and(|a| a.text() == "append"))?;
    let call = member.parent().filter(|c| c.kind() == "call" && c.field_child("function") == Some(member))?;
    let args: Vec<Node<'a>> = call.field_child("arguments")?.named_children().filter(|a| a.kind() != "comment").collect();
    let [function] = args.as_slice() else { return None };
    if function.kind() != "identifier" {
        return None;
    }
    let statement = call.parent().filter(|s| s.kind() == "expression_statement")?;
    let inner = statement.parent()?;
    if inner == block {
        return Some((function.text(), String::new()));
    }
    let branch = inner.parent().filter(|p| p.kind() == "if_statement" && p.field_child("consequence") == Some(inner) && p.parent() == Some(block))?;
    let only = inner.named_children().filter(|c| c.kind() != "comment").count() == 1;
    let plain = branch.field_child("alternative").is_none() && branch.named_children().all(|c| !matches!(c.kind(), "elif_clause" | "else_clause"));
    (only && plain).then(|| (function.text(), branch.field_child("condition").map(|c| c.token_text()).unwrap_or_default()))
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
    let written = top
        .parent()
        .is_some_and(|p| (matches!(p.kind(), "assignment" | "augmented_assignment") && p.field_child("left") == Some(top)) || p.kind() == "delete_statement");
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

/// The names a literal value holds; `Err` at the first node that is
/// neither a container literal, a string key nor a plain name.
fn functions_of<'a>(value: Node<'a>, out: &mut Vec<Node<'a>>) -> Result<(), Node<'a>> {
    match value.kind() {
        "identifier" => {
            out.push(value);
            Ok(())
        }
        "list" | "tuple" | "set" | "parenthesized_expression" => {
            value.named_children().filter(|c| c.kind() != "comment").try_for_each(|c| functions_of(c, out))
        }
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
