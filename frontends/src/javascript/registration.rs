//! Callback regions: the function literal a registration API runs for a tool
//! (`server.registerTool("write_file", {…}, async (args) => {…})`).
//!
//! What makes such a region the code that runs for the tool is the call that
//! registers it, so that call is one of the region's call sites (its callee
//! must be reviewed), and nothing else in the analysed code may name the tool:
//! a second registration under the same name, in any form (a named handler,
//! a computed table, a later override), could replace the reviewed one, so
//! the tool's name must be a plain string literal exactly once.

use crate::ir::{Anchor, Escalation, EscalationCode};
use crate::lang::Region;
use crate::ts::{Node, Syntax};

use super::syntax::{arguments, bare, string_content};

/// The function literal `call` registers for `tool`: `call`'s first argument
/// is the string literal `tool` and its last a function literal.
pub(super) fn registered_callback<'a>(call: Node<'a>, tool: &str) -> Option<Node<'a>> {
    if call.kind() != "call_expression" {
        return None;
    }
    let args = arguments(call);
    let (first, last) = (args.first()?, args.last()?);
    if args.len() < 2 || string_content(*first).as_deref() != Some(tool) {
        return None;
    }
    let callback = bare(*last);
    matches!(callback.kind(), "arrow_function" | "function_expression" | "function").then_some(callback)
}

/// The call that registers `region` when it is a registered callback.
pub(super) fn registration_of(region: Node<'_>) -> Option<Node<'_>> {
    let call = region.ancestors().find(|a| a.kind() == "call_expression")?;
    let args = arguments(call);
    let first = args.first()?;
    let tool = string_content(*first)?;
    (registered_callback(call, &tool) == Some(region)).then_some(call)
}

/// Every registered-callback region's tool is registered once, as written:
/// its name is a plain string literal exactly once in the analysed files
/// (comments are not strings and never count), and every call of the
/// registering method (by its final name, whatever the receiver) names its
/// tool by a plain string literal, so no computed name can be the same tool.
pub(super) fn check_unique(trees: &[(&str, &Syntax)], regions: &[Region<'_>]) -> Result<(), Escalation> {
    for region in regions {
        let Some(call) = registration_of(region.node) else { continue };
        let Some(tool) = arguments(call).first().and_then(|a| string_content(*a)) else { continue };
        let method = method_name(call);
        let ambiguous = |file: &str, at: Node<'_>, why: String| {
            Err(Escalation::new(
                EscalationCode::RegionAmbiguous,
                format!("region `{}`: {why}", region.name),
                Some(Anchor::new(file, at.line(), at.end_line(), at.text())),
            ))
        };
        let mut named = 0;
        for (file, syntax) in trees {
            for n in syntax.root().descendants() {
                if matches!(n.kind(), "string" | "template_string") && string_content(n).as_deref() == Some(tool.as_str()) {
                    named += 1;
                    if !call.contains(n) {
                        return ambiguous(
                            file,
                            n,
                            format!("the tool name `{tool}` is written again here; a registered callback is reviewed only when nothing else can name its tool"),
                        );
                    }
                }
                if n.kind() == "call_expression" && n != call && method.is_some() && method_name(n) == method {
                    let literal = arguments(n).first().is_some_and(|a| string_content(*a).is_some());
                    if !literal {
                        return ambiguous(
                            file,
                            n,
                            format!("`{}` registers a tool whose name is not a plain string literal; it could be `{tool}`", method.unwrap_or_default()),
                        );
                    }
                }
            }
        }
        if named != 1 {
            return ambiguous(region.file, call, format!("the tool name `{tool}` is written {named} times"));
        }
    }
    Ok(())
}

/// The final property name of a call's callee (`registerTool` of `server.registerTool(…)`).
fn method_name(call: Node<'_>) -> Option<&str> {
    let f = bare(call.field_child("function")?);
    match f.kind() {
        "member_expression" => f.field_child("property").map(|p| p.text()),
        "identifier" => Some(f.text()),
        _ => None,
    }
}
