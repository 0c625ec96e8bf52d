//! C# syntax the facts and checks read: dotted tokens, arguments, string
//! and other literals (callee identities, which need receivers, are
//! [`super::scope`]'s). Kept apart from the frontend's regions and facts so that each
//! reads one concern; none of it knows a profile.

use fcd_frontends::ts::Node;
use fcd_model::effect::FactValue;

/// Whether an identifier is the label of a named argument (`name` in
/// `F(name: x)`): a parameter's name, never a use of a local or field.
pub(super) fn is_argument_label(n: Node<'_>) -> bool {
    n.parent().is_some_and(|p| p.kind() == "argument" && p.field_child("name") == Some(n))
}

/// The first named child that is not a comment.
pub(super) fn inner(n: Node<'_>) -> Option<Node<'_>> {
    n.named_children().find(|c| c.kind() != "comment")
}

/// A dotted token for an expression, or `None` when it does not name something.
pub(super) fn dotted(n: Node<'_>) -> Option<String> {
    match n.kind() {
        "identifier" | "predefined_type" | "this" | "base" => Some(n.text().to_owned()),
        "generic_name" | "qualified_name" => Some(n.compact_text()),
        "member_access_expression" => {
            let name = n.field_child("name")?;
            // `base.X` and `this.X`: the receiver is a keyword, not a named node.
            let left = match n.field_child("expression") {
                Some(e) => dotted(e)?,
                None => n.children().next().filter(|c| matches!(c.text(), "base" | "this"))?.text().to_owned(),
            };
            Some(format!("{left}.{}", dotted(name)?))
        }
        "conditional_access_expression" => {
            let left = dotted(n.field_child("condition")?)?;
            let binding = n.named_children().find(|c| c.kind() == "member_binding_expression")?;
            Some(format!("{left}.{}", dotted(binding.field_child("name")?)?))
        }
        "invocation_expression" => Some(format!("{}()", dotted(n.field_child("function")?)?)),
        "object_creation_expression" => Some(format!("new {}()", n.field_child("type")?.compact_text())),
        "implicit_object_creation_expression" => Some("new()".into()),
        "postfix_unary_expression" | "parenthesized_expression" | "await_expression" => dotted(inner(n)?),
        _ => None,
    }
}

/// An invocation's arguments: (name for a named argument, expression).
pub(super) fn arguments(call: Node<'_>) -> Vec<(Option<String>, Node<'_>)> {
    call.field_child("arguments")
        .map(|list| {
            list.named_children()
                .filter(|a| a.kind() == "argument")
                .filter_map(|a| {
                    let name = a.field_child("name").map(|n| n.text().to_owned());
                    let expr = a.named_children().rfind(|c| c.kind() != "comment" && Some(*c) != a.field_child("name"))?;
                    Some((name, expr))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The value of a string literal of any form, escapes decoded (`None` for an
/// escape fcd does not know).
pub(super) fn string_content(n: Node<'_>) -> Option<String> {
    match n.kind() {
        "string_literal" => {
            let mut out = String::new();
            for p in n.named_children() {
                match p.kind() {
                    "string_literal_content" => out.push_str(p.text()),
                    "escape_sequence" => out.push(unescape(p.text())?),
                    _ => return None,
                }
            }
            Some(out)
        }
        "verbatim_string_literal" => Some(n.text().strip_prefix("@\"")?.strip_suffix('"')?.replace("\"\"", "\"")),
        "raw_string_literal" => Some(n.named_children().filter(|c| c.kind() == "raw_string_content").map(|c| c.text()).collect()),
        _ => None,
    }
}

/// One C# escape sequence (`\n`, `\u0041`, `\x41`, …) as the character it stands for.
pub(super) fn unescape(e: &str) -> Option<char> {
    let body = e.strip_prefix('\\')?;
    let simple = match body {
        "'" => Some('\''),
        "\"" => Some('"'),
        "\\" => Some('\\'),
        "0" => Some('\0'),
        "a" => Some('\u{7}'),
        "b" => Some('\u{8}'),
        "e" => Some('\u{1b}'),
        "f" => Some('\u{c}'),
        "n" => Some('\n'),
        "r" => Some('\r'),
        "t" => Some('\t'),
        "v" => Some('\u{b}'),
        _ => None,
    };
    if simple.is_some() {
        return simple;
    }
    let hex = body.strip_prefix('u').or_else(|| body.strip_prefix('U')).or_else(|| body.strip_prefix('x'))?;
    char::from_u32(u32::from_str_radix(hex, 16).ok()?)
}

pub(super) fn literal(n: Node<'_>) -> Option<FactValue> {
    match n.kind() {
        "boolean_literal" => Some(FactValue::Bool(n.text() == "true")),
        "integer_literal" => n.text().replace('_', "").parse().ok().map(FactValue::Int),
        _ => string_content(n).map(FactValue::Text),
    }
}

/// An expression without `!`, parentheses and `await`.
pub(super) fn bare(mut n: Node<'_>) -> Node<'_> {
    while matches!(n.kind(), "postfix_unary_expression" | "parenthesized_expression" | "await_expression") {
        match inner(n) {
            Some(i) => n = i,
            None => break,
        }
    }
    n
}
