//! Routes: the code that runs when a tool is called by name.
//!
//! A handler's facts say what the handler does; they say nothing about
//! whether the tool's name reaches the handler, or with which arguments. A
//! route region is where that happens, in one of the three shapes Python MCP
//! servers use:
//!
//! - a dispatcher's `match name:` branch whose pattern is the tool's name
//!   (a string, or an enum member `Tools.DIFF` / `Tools.DIFF.value` whose
//!   value is that string); the region is the branch, and the statements of
//!   the dispatcher outside every branch run too (they are its call sites);
//! - a dispatcher's `if NAME == VALUE:` / `elif NAME == VALUE:` body (or
//!   `VALUE == NAME`), VALUE the tool's name as a branch pattern may spell
//!   it; the region is the body, and the statements of the dispatcher outside
//!   it run too, except the bodies of tests only another tool's name passes;
//! - a function registered for the name (`@server.tool(name=…)`, or
//!   `@server.tool()` under the function's own name); the server object must
//!   be bound once to a constructor call, used only by calling its methods
//!   (each a call site of the route, as are the release's functions handed to
//!   the constructor and methods called on the result of the function that
//!   returns it), and every tool registered on it must have a known name.
//!
//! A branch is only the route when nothing before it can take the call: every
//! earlier pattern must be a value pattern with a known, different string, and
//! the subject must be the dispatcher's own parameter, unchanged. An `if`
//! body likewise: NAME is the dispatcher's own parameter, unchanged; every
//! earlier `if`/`elif` of its chain tests that NAME against a known, different
//! value, and so does every earlier test in the dispatcher that reads NAME;
//! the `if` stands in the dispatcher's straight-line code (its blocks, a
//! `try` or `with` body), never in another branch, a loop or a handler.

use fcd_frontends::frontend::Region;
use fcd_frontends::ir::{Escalation, EscalationCode};
use fcd_frontends::ts::{Node, Syntax};
use fcd_model::effect::Anchor;

use super::bindings;

/// Every route of `tool` in one file: matching `case` branches and functions
/// whose registration decorator names the tool.
pub fn find<'a>(syntax: &'a Syntax, tool: &str) -> Vec<Node<'a>> {
    let root = syntax.root();
    root.descendants()
        .filter(|n| match n.kind() {
            "case_clause" => case_values(root, *n).is_some_and(|vs| vs.iter().any(|v| v.as_deref() == Some(tool))),
            "function_definition" => registered_name(root, *n).as_deref() == Some(tool),
            "block" => if_route(*n).is_some_and(|(_, name, value)| is_param(function_of(*n), name.text()) && expr_value(root, value).as_deref() == Some(tool)),
            _ => false,
        })
        .collect()
}

/// The function a route's names resolve in: the dispatcher of a branch or an
/// `if` body, or the registered function itself.
pub fn function_of(node: Node<'_>) -> Node<'_> {
    if node.kind() == "case_clause" || if_route(node).is_some() {
        return node.ancestors().find(|a| a.kind() == "function_definition").unwrap_or(node);
    }
    node
}

/// The call sites a branch route runs besides its own body: the dispatcher's
/// decorators and every statement outside the `match` branches, except the
/// bodies of `if NAME == OTHER:` tests that only another tool's name enters.
pub fn shared<'a>(route: Node<'a>, tool: &str) -> Vec<Node<'a>> {
    if route.kind() == "function_definition" {
        // A registered function: what runs with its server object (checked by `check`).
        return server_of(route).map(|s| s.sites).unwrap_or_default();
    }
    if if_route(route).is_some() {
        // An `if` body: the dispatcher's other statements, except the bodies
        // only another tool's name enters (branches of a `match` included,
        // which run for some name and are not another tool's by that alone).
        let func = function_of(route);
        let in_other_branch = |n: &Node<'a>| n.ancestors().take_while(|a| *a != func).any(|a| other_tool_only(func, a, tool));
        return decorators(func).chain(func.descendants().filter(|n| *n != func && !route.contains(*n) && !in_other_branch(n))).collect();
    }
    if route.kind() != "case_clause" {
        return Vec::new();
    }
    let func = function_of(route);
    let in_other_branch = |n: &Node<'a>| n.ancestors().take_while(|a| *a != func).any(|a| a.kind() == "case_clause" || other_tool_only(func, a, tool));
    decorators(func).chain(func.descendants().filter(|n| *n != func && n.kind() != "case_clause" && !in_other_branch(n))).collect()
}

