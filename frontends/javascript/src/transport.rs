//! What carries requests to the server: the MCP SDK's transport.
//!
//! A tool call reaches the route through a transport the release builds
//! and hands the server (`server.connect(new StdioServerTransport())`, or
//! the SDK's `serveStdio(…, { transport: … })`): the transport decodes each
//! message and hands it on through its `onmessage`. A release class that
//! extends a class of the SDK (a transport, or the server), a transport
//! whose `onmessage` or `send` is written or that is handed to code the
//! release defines, or an object of the release standing in for one, can
//! rewrite a call's arguments after fcd judged them, in code no region
//! reads. So, in every loaded file:
//! - a class extending a binding imported from an MCP SDK package
//!   (`@modelcontextprotocol/…`) escalates;
//! - a transport built from the SDK (`new X(…)`, `X` imported from an SDK
//!   package and named `…Transport`) is handed to a `connect` call, or is
//!   the value of an option of an SDK function's call, or is bound once
//!   to a `const` (or assigned, built in place each time, to a `let`
//!   declared without a value: an SSE route's transport) used only those
//!   ways, by its methods
//!   (`transport.handleRequest(…)`, `transport.close()`), by reading a
//!   property, or by setting `onclose` or `onerror` (which run when it
//!   closes or fails, never between a message and the server); a stdio
//!   transport is built from the process's own streams (`process.stdin`, or
//!   a parameter defaulting to one that no call in the release supplies) or
//!   options written in place (an HTTP transport reads what its
//!   `handleRequest` is handed: what express runs before it is the
//!   envelope's, see below);
//! - what a server the SDK built (`const server = new McpServer(…)`) is
//!   connected to, and a `transport` option of an SDK function's call, is
//!   such a transport.
//!
//! Anything else escalates `shape_mismatch`, naming the line. What the SDK
//! itself does with a message stays the envelope's assumption.

use fcd_frontends::ir::{Escalation, EscalationCode};
use fcd_frontends::ts::{Node, Syntax};
use fcd_model::effect::Anchor;

use super::FUNCTIONS;
use super::bindings::{Head, module_head};
use super::syntax::{arguments, bare};

/// The import specifiers of the MCP SDKs (v1's one package, v2's several).
const SDK: &str = "@modelcontextprotocol/";

/// Members of a transport the release may set: they run when it closes or fails.
const SETTABLE: &[&str] = &["onclose", "onerror"];

