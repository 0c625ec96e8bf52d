//! Which code of the release a function value holds.
//!
//! Two places hand the call path a function as a value instead of naming
//! it: an SDK's middleware and hook APIs ([`super::middleware`]), and a
//! parameter a handler literal calls (`getClient(ctx)` in a handler whose
//! function receives `getClient`, v0.2 to v0.25 of github-mcp-server). Either way
//! what runs is whatever the value holds, so it is followed back to code a
//! pin can bind, failing closed:
//! - a function of the release, named or called as a factory: that
//!   function (its closure holds what it returns), and every function of the
//!   release the factory is handed (it may run inside what the factory
//!   builds); a factory handed a function literal is unbound (that code
//!   would run unread);
//! - a function literal, in place or bound once to a local: pinned with the
//!   other literals its function hands on under the same name, keyed
//!   `DIR.FUNC#NAME` (NAME: the installing API, or the parameter that
//!   receives it); what a literal captures is data its statement describes;
//! - a parameter of the function around it: every call of that function in
//!   the module, at that position (for a variadic one, every argument from
//!   there), followed the same way, through at most [`DEPTH`] calls; the
//!   function used other than by a call is unbound;
//! - code of a package outside the release: trusted by identity.
//!
//! Anything else is unbound (a field, an element, a method's result, a
//! local assigned twice, a package variable), and escalates.

use fcd_frontends::frontend::Region;
use fcd_frontends::ts::Node;

use super::index::Index;
use super::scope;

/// How many calls back a parameter is followed.
const DEPTH: usize = 4;

/// Code a function value may hold, and where the value is handed on.
pub(super) struct Source<'a> {
    pub(super) file: &'a str,
    pub(super) at: Node<'a>,
    pub(super) what: What<'a>,
}

pub(super) enum What<'a> {
    /// A function of the release: `name` of package `dir`.
    Function { dir: String, name: String },
    /// A function literal, pinned with the others of `key` (`FUNC#NAME`) in package `dir`.
    Literal { dir: String, key: String, literal: Node<'a> },
    /// Code no pin can name, and why.
    Unbound(String),
}

/// What each handler literal calls through a parameter of the function
/// around it (a captured `getClient`). A function region calling its own
/// parameter (a reviewed wrapper running the handler it is handed) calls
/// what the profile's shape binds, not code a value brings.
pub(super) fn called_parameters<'a>(regions: &[Region<'a>], index: &Index<'_, 'a>) -> Vec<Source<'a>> {
    let mut out = Vec::new();
    for region in regions.iter().filter(|r| r.node.kind() == "func_literal") {
        let function = scope::enclosing(region.node);
        let mut done: Vec<&str> = Vec::new();
        for call in region.node.descendants().filter(|n| n.kind() == "call_expression") {
            let Some(callee) = call.field_child("function").filter(|f| f.kind() == "identifier") else { continue };
            let name = callee.text();
            if done.contains(&name) || position(function, name).is_none() {
                continue;
            }
            done.push(name);
            parameter(index, region.file, callee, name, 0, &mut out);
        }
    }
    out
}