/// The decorators of a dispatcher's definition (its registration), with
/// the calls in their arguments ([`super::syntax::decorator_sites`]).
fn decorators(func: Node<'_>) -> impl Iterator<Item = Node<'_>> {
    func.parent()
        .filter(|p| p.kind() == "decorated_definition")
        .into_iter()
        .flat_map(|d| d.named_children().filter(|c| c.kind() == "decorator").flat_map(super::syntax::decorator_sites).collect::<Vec<_>>())
}

/// A branch route is reached only by its tool: checks the subject and every
/// earlier branch.
pub fn check(region: &Region<'_>) -> Result<(), Escalation> {
    let route = region.node;
    let escalate = |node: Node<'_>, detail: String| {
        Escalation::new(
            EscalationCode::ShapeMismatch,
            format!("region `{}`: {detail}", region.name),
            Some(Anchor::new(region.file, node.line(), node.end_line(), node.text())),
        )
    };
    if route.kind() == "function_definition" && registration(route).is_some() {
        let server = server_of(route).map_err(|(n, why)| escalate(n, why))?;
        return registrations_known(route, &server).map_err(|(n, why)| escalate(n, why));
    }
    if if_route(route).is_some() {
        return check_if(region, route).map_err(|(n, why)| escalate(n, why));
    }
    if route.kind() != "case_clause" {
        return Ok(());
    }
    let root = route.ancestors().last().unwrap_or(route);
    let Some(statement) = route.ancestors().find(|a| a.kind() == "match_statement") else { return Ok(()) };
    let func = function_of(route);
    let subject = statement.field_child("subject");
    let rebound = bindings::bindings_at(func, None);
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

/// An `if` route is reached only by its tool: checks the name it tests, where
/// the `if` stands, the earlier branches of its chain and every earlier test
/// of the dispatcher that reads the name.
fn check_if<'a>(region: &Region<'a>, route: Node<'a>) -> Result<(), (Node<'a>, String)> {
    let Some((clause, name, _)) = if_route(route) else { return Ok(()) };
    let func = function_of(route);
    let tool = region.env.tool.as_str();
    if bindings::bindings_at(func, None).contains_key(name.text()) {
        return Err((clause, format!("the dispatcher tests `{}`, which it binds again: not its own, unchanged name parameter", name.text())));
    }
    // The chain's `if` statement stands in the dispatcher's straight-line code.
    let statement = if clause.kind() == "elif_clause" { clause.parent().unwrap_or(clause) } else { clause };
    let mut below = statement;
    for above in statement.ancestors().take_while(|a| *a != func) {
        let straight = match above.kind() {
            "block" => true,
            "try_statement" | "with_statement" => above.field_child("body") == Some(below),
            _ => false,
        };
        if !straight {
            let why = if other_tool_only(func, below, tool) {
                format!("the tool's branch is inside a test (line {}) that only another tool's name passes", above.line())
            } else {
                format!(
                    "the tool's branch is inside a `{}` (line {}): whether it runs depends on more than the tool's name",
                    above.kind().trim_end_matches("_statement").trim_end_matches("_clause"),
                    above.line()
                )
            };
            return Err((above, why));
        }
        below = above;
    }
    // Every earlier branch of the chain tests the same name against another tool.
    let chain = std::iter::once(statement).chain(statement.named_children().filter(|c| c.kind() == "elif_clause"));
    for earlier in chain.take_while(|c| *c != clause) {
        let same = if_test(earlier).is_some_and(|(n, v)| n.text() == name.text() && known_other(func, n, v, tool));
        if !same {
            return Err((earlier, format!("an earlier branch (line {}) may take the call before the tool's own branch", earlier.line())));
        }
    }
    // Every earlier test of the dispatcher that reads the name (outside the
    // bodies only another tool's name enters) is such a test too.
    let in_other_branch = |n: &Node<'a>| n.ancestors().take_while(|a| *a != func).any(|a| other_tool_only(func, a, tool));
    let reads = |tested: Node<'a>| std::iter::once(tested).chain(tested.descendants()).any(|n| n.kind() == "identifier" && n.text() == name.text());
    for earlier in func.descendants().filter(|n| matches!(n.kind(), "if_statement" | "elif_clause" | "else_clause" | "match_statement") && n.precedes(clause)) {
        if (statement.contains(earlier) && earlier.kind() == "elif_clause") || in_other_branch(&earlier) {
            continue;
        }
        if earlier.kind() == "else_clause" {
            // What every earlier test of a chain on the name refuses runs here: the tool's call too.
            let chain = earlier.parent().into_iter().flat_map(|s| std::iter::once(s).chain(s.named_children().filter(|c| c.kind() == "elif_clause")));
            if chain.filter_map(|c| c.field_child("condition")).any(reads) {
                return Err((
                    earlier,
                    format!("the `else` (line {}) of an earlier test of the tool's name takes the call before the tool's own branch", earlier.line()),
                ));
            }
            continue;
        }
        let Some(tested) = earlier.field_child(if earlier.kind() == "match_statement" { "subject" } else { "condition" }) else { continue };
        let reads = reads(tested);
        let other = match earlier.kind() {
            "match_statement" => {
                let root = func.ancestors().last().unwrap_or(func);
                tested.kind() == "identifier"
                    && earlier
                        .descendants()
                        .filter(|c| c.kind() == "case_clause")
                        .all(|c| case_values(root, c).is_some_and(|vs| vs.iter().all(|v| v.as_deref().is_some_and(|v| v != tool))))
            }
            _ => if_test(earlier).is_some_and(|(n, v)| n.text() == name.text() && known_other(func, n, v, tool)),
        };
        if reads && !other {
            return Err((earlier, format!("an earlier test of the tool's name (line {}) may take the call before the tool's own branch", earlier.line())));
        }
    }
    Ok(())
}