/// Checks every loaded file's transports and SDK subclasses.
pub(super) fn check(trees: &[(&str, &Syntax)]) -> Result<(), Escalation> {
    for (file, syntax) in trees {
        let root = syntax.root();
        let fail = |n: Node<'_>, why: String| Err(Escalation::new(EscalationCode::ShapeMismatch, why, Some(Anchor::at_line(file, n.line()))));
        for n in root.descendants() {
            match n.kind() {
                "class_heritage" => {
                    // JavaScript: `extends X`; TypeScript: an `extends_clause` holding X.
                    let first = n.named_children().find(|c| c.kind() != "comment");
                    let extended = first.map(|c| if c.kind() == "extends_clause" { c.field_child("value").unwrap_or(c) } else { c }).map(bare);
                    if let Some(base) = extended.filter(|b| from_sdk(root, *b)) {
                        return fail(
                            n,
                            format!(
                                "{file}:{}: a class of the release extends the MCP SDK's `{}`: it can change how a request reaches the server",
                                n.line(),
                                base.compact_text()
                            ),
                        );
                    }
                }
                "new_expression" if is_transport(root, n) => {
                    if let Err(why) = transport_used_as_sdk_expects(root, trees, n) {
                        return fail(n, format!("{file}:{}: the MCP SDK transport `{}` {why}", n.line(), n.compact_text()));
                    }
                }
                "call_expression" => {
                    for handed in handed_transports(root, n) {
                        if !holds_transport(root, handed) {
                            return fail(
                                handed,
                                format!(
                                    "{file}:{}: `{}` is handed to the MCP SDK as what carries requests, and is not a transport the SDK built: \
                                     code of the release would see every call first",
                                    handed.line(),
                                    handed.compact_text()
                                ),
                            );
                        }
                    }
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// Whether `n` (an identifier or a member chain) names a binding the file
/// imports from an MCP SDK package.
fn from_sdk(root: Node<'_>, n: Node<'_>) -> bool {
    let head = match n.kind() {
        "identifier" => n,
        "member_expression" => match std::iter::successors(Some(n), |m| m.field_child("object").map(bare)).last() {
            Some(h) if h.kind() == "identifier" => h,
            _ => return false,
        },
        _ => return false,
    };
    matches!(module_head(root, head.text()), Head::Import(spec, _) if spec.starts_with(SDK))
}

/// `new X(…)` with `X` an SDK transport class.
fn is_transport(root: Node<'_>, n: Node<'_>) -> bool {
    n.field_child("constructor").map(bare).is_some_and(|c| {
        let name = c.field_child("property").unwrap_or(c).text();
        name.ends_with("Transport") && from_sdk(root, c)
    })
}

/// The values a call hands the SDK as what carries requests: the argument
/// of `S.connect(…)` for a server `S` the SDK built, and a `transport`
/// option of an SDK function's call.
fn handed_transports<'a>(root: Node<'a>, call: Node<'a>) -> Vec<Node<'a>> {
    let Some(function) = call.field_child("function").map(bare) else { return Vec::new() };
    let mut out = Vec::new();
    if function.kind() == "member_expression" && function.field_child("property").is_some_and(|p| p.text() == "connect") {
        let server = function.field_child("object").map(bare).filter(|o| o.kind() == "identifier");
        if server.is_some_and(|s| {
            bound_once(s).is_some_and(|v| v.kind() == "new_expression" && v.field_child("constructor").is_some_and(|c| from_sdk(root, bare(c))))
        }) {
            out.extend(arguments(call).into_iter().map(bare));
        }
    }
    if from_sdk(root, function) {
        for option in arguments(call).into_iter().map(bare).filter(|a| a.kind() == "object").flat_map(|o| o.named_children()) {
            let key = option.field_child("key").map(|k| k.text().trim_matches(['"', '\'']));
            match option.kind() {
                "pair" if key == Some("transport") => out.extend(option.field_child("value").map(bare)),
                "shorthand_property_identifier" if option.text() == "transport" => out.push(option),
                _ => {}
            }
        }
    }
    out
}

/// Whether `n` is an SDK transport: built in place, a `const` bound once to
/// one, or a `let` only ever assigned ones.
fn holds_transport(root: Node<'_>, n: Node<'_>) -> bool {
    match n.kind() {
        "new_expression" => is_transport(root, n),
        "identifier" | "shorthand_property_identifier" => {
            bound_once(n).is_some_and(|v| v.kind() == "new_expression" && is_transport(root, v)) || assigned_only_transports(root, n).is_some()
        }
        _ => false,
    }
}

/// The value the name `n` is bound to: the `const` of the nearest block
/// around it that declares the name, when that block declares it once and
/// no function between binds it as a parameter.
fn bound_once(n: Node<'_>) -> Option<Node<'_>> {
    declarator(n).and_then(|d| d.field_child("value")).map(bare)
}

/// The declarator [`bound_once`] reads the value of.
fn declarator(n: Node<'_>) -> Option<Node<'_>> {
    for block in n.ancestors() {
        if FUNCTIONS.contains(&block.kind()) {
            let parameters = block.field_child("parameters").or_else(|| block.field_child("parameter"));
            if parameters.is_some_and(|p| p.descendants().any(|i| i.kind() == "identifier" && i.text() == n.text())) {
                return None;
            }
        }
        if !matches!(block.kind(), "statement_block" | "program" | "switch_case" | "switch_default") {
            continue;
        }
        let declared: Vec<Node<'_>> = block
            .named_children()
            .map(|s| if s.kind() == "export_statement" { s.field_child("declaration").unwrap_or(s) } else { s })
            .filter(|s| matches!(s.kind(), "lexical_declaration" | "variable_declaration"))
            .flat_map(|s| s.named_children().filter(|d| d.kind() == "variable_declarator"))
            .filter(|d| d.field_child("name").is_some_and(|m| m.kind() == "identifier" && m.text() == n.text()))
            .collect();
        match declared[..] {
            [] => continue,
            [d] => return d.parent().is_some_and(|p| p.kind() == "lexical_declaration" && p.text().starts_with("const")).then_some(d),
            _ => return None,
        }
    }
    None
}

/// Whether the transport `n` is used only as the SDK expects (module doc), else why not.
fn transport_used_as_sdk_expects(root: Node<'_>, trees: &[(&str, &Syntax)], n: Node<'_>) -> Result<(), String> {
    // The stdio transport reads the streams it is built with; the HTTP ones
    // are built from an endpoint and the response they write to, and read
    // what `handleRequest`/`handlePostMessage` hands them.
    let stdio = n.field_child("constructor").map(bare).is_some_and(|c| c.field_child("property").unwrap_or(c).text() == "StdioServerTransport");
    for argument in arguments(n).into_iter().map(bare).filter(|_| stdio) {
        own_stream(trees, argument)?;
    }
    let at = outermost(n);
    let Some(parent) = at.parent() else { return Err("stands alone".into()) };
    match parent.kind() {
        "arguments" if is_connect(parent) => Ok(()),
        "pair" if sdk_option(root, parent) => Ok(()),
        "variable_declarator" => {
            let Some(name) = parent.field_child("name").filter(|m| m.kind() == "identifier") else {
                return Err("is destructured".into());
            };
            if bound_once(name).is_none_or(|v| v != n) {
                return Err(format!("is bound to `{}`, which is not a `const` declared once", name.text()));
            }
            // The block declaring it: every use of the name there (one a nested scope binds
            // again included, failing closed).
            let scope = parent.ancestors().find(|a| matches!(a.kind(), "statement_block" | "program" | "switch_case" | "switch_default")).unwrap_or(root);
            for r in scope.descendants().filter(|r| matches!(r.kind(), "identifier" | "shorthand_property_identifier") && r.text() == name.text() && *r != name)
            {
                use_as_sdk_expects(root, r).map_err(|why| format!("is bound to `{}`, which {why} at line {}", name.text(), r.line()))?;
            }
            Ok(())
        }
        // `transport = new SSEServerTransport(…)` in a route, `let transport;` declared around it.
        "assignment_expression" if parent.field_child("right") == Some(at) => {
            let Some(name) = parent.field_child("left").filter(|l| l.kind() == "identifier") else {
                return Err("is assigned to a member".into());
            };
            let Some(block) = assigned_only_transports(root, name) else {
                return Err(format!("is assigned to `{}`, which is declared with a value or assigned something else", name.text()));
            };
            for r in block.descendants().filter(|r| matches!(r.kind(), "identifier" | "shorthand_property_identifier") && r.text() == name.text()) {
                use_as_sdk_expects(root, r).map_err(|why| format!("is assigned to `{}`, which {why} at line {}", name.text(), r.line()))?;
            }
            Ok(())
        }
        _ => Err("is used other than handed to the server, to an SDK function or to a `const`".into()),
    }
}

/// The block declaring `name` (`let name;`, no value), when every
/// assignment to it there assigns an SDK transport built in place.
fn assigned_only_transports<'a>(root: Node<'a>, name: Node<'a>) -> Option<Node<'a>> {
    let block = name.ancestors().find(|b| {
        matches!(b.kind(), "statement_block" | "program" | "switch_case" | "switch_default")
            && b.named_children()
                .filter(|s| s.kind() == "lexical_declaration")
                .flat_map(|s| s.named_children())
                .any(|d| d.kind() == "variable_declarator" && d.field_child("name").is_some_and(|m| m.text() == name.text()))
    })?;
    let declarators: Vec<Node<'a>> =
        block.descendants().filter(|d| d.kind() == "variable_declarator" && d.field_child("name").is_some_and(|m| m.text() == name.text())).collect();
    let [declarator] = declarators[..] else { return None };
    let assigned_well = block.descendants().filter(|a| matches!(a.kind(), "assignment_expression" | "augmented_assignment_expression")).all(|a| {
        a.field_child("left").is_none_or(|l| l.kind() != "identifier" || l.text() != name.text())
            || (a.kind() == "assignment_expression" && a.field_child("right").map(bare).is_some_and(|r| r.kind() == "new_expression" && is_transport(root, r)))
    });
    (declarator.field_child("value").is_none() && assigned_well).then_some(block)
}

/// Whether one use of a `const` holding a transport is one the SDK expects, else why not.
fn use_as_sdk_expects(root: Node<'_>, r: Node<'_>) -> Result<(), String> {
    let at = outermost(r);
    let Some(parent) = at.parent() else { return Err("stands alone".into()) };
    match parent.kind() {
        "arguments" if is_connect(parent) => Ok(()),
        "pair" if sdk_option(root, parent) => Ok(()),
        "object" if r.kind() == "shorthand_property_identifier" && parent.parent().is_some_and(|a| a.kind() == "arguments" && sdk_call(root, a)) => Ok(()),
        // `transport?.["_sessionId"]`: a read, unless written.
        "subscript_expression" if parent.field_child("object") == Some(at) => match parent.parent() {
            Some(g) if matches!(g.kind(), "assignment_expression" | "augmented_assignment_expression" | "update_expression") => {
                Err("has a member written".into())
            }
            _ => Ok(()),
        },
        // The assignments [`assigned_only_transports`] allowed.
        "assignment_expression" if parent.field_child("left") == Some(at) => match parent.field_child("right").map(bare) {
            Some(r) if r.kind() == "new_expression" && is_transport(root, r) => Ok(()),
            _ => Err("is assigned something else".into()),
        },
        // Its declaration (`let transport: SSEServerTransport;`).
        "variable_declarator" if parent.field_child("name") == Some(at) && parent.field_child("value").is_none() => Ok(()),
        "member_expression" if parent.field_child("object") == Some(at) => {
            let property = parent.field_child("property").map(|p| p.text()).unwrap_or_default();
            let written = parent.parent().filter(|g| match g.kind() {
                "assignment_expression" | "augmented_assignment_expression" => g.field_child("left") == Some(parent),
                "update_expression" => true,
                "unary_expression" => g.field_child("operator").is_some_and(|o| o.text() == "delete"),
                _ => false,
            });
            match written {
                Some(_) if SETTABLE.contains(&property) => Ok(()),
                Some(_) => Err(format!("has its `{property}` written")),
                None => Ok(()),
            }
        }
        _ => Err("is handed on or written".into()),
    }
}

/// `n` with the parentheses, `await` and TypeScript casts around it: the
/// node whose parent says how the value is used.
fn outermost(n: Node<'_>) -> Node<'_> {
    let mut at = n;
    while let Some(p) = at.parent().filter(|p| matches!(p.kind(), "parenthesized_expression" | "await_expression" | "as_expression" | "non_null_expression")) {
        at = p;
    }
    at
}

/// Whether an argument list is the one argument of a `.connect(…)` call.
fn is_connect(arguments: Node<'_>) -> bool {
    let call = arguments.parent().filter(|c| c.kind() == "call_expression");
    let function = call.and_then(|c| c.field_child("function")).map(bare);
    function.is_some_and(|f| f.kind() == "member_expression" && f.field_child("property").is_some_and(|p| p.text() == "connect"))
        && arguments.named_children().filter(|a| a.kind() != "comment").count() == 1
}

/// Whether `pair` is an option of an object literal handed to an SDK function.
fn sdk_option(root: Node<'_>, pair: Node<'_>) -> bool {
    pair.parent().filter(|o| o.kind() == "object").and_then(|o| o.parent()).is_some_and(|a| a.kind() == "arguments" && sdk_call(root, a))
}

/// Whether an argument list is a call of a function imported from the SDK.
fn sdk_call(root: Node<'_>, arguments: Node<'_>) -> bool {
    arguments.parent().filter(|c| c.kind() == "call_expression").and_then(|c| c.field_child("function")).is_some_and(|f| from_sdk(root, bare(f)))
}

/// A transport's constructor argument: the process's own stream, options
/// written in place, or a parameter defaulting to the process's stream that
/// no call of its function in the release supplies.
fn own_stream(trees: &[(&str, &Syntax)], argument: Node<'_>) -> Result<(), String> {
    let is_process_stream = |n: Node<'_>| matches!(n.compact_text().as_str(), "process.stdin" | "process.stdout");
    if is_process_stream(argument) || argument.kind() == "object" {
        return Ok(());
    }
    let unsupplied = argument.kind() == "identifier"
        && argument.ancestors().find(|a| FUNCTIONS.contains(&a.kind())).is_some_and(|function| {
            let Some(parameters) = function.field_child("parameters") else { return false };
            let Some(position) = parameters.named_children().position(|p| {
                p.kind() == "assignment_pattern"
                    && p.field_child("left").is_some_and(|l| l.text() == argument.text())
                    && p.field_child("right").is_some_and(is_process_stream)
            }) else {
                return false;
            };
            let Some(name) = function.field_child("name").map(|n| n.text()) else { return false };
            !trees.iter().any(|(_, s)| {
                s.root().descendants().any(|c| {
                    c.kind() == "call_expression"
                        && c.field_child("function").map(bare).is_some_and(|f| f.text() == name || f.field_child("property").is_some_and(|p| p.text() == name))
                        && arguments(c).len() > position
                }) || s
                    .root()
                    .descendants()
                    .any(|i| i.kind() == "identifier" && i.text() == name && !i.parent().is_some_and(|p| p.kind() == "call_expression" || p == function))
            })
        });
    if unsupplied { Ok(()) } else { Err(format!("is built from `{}`, not the process's own stream or options written in place", argument.compact_text())) }
}
