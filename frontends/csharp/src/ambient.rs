//! C#'s candidate operations on process-wide state ([`fcd_frontends::ambient`]):
//! every name or member access (a method group taken as a value too), and
//! every assignment target (`+=` a handler included), dotted as written with
//! a file's `using` aliases substituted, `global::` and the namespaces
//! `System`, `System.IO` and `System.Runtime.InteropServices` left out.
//! By spelling: a type of the release named `Environment` counts as the
//! framework's (an escalation, never a miss).

use std::collections::BTreeMap;

use fcd_frontends::ambient::{CWD, ENV, Op, SIGNALS, Table, Use, call, object};
use fcd_frontends::ts::{Node, Syntax};

use super::syntax::{dotted, inner};

pub fn ops(syntax: &Syntax) -> Vec<Op<'_>> {
    let root = syntax.root();
    let aliases: BTreeMap<String, String> = root
        .descendants()
        .filter(|n| n.kind() == "using_directive")
        .filter_map(|n| {
            let name = n.field_child("name")?;
            let target = n.named_children().rfind(|c| *c != name && c.kind() != "comment")?;
            Some((name.text().to_owned(), normal(&target.compact_text(), &BTreeMap::new())))
        })
        .collect();
    let mut out = Vec::new();
    for node in root.descendants() {
        if node.ancestors().any(|a| a.kind() == "using_directive") {
            continue;
        }
        match node.kind() {
            "assignment_expression" => {
                if let Some(path) = node.field_child("left").and_then(path_of).map(|p| normal(&p, &aliases)) {
                    out.push(Op::new(node, Use::Written(path)));
                }
            }
            "member_access_expression" | "identifier" | "qualified_name" => {
                let Some(path) = path_of(node).map(|p| normal(&p, &aliases)) else { continue };
                let call = node.parent().filter(|p| p.kind() == "invocation_expression" && p.field_child("function") == Some(node));
                let what = match call {
                    Some(call) => Use::Called { callee: path, args: call.items("arguments").len(), first: None, keywords: Vec::new() },
                    None => Use::Reference(path),
                };
                out.push(Op::new(node, what));
            }
            _ => {}
        }
    }
    out
}

/// The dotted spelling of a name, a member access or an element access (`X[]`).
fn path_of(n: Node<'_>) -> Option<String> {
    match n.kind() {
        "element_access_expression" => Some(format!("{}[]", path_of(n.field_child("expression")?)?)),
        "parenthesized_expression" => path_of(inner(n)?),
        "alias_qualified_name" => Some(n.compact_text()),
        "member_access_expression" => match n.field_child("expression").and_then(path_of) {
            Some(left) => Some(format!("{left}.{}", n.field_child("name")?.text())),
            None => dotted(n),
        },
        _ => dotted(n),
    }
}

/// `path` with its head alias substituted, `global::` and the framework's namespaces left out.
fn normal(path: &str, aliases: &BTreeMap<String, String>) -> String {
    let path = path.strip_prefix("global::").unwrap_or(path);
    let (head, rest) = path.split_at(path.find('.').unwrap_or(path.len()));
    let path = match aliases.get(head) {
        Some(target) => format!("{target}{rest}"),
        None => path.to_owned(),
    };
    for ns in ["System.Runtime.InteropServices.", "System.IO.", "System."] {
        if let Some(rest) = path.strip_prefix(ns) {
            return rest.to_owned();
        }
    }
    path
}

/// C# paths are dotted as written, aliases substituted, a leading `global::`
/// and the namespaces `System`, `System.IO` and `System.Runtime.InteropServices` left out.
pub(super) const TABLE: Table = Table {
    entries: &[
        call("Environment.SetEnvironmentVariable", ENV),
        object("Environment.CurrentDirectory", CWD),
        call("Directory.SetCurrentDirectory", CWD),
        object("Console.CancelKeyPress", SIGNALS),
        object("AppDomain.CurrentDomain.ProcessExit", SIGNALS),
        call("PosixSignalRegistration.Create", SIGNALS),
    ],
    mutators: &[],
    writes_first_argument: &[],
};