/// A route `if` body: the block, the `if`/`elif` clause it is the body of,
/// and the name and value that clause's test compares (`NAME == VALUE`).
fn if_route(block: Node<'_>) -> Option<(Node<'_>, Node<'_>, Node<'_>)> {
    if block.kind() != "block" {
        return None;
    }
    let clause = block.parent().filter(|p| matches!(p.kind(), "if_statement" | "elif_clause"))?;
    if clause.field_child("consequence") != Some(block) {
        return None;
    }
    let (name, value) = if_test(clause)?;
    Some((clause, name, value))
}

/// The operands of an `if`/`elif` test `NAME == VALUE` or `VALUE == NAME`
/// (through parentheses), NAME a bare name and VALUE anything else.
fn if_test(clause: Node<'_>) -> Option<(Node<'_>, Node<'_>)> {
    let mut condition = clause.field_child("condition")?;
    while condition.kind() == "parenthesized_expression" {
        condition = condition.named_children().find(|c| c.kind() != "comment")?;
    }
    if condition.kind() != "comparison_operator" {
        return None;
    }
    let operands: Vec<Node<'_>> = condition.named_children().filter(|c| c.kind() != "comment").collect();
    let operators: Vec<&str> = condition.children().filter(|c| !c.is_named()).map(|c| c.text()).collect();
    let ([left, right], ["=="]) = (operands.as_slice(), operators.as_slice()) else { return None };
    match (left.kind() == "identifier", right.kind() == "identifier") {
        (true, false) => Some((*left, *right)),
        (false, true) => Some((*right, *left)),
        _ => None,
    }
}

/// Whether `name == value` is a test only another tool's call passes: NAME
/// the dispatcher's own, unchanged parameter and VALUE a known string other
/// than `tool` (a literal, or a member of a plain string enum).
fn known_other(func: Node<'_>, name: Node<'_>, value: Node<'_>, tool: &str) -> bool {
    let root = func.ancestors().last().unwrap_or(func);
    let unchanged = is_param(func, name.text()) && !bindings::bindings_at(func, None).contains_key(name.text());
    unchanged && expr_value(root, value).is_some_and(|v| v != tool)
}