/// What the expression `e` of `file` holds, handed on as `name` (an
/// installing API, or the parameter receiving it), `depth` calls back.
pub(super) fn sources_of<'a>(index: &Index<'_, 'a>, file: &'a str, e: Node<'a>, name: &str, depth: usize, out: &mut Vec<Source<'a>>) {
    let mut e = e;
    while e.kind() == "parenthesized_expression" {
        let Some(inner) = e.named_children().next() else { break };
        e = inner;
    }
    let dir = scope::dir(file);
    let unbound = |why: String| Source { file, at: e, what: What::Unbound(why) };
    let literal = |literal: Node<'a>| match enclosing_key(literal) {
        Some(function) => Source { file, at: e, what: What::Literal { dir: dir.to_owned(), key: format!("{function}#{name}"), literal } },
        None => Source { file, at: e, what: What::Unbound("a function literal outside any function".to_owned()) },
    };
    match e.kind() {
        "func_literal" => out.push(literal(e)),
        "variadic_argument" => match e.named_children().next().filter(|p| p.kind() == "identifier") {
            Some(p) if position(scope::enclosing(p), p.text()).is_some() => parameter(index, file, p, p.text(), depth, out),
            _ => out.push(unbound(format!("`{}` spreads a value no pin can name", e.compact_text()))),
        },
        "identifier" => {
            if let Some(l) = bound_once(e) {
                out.push(literal(l));
            } else if let Some(f) = function(index, dir, e) {
                out.extend(f.map(|what| Source { file, at: e, what }));
            } else if position(scope::enclosing(e), e.text()).is_some() {
                parameter(index, file, e, e.text(), depth, out);
            } else {
                out.push(unbound(format!("`{}` is neither a function of the release, a parameter, nor a local bound once to a function literal", e.text())));
            }
        }
        "selector_expression" => match function(index, dir, e) {
            Some(f) => out.extend(f.map(|what| Source { file, at: e, what })),
            None => out.push(unbound(format!("`{}` is not a function fcd can name", e.compact_text()))),
        },
        "call_expression" => {
            let arguments: Vec<Node<'a>> = e.field_child("arguments").map(|a| a.named_children().collect()).unwrap_or_default();
            if arguments.iter().any(|a| a.kind() == "func_literal" || a.descendants().any(|d| d.kind() == "func_literal")) {
                out.push(unbound(format!("`{}` hands a function literal to what builds it", e.compact_text())));
                return;
            }
            match e.field_child("function").and_then(|f| function(index, dir, f)) {
                Some(f) => out.extend(f.map(|what| Source { file, at: e, what })),
                None => out.push(unbound(format!("`{}` is not the call of a function fcd can name", e.compact_text()))),
            }
            // A function of the release handed to the factory (its own or a
            // dependency's) may run inside what it builds: bound too.
            for argument in arguments {
                if let Some(Some(what)) = function(index, dir, argument) {
                    out.push(Source { file, at: argument, what });
                }
            }
        }
        _ => out.push(unbound(format!("`{}` is not a function, a call of one, or a function literal", e.compact_text()))),
    }
}

/// The function the name `f` (in package `dir`) names: `Some(Some(..))` for
/// the release's, `Some(None)` for a dependency's (trusted by identity),
/// `None` when it names no function.
fn function<'a>(index: &Index<'_, 'a>, dir: &str, f: Node<'a>) -> Option<Option<What<'a>>> {
    let mut f = f;
    while matches!(f.kind(), "index_expression" | "generic_type") {
        f = f.field_child("operand").or_else(|| f.field_child("type"))?;
    }
    match f.kind() {
        "identifier" if bound_locally(f) => None,
        "identifier" if index.declares_function(dir, f.text()) => Some(Some(What::Function { dir: dir.to_owned(), name: f.text().to_owned() })),
        "selector_expression" => {
            let (package, member) = (f.field_child("operand")?, f.field_child("field")?);
            if package.kind() != "identifier" || bound_locally(package) {
                return None;
            }
            let imports = scope::imports(f.ancestors().last().unwrap_or(f));
            let (path, _) = imports.get(package.text())?;
            match index.release(path) {
                None => Some(None),
                Some(target) if index.declares_function(&target, member.text()) => Some(Some(What::Function { dir: target, name: member.text().to_owned() })),
                Some(_) => None,
            }
        }
        _ => None,
    }
}

/// Whether the function around `name` binds it (a parameter, a local), so
/// it names no package-level function or import there.
fn bound_locally(name: Node<'_>) -> bool {
    let function = scope::enclosing(name);
    position(function, name.text()).is_some()
        || function.descendants().any(|n| {
            let names: Vec<Node<'_>> = match n.kind() {
                "var_spec" => n.field_children("name").collect(),
                "short_var_declaration" | "range_clause" => n.field_child("left").map(|l| l.named_children().collect()).unwrap_or_default(),
                _ => Vec::new(),
            };
            names.iter().any(|m| m.kind() == "identifier" && m.text() == name.text())
        })
}

/// The function literal the local `name` is bound to, when its one binding
/// in the function around it is `name := func(…) {…}` (or `var name =`)
/// and nothing else assigns it or takes its address.
fn bound_once<'a>(name: Node<'a>) -> Option<Node<'a>> {
    let function = scope::enclosing(name);
    if !matches!(function.kind(), "function_declaration" | "method_declaration") {
        return None;
    }
    let mut literal = None;
    for n in function.descendants() {
        let (left, right) = match n.kind() {
            "short_var_declaration" | "assignment_statement" => (n.field_child("left"), n.field_child("right")),
            "var_spec" => (Some(n), n.field_child("value")),
            "unary_expression" if n.field_child("operator").is_some_and(|o| o.text() == "&") => {
                if n.field_child("operand").is_some_and(|o| o.kind() == "identifier" && o.text() == name.text()) {
                    return None;
                }
                continue;
            }
            _ => continue,
        };
        let names: Vec<Node<'a>> = match n.kind() {
            "var_spec" => n.field_children("name").collect(),
            _ => left.into_iter().flat_map(|l| l.named_children()).collect(),
        };
        let Some(at) = names.iter().position(|l| l.kind() == "identifier" && l.text() == name.text()) else { continue };
        let value = right.and_then(|r| r.named_children().nth(at)).filter(|v| v.kind() == "func_literal");
        if n.kind() == "assignment_statement" || literal.is_some() || value.is_none() {
            return None;
        }
        literal = value;
    }
    literal
}

