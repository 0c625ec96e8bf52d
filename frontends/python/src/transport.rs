//! What carries requests to the server: the MCP SDK's own streams.
//!
//! The low-level server reads every request from the streams it is run
//! with (`async with stdio_server() as (read, write): await
//! server.run(read, write, options)`). A stream of the release wrapped
//! around the SDK's (`server.run(Rewriting(read), …)`), or a class of the
//! release extending one of the SDK's (the server, a session), can rewrite a
//! call's arguments after fcd judged them, in code no region reads. So, in
//! every loaded file:
//! - a class whose base is a name of the MCP SDK (`mcp.…`) escalates;
//! - a server of the SDK run with streams (`S.run(read, write, …)`, `S`
//!   built by the SDK, or a value fcd cannot name) is run with the very names an `async with` (or
//!   `with`) of an SDK transport (`mcp.…()`) binds, bound nowhere else in
//!   the function.
//!
//! Anything else escalates `shape_mismatch`, naming the line. What the SDK
//! itself does with a message stays the envelope's assumption.

use fcd_frontends::frontend::Program;
use fcd_frontends::ir::{Escalation, EscalationCode};
use fcd_frontends::ts::Node;
use fcd_model::effect::Anchor;

use super::bindings::is_function;
use super::scope::Scope;

/// The SDK's package, as resolved paths start.
const SDK: &str = "mcp.";

/// Checks every loaded file's SDK subclasses and the streams its servers run with.
pub(super) fn check(program: &Program<'_, '_>) -> Result<(), Escalation> {
    for (file, syntax) in program.trees {
        let root = syntax.root();
        for n in root.descendants() {
            let why = match n.kind() {
                "class_definition" => sdk_base(root, file, n),
                "call" => run_with_other_streams(root, file, n),
                _ => None,
            };
            if let Some(why) = why {
                return Err(Escalation::new(EscalationCode::ShapeMismatch, format!("{file}:{}: {why}", n.line()), Some(Anchor::at_line(file, n.line()))));
            }
        }
    }
    Ok(())
}

/// The scope names at `n` resolve in: its function's, or the module's.
fn scope_at<'a>(root: Node<'a>, file: &str, n: Node<'a>) -> Scope<'a> {
    match n.ancestors().find(|a| is_function(*a)) {
        Some(function) => Scope::new(root, function, file),
        None => Scope::module(root, file),
    }
}

/// Why a class of the release extending an SDK name escalates.
fn sdk_base(root: Node<'_>, file: &str, class: Node<'_>) -> Option<String> {
    let scope = scope_at(root, file, class);
    let bases = class.field_child("superclasses")?;
    bases.named_children().filter(|b| b.kind() != "keyword_argument" && b.kind() != "comment").find_map(|base| {
        let path = scope.resolve(base)?;
        path.starts_with(SDK).then(|| {
            format!(
                "the class `{}` of the release extends the MCP SDK's `{path}`: it can change how a request reaches the server",
                class.field_child("name").map(|n| n.text()).unwrap_or_default()
            )
        })
    })
}

/// Why a server of the SDK run with streams other than an SDK transport's escalates.
fn run_with_other_streams(root: Node<'_>, file: &str, call: Node<'_>) -> Option<String> {
    let function = call.field_child("function").filter(|f| f.kind() == "attribute")?;
    if function.field_child("attribute")?.text() != "run" {
        return None;
    }
    let scope = scope_at(root, file, call);
    // A receiver fcd cannot name (a parameter, a value of unknown origin) may
    // be the SDK's server: checked, failing closed.
    let receiver = function.field_child("object")?;
    let server = scope.resolve(receiver).unwrap_or_else(|| receiver.text().to_owned());
    if scope.resolve(receiver).is_some_and(|s| !(s.starts_with(SDK) && s.ends_with("()"))) {
        return None;
    }
    let positional: Vec<Node<'_>> = call.field_child("arguments")?.named_children().filter(|a| !matches!(a.kind(), "keyword_argument" | "comment")).collect();
    if positional.len() < 2 {
        return None;
    }
    for stream in &positional[..2] {
        let entered = stream.kind() == "identifier" && matches!(scope.bindings(stream.text()), [b] if entered_from_sdk(&scope, b.node));
        if !entered {
            return Some(format!(
                "the MCP SDK's server `{server}` is run with `{}`, not a stream an SDK transport (`async with mcp….() as (read, write)`) binds once: \
                 code of the release would see every request first",
                stream.text()
            ));
        }
    }
    None
}

/// Whether the binding `name` is a target of `with M as …` (or `async
/// with`), `M` an SDK transport's call.
fn entered_from_sdk(scope: &Scope<'_>, name: Node<'_>) -> bool {
    let Some(pattern) = name.ancestors().find(|a| a.kind() == "as_pattern") else { return false };
    let Some(alias) = pattern.field_child("alias") else { return false };
    let in_alias = name.ancestors().any(|a| a == alias);
    let manager = pattern.named_children().find(|m| *m != alias && m.kind() != "comment");
    in_alias
        && pattern.parent().is_some_and(|p| p.kind() == "with_item")
        && manager.and_then(|m| scope.resolve(m)).is_some_and(|m| m.starts_with(SDK) && m.ends_with("()"))
}