/// Whether `block` is the body of an `if`/`elif` whose test is
/// `NAME == VALUE` (or `VALUE == NAME`) that only another tool's name
/// passes ([`known_other`]). Only a call for another tool runs such a body.
fn other_tool_only(func: Node<'_>, block: Node<'_>, tool: &str) -> bool {
    if_route(block).is_some_and(|(_, name, value)| known_other(func, name, value, tool))
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

/// The name a registration decorator gives a function: `@x.tool(name=VALUE)`,
/// or the function's own name for `@x.tool()` / `@x.tool` without one.
fn registered_name(root: Node<'_>, func: Node<'_>) -> Option<String> {
    let decorated = func.parent().filter(|p| p.kind() == "decorated_definition")?;
    decorated.named_children().filter(|c| c.kind() == "decorator").find_map(|d| {
        let expr = d.named_children().find(|c| c.kind() != "comment")?;
        if expr.kind() == "attribute" && expr.field_child("attribute").is_some_and(|a| a.text() == "tool") {
            return func.field_child("name").map(|n| n.text().to_owned());
        }
        let call = Some(expr).filter(|c| c.kind() == "call")?;
        let args = call.field_child("arguments")?;
        let named = args
            .named_children()
            .filter(|a| a.kind() == "keyword_argument")
            .find_map(|kw| (kw.field_child("name")?.text() == "name").then(|| expr_value(root, kw.field_child("value")?)).flatten());
        let plain_tool =
            call.field_child("function").is_some_and(|f| f.kind() == "attribute" && f.field_child("attribute").is_some_and(|a| a.text() == "tool"));
        // Only `@X.tool(name=…)` registers a tool; another method of the
        // server (`@X.prompt(name="fetch")`) is one of the route's call
        // sites, which its inventory must list.
        let named = named.filter(|_| plain_tool);
        let unnamed = !args.named_children().any(|a| a.kind() == "keyword_argument" && a.field_child("name").is_some_and(|n| n.text() == "name"));
        named.or_else(|| {
            (plain_tool && unnamed && args.named_children().all(|a| a.kind() == "keyword_argument"))
                .then(|| func.field_child("name").map(|n| n.text().to_owned()))
                .flatten()
        })
    })
}

/// The registration decorator of a registered route: `@X.tool(…)` or `@X.tool`.
fn registration(func: Node<'_>) -> Option<Node<'_>> {
    let decorated = func.parent().filter(|p| p.kind() == "decorated_definition")?;
    decorated.named_children().filter(|c| c.kind() == "decorator").find(|d| server_object(*d).is_some())
}

/// `X` of a decorator `@X.tool(…)` / `@X.tool`, when X is a bare name.
fn server_object(decorator: Node<'_>) -> Option<Node<'_>> {
    let expr = decorator.named_children().find(|c| c.kind() != "comment")?;
    let attr = if expr.kind() == "call" { expr.field_child("function")? } else { expr };
    if attr.kind() != "attribute" || attr.field_child("attribute").is_none_or(|a| a.text() != "tool") {
        return None;
    }
    attr.field_child("object").filter(|o| o.kind() == "identifier")
}

/// Where a registered route's server object comes from and every way it is
/// used: the level (function or module) that binds it, its one constructor
/// call, and the call sites that run with it besides the route (methods
/// called on it, methods called on the result of the function returning it,
/// functions of the release handed to its constructor).
struct Server<'a> {
    constructor: Node<'a>,
    sites: Vec<Node<'a>>,
}

fn server_of<'a>(route: Node<'a>) -> Result<Server<'a>, (Node<'a>, String)> {
    let unknown = |n: Node<'a>, why: &str| Err((n, why.to_owned()));
    let Some(decorator) = registration(route) else { return unknown(route, "the registration is not `@X.tool(…)` on a named server object") };
    let Some(object) = server_object(decorator) else { return unknown(decorator, "the registration is not `@X.tool(…)` on a named server object") };
    let name = object.text();
    let root = route.ancestors().last().unwrap_or(route);
    // The innermost function around the route that binds the name, else the module.
    let owner = route
        .ancestors()
        .filter(|a| *a != route && a.kind() == "function_definition")
        .find(|f| bindings::bindings_at(*f, Some(name)).contains_key(name) || is_param(*f, name))
        .unwrap_or(root);
    let bindings = bindings::bindings_at(owner, Some(name)).remove(name).unwrap_or_default();
    let constructor = match bindings.as_slice() {
        [bindings::Binding { kind: bindings::BindingKind::Value(v), .. }] if v.kind() == "call" && !is_param(owner, name) => *v,
        _ => return unknown(object, "the server object is not bound once, to a constructor call, where the route is defined"),
    };
    let mut sites = vec![constructor];
    // Functions of the release handed to the constructor (middleware, hooks) run on every call.
    if let Some(args) = constructor.field_child("arguments") {
        let keyword = |n: &Node<'a>| n.parent().is_some_and(|p| p.kind() == "keyword_argument" && p.field_child("name") == Some(*n));
        let member = |n: &Node<'a>| n.parent().is_some_and(|p| p.kind() == "attribute" && p.field_child("attribute") == Some(*n));
        sites.extend(args.descendants().filter(|n| n.kind() == "call" || (n.kind() == "identifier" && !keyword(n) && !member(n))));
    }
    let mut returned = false;
    for use_ in owner.descendants().filter(|n| n.kind() == "identifier" && n.text() == name) {
        let parent = use_.parent();
        let kind = parent.map(|p| p.kind()).unwrap_or_default();
        if kind == "assignment" && parent.and_then(|p| p.field_child("left")) == Some(use_) {
            continue;
        }
        if kind == "return_statement" {
            returned = true;
            continue;
        }
        let method_call = parent
            .filter(|p| p.kind() == "attribute" && p.field_child("object") == Some(use_))
            .and_then(|a| a.parent().filter(|c| c.kind() == "call" && c.field_child("function") == a.into()));
        match method_call {
            // A tool registration: its name must be known (checked by `check`).
            Some(call) if call.parent().is_some_and(|d| d.kind() == "decorator") && server_object(call.parent().unwrap_or(call)).is_some() => {}
            Some(call) => sites.push(call),
            None if kind == "attribute" && parent.and_then(|a| a.parent()).is_some_and(|d| d.kind() == "decorator") => {}
            // `X.member.method(…)` (`server.middleware.append(…)`): a call site like a method's.
            None if member_call(use_).is_some() => sites.extend(member_call(use_)),
            // `f(X)`, f a function of the module: a call site, which the closed
            // call path makes a region, whose inventory covers what it does with X.
            None if handed_to_module_function(root, use_).is_some() => sites.extend(handed_to_module_function(root, use_)),
            None => return unknown(use_, "the server object is used otherwise than by calling its methods or returning it"),
        }
    }
    if returned {
        let Some(maker) = owner.field_child("name").filter(|_| owner.kind() == "function_definition") else {
            return unknown(owner, "the server object is returned from outside a named function");
        };
        for use_ in root.descendants().filter(|n| n.kind() == "identifier" && n.text() == maker.text() && *n != maker) {
            let call = use_.parent().filter(|c| c.kind() == "call" && c.field_child("function") == Some(use_));
            let method = call
                .and_then(|c| c.parent())
                .filter(|a| a.kind() == "attribute")
                .and_then(|a| a.parent().filter(|c| c.kind() == "call" && c.field_child("function") == Some(a)));
            match method {
                Some(m) => sites.push(m),
                None => match call.and_then(|c| bound_result(c)) {
                    Some(calls) => sites.extend(calls),
                    None => return unknown(use_, "the function returning the server object is used otherwise than by calling a method on its result"),
                },
            }
        }
    }
    Ok(Server { constructor, sites })
}