/// `F` or `T.m`: the top-level function or method holding `n`.
pub(super) fn enclosing_key(n: Node<'_>) -> Option<String> {
    let function = scope::enclosing(n);
    let name = function.field_child("name")?.text();
    match function.kind() {
        "function_declaration" => Some(name.to_owned()),
        "method_declaration" => Some(format!("{}.{name}", super::syntax::receiver_type(function)?)),
        _ => None,
    }
}

/// The position of the parameter `name` among the parameters of the
/// top-level function `function`, and whether it is the variadic one.
fn position(function: Node<'_>, name: &str) -> Option<(usize, bool)> {
    if !matches!(function.kind(), "function_declaration" | "method_declaration") {
        return None;
    }
    let mut at = 0;
    for p in function.field_child("parameters")?.named_children() {
        let names: Vec<Node<'_>> = p.field_children("name").collect();
        if let Some(i) = names.iter().position(|n| n.text() == name) {
            return Some((at + i, p.kind() == "variadic_parameter_declaration"));
        }
        at += names.len().max(1);
    }
    None
}

/// What the parameter `name` of the function around `at` may hold: every
/// argument at its position in every call of the function in the module.
fn parameter<'a>(index: &Index<'_, 'a>, file: &'a str, at: Node<'a>, name: &str, depth: usize, out: &mut Vec<Source<'a>>) {
    let function = scope::enclosing(at);
    let unbound = |why: String| Source { file, at, what: What::Unbound(why) };
    let (Some((position, variadic)), Some(key)) = (position(function, name), function.field_child("name").map(|n| n.text())) else {
        out.push(unbound(format!("`{name}` is not a parameter fcd can follow")));
        return;
    };
    if function.kind() != "function_declaration" {
        out.push(unbound(format!("`{name}` is a parameter of the method `{key}`, whose callers fcd does not follow")));
        return;
    }
    if depth >= DEPTH {
        out.push(unbound(format!("`{name}` is handed on through more than {DEPTH} calls")));
        return;
    }
    let calls = match callers(index, scope::dir(file), key) {
        Ok(calls) => calls,
        Err(why) => return out.push(unbound(why)),
    };
    for (caller, call) in calls {
        let arguments: Vec<Node<'a>> = call.field_child("arguments").map(|a| a.named_children().collect()).unwrap_or_default();
        let handed: Vec<Node<'a>> = match variadic {
            true => arguments.iter().skip(position).copied().collect(),
            false => arguments.get(position).copied().into_iter().collect(),
        };
        if !variadic && handed.is_empty() {
            out.push(Source { file: caller, at: call, what: What::Unbound(format!("`{key}` is called with no argument for `{name}`")) });
        }
        for argument in handed {
            sources_of(index, caller, argument, name, depth + 1, out);
        }
    }
}

/// Every call of the top-level function `name` of package `dir` in the
/// module; an error naming the site when it is used other than by a call.
fn callers<'a>(index: &Index<'_, 'a>, dir: &str, name: &str) -> Result<Vec<(&'a str, Node<'a>)>, String> {
    let mut calls = Vec::new();
    for (file, syntax) in index.all_files() {
        let imports = scope::imports(syntax.root());
        let same = scope::dir(file) == dir;
        for n in syntax.root().descendants() {
            let names_it = match n.kind() {
                "identifier" => same && n.text() == name && !super::syntax::is_member(n) && n.parent().is_none_or(|p| p.kind() != "function_declaration"),
                "selector_expression" => {
                    n.field_child("field").is_some_and(|f| f.text() == name)
                        && n.field_child("operand").is_some_and(|o| imports.get(o.text()).is_some_and(|(path, _)| index.release(path).as_deref() == Some(dir)))
                }
                _ => false,
            };
            if !names_it {
                continue;
            }
            match n.parent().filter(|p| p.kind() == "call_expression" && p.field_child("function").is_some_and(|f| f.byte_range() == n.byte_range())) {
                Some(call) => calls.push((file, call)),
                None => return Err(format!("{file}:{} uses `{name}` other than by calling it, so what its parameters hold is not found", n.line())),
            }
        }
    }
    Ok(calls)
}