/// `V = maker(…)`, `V` a local bound once in its function and used only by
/// calling its methods (`await V.run_stdio_async()`): those calls.
fn bound_result(call: Node<'_>) -> Option<Vec<Node<'_>>> {
    let assignment = call.parent().filter(|a| a.kind() == "assignment" && a.field_child("right") == Some(call))?;
    let local = assignment.field_child("left").filter(|l| l.kind() == "identifier")?;
    let func = assignment.ancestors().find(|a| a.kind() == "function_definition")?;
    let bindings = bindings::bindings_at(func, Some(local.text()));
    if bindings.get(local.text()).map_or(0, Vec::len) != 1 || is_param(func, local.text()) {
        return None;
    }
    func.descendants()
        .filter(|n| n.kind() == "identifier" && n.text() == local.text() && *n != local)
        .map(|u| {
            let member = u.parent().filter(|p| p.kind() == "attribute" && p.field_child("object") == Some(u))?;
            member.parent().filter(|c| c.kind() == "call" && c.field_child("function") == Some(member))
        })
        .collect()
}

/// The call `X.a.b(…)` (through one or more members) a use of `X` heads.
fn member_call(use_: Node<'_>) -> Option<Node<'_>> {
    let mut top = use_.parent().filter(|p| p.kind() == "attribute" && p.field_child("object") == Some(use_))?;
    while let Some(up) = top.parent().filter(|p| p.kind() == "attribute" && p.field_child("object") == Some(top)) {
        top = up;
    }
    top.parent().filter(|c| c.kind() == "call" && c.field_child("function") == Some(top) && c.parent().is_none_or(|d| d.kind() != "decorator"))
}

/// The call `f(…, X, …)` a use of `X` is a plain positional argument of,
/// `f` a bare name the module defines once as a function.
fn handed_to_module_function<'a>(root: Node<'a>, use_: Node<'a>) -> Option<Node<'a>> {
    let call = use_.parent().filter(|l| l.kind() == "argument_list")?.parent().filter(|c| c.kind() == "call")?;
    let function = call.field_child("function").filter(|f| f.kind() == "identifier")?;
    let module = bindings::bindings_at(root, Some(function.text()));
    let [one] = module.get(function.text())?.as_slice() else { return None };
    let defined = matches!(one.kind, bindings::BindingKind::Definition) && one.node.parent().is_some_and(|d| d.kind() == "function_definition");
    defined.then_some(call)
}

/// Every `@X.tool` registration on the route's server object names a known
/// tool: one whose name is unknown could be the reviewed tool's.
fn registrations_known<'a>(route: Node<'a>, server: &Server<'a>) -> Result<(), (Node<'a>, String)> {
    let root = route.ancestors().last().unwrap_or(route);
    let owner = server.constructor.ancestors().find(|a| matches!(a.kind(), "function_definition" | "module")).unwrap_or(root);
    for decorator in owner.descendants().filter(|d| d.kind() == "decorator" && server_object(*d).is_some()) {
        let Some(func) = decorator.parent().and_then(|d| d.field_child("definition")) else {
            return Err((decorator, "a registration decorates no function".into()));
        };
        if registered_name(root, func).is_none() {
            return Err((decorator, "a tool registered under a name that is not a known string".into()));
        }
    }
    Ok(())
}

/// A string an expression certainly has: a plain literal or an enum member.
fn expr_value(root: Node<'_>, e: Node<'_>) -> Option<String> {
    match e.kind() {
        "string" => plain(e),
        "attribute" => {
            let parts: Vec<String> = bindings::compact(e.text()).split('.').map(str::to_owned).collect();
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
    let module = bindings::bindings_at(root, Some(class));
    let [binding] = module.get(class)?.as_slice() else { return None };
    let def = binding.node.parent().filter(|d| d.kind() == "class_definition")?;
    if !plain_enum(root, def) {
        return None;
    }
    let body = bindings::bindings_at(def, Some(member));
    let [assigned] = body.get(member)?.as_slice() else { return None };
    match assigned.kind {
        bindings::BindingKind::Value(v) => plain(v),
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
    let module = bindings::bindings_at(root, None);
    let imported_as =
        |name: &str, path: &str| module.get(name).is_some_and(|bs| bs.iter().all(|b| matches!(&b.kind, bindings::BindingKind::Import(p) if p == path)));
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
    super::syntax::plain_string(node)
}
