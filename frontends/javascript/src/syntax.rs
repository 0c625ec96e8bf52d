//! JavaScript/TypeScript syntax the frontend reads: expressions seen through
//! parentheses and casts, callee identities (calls and `new`), the code a
//! region runs without a call, arguments and plain strings. Kept apart from
//! name resolution ([`super::scope`]) and facts ([`super::facts`]).

use fcd_frontends::ir::Identity;
use fcd_frontends::ts::Node;

/// An expression without parentheses, `await`, and TypeScript's `as`, `!` and `satisfies`.
pub(super) fn bare(mut n: Node<'_>) -> Node<'_> {
    while matches!(n.kind(), "parenthesized_expression" | "await_expression" | "as_expression" | "non_null_expression" | "satisfies_expression") {
        match n.named_children().find(|c| c.kind() != "comment") {
            Some(i) => n = i,
            None => break,
        }
    }
    n
}

/// A dotted token for an expression, or `None` when it does not name something.
pub(super) fn dotted(n: Node<'_>) -> Option<String> {
    let n = bare(n);
    match n.kind() {
        "identifier" | "property_identifier" | "this" | "super" | "private_property_identifier" => Some(n.text().to_owned()),
        "member_expression" => {
            let object = bare(n.field_child("object")?);
            let property = n.field_child("property")?.text();
            Some(match object.kind() {
                // A method of a fresh array or regular expression is the builtin
                // Array's or RegExp's (the integrity pass escalates a write to a
                // builtin prototype); what the literal holds runs as its own call
                // sites and iterations.
                "array" => format!("[].{property}"),
                "regex" => format!("RegExp#{property}"),
                _ => format!("{}.{property}", dotted(object)?),
            })
        }
        "subscript_expression" => Some(format!("{}[]", dotted(n.field_child("object")?)?)),
        "call_expression" => Some(format!("{}()", dotted(n.field_child("function")?)?)),
        // A member of a fresh object: `new Date().toISOString()` is `new Date().toISOString`.
        "new_expression" => Some(format!("new {}()", dotted(n.field_child("constructor")?)?)),
        _ => None,
    }
}

/// Builtins whose call reaches code chosen at run time.
pub(super) const DYNAMIC: &[&str] = &["eval", "Function", "setTimeout", "setInterval"];

/// The identity of a call's callee.
pub(super) fn identity(call: Node<'_>) -> Identity {
    let Some(function) = call.field_child("function") else { return Identity::Dynamic("a call without a callee".into()) };
    let f = bare(function);
    match f.kind() {
        "subscript_expression" => Identity::Dynamic(format!("calls an indexed value (`{}`)", f.compact_text())),
        "call_expression" => Identity::Dynamic(format!("calls the result of `{}`", f.compact_text())),
        "function_expression" | "arrow_function" | "function" => Identity::Path("function()".into()),
        "identifier" | "member_expression" => match dotted(f) {
            Some(path) if DYNAMIC.contains(&path.as_str()) => Identity::Dynamic(path),
            Some(path) => Identity::Path(path),
            None => Identity::Unresolved(f.compact_text()),
        },
        other => Identity::Dynamic(format!("calls a {other} (`{}`)", f.compact_text())),
    }
}

/// The identity of `new X(…)`: constructors run code, so they are callees too.
pub(super) fn constructor(n: Node<'_>) -> Identity {
    match n.field_child("constructor").and_then(dotted) {
        Some(path) if DYNAMIC.contains(&path.as_str()) => Identity::Dynamic(format!("new {path}")),
        Some(path) => Identity::Path(format!("new {path}")),
        None => Identity::Dynamic(format!("constructs `{}`", n.compact_text())),
    }
}

/// The first operand of a wrapper node, through parentheses and TypeScript casts only.
pub(super) fn operand(n: Node<'_>) -> Option<Node<'_>> {
    let mut e = n.named_children().find(|c| c.kind() != "comment")?;
    while matches!(e.kind(), "parenthesized_expression" | "as_expression" | "non_null_expression" | "satisfies_expression") {
        e = e.named_children().find(|c| c.kind() != "comment")?;
    }
    Some(e)
}

/// An object spread that copies only literal objects (`...(c ? { a } : {})`).
pub(super) fn literal_object(e: Node<'_>) -> bool {
    let e = bare(e);
    match e.kind() {
        "object" => true,
        "ternary_expression" => e.field_child("consequence").is_some_and(literal_object) && e.field_child("alternative").is_some_and(literal_object),
        "binary_expression" if e.field_child("operator").is_some_and(|o| o.text() == "&&") => e.field_child("right").is_some_and(literal_object),
        _ => false,
    }
}

/// Code a region runs without a call expression: why it needs an identity it cannot have.
pub(super) fn implicit(n: Node<'_>) -> Option<String> {
    let text = || n.compact_text();
    match n.kind() {
        "await_expression" => match operand(n) {
            Some(e) if e.kind() == "call_expression" => None,
            _ => Some(format!("`{}` awaits a value that is not a reviewed call's result: a thenable's `then` runs code", text())),
        },
        "spread_element" if n.parent().is_some_and(|p| p.kind() == "object") => {
            (!operand(n).is_some_and(literal_object)).then(|| format!("`{}` spreads an object whose getters run code", text()))
        }
        "spread_element" if iterated_call(n).is_none() => Some(format!("`{}` iterates a value: its iterator runs code", text())),
        "for_in_statement" if n.children().any(|c| c.kind() == "of") && iterated_call(n).is_none() => {
            Some(format!("`for … of` at line {} iterates a value: its iterator runs code", n.line()))
        }
        "array_pattern" => Some(format!("`{}` destructures by iteration: the iterator runs code", text())),
        "yield_expression" if n.children().any(|c| c.kind() == "*") => Some(format!("`{}` delegates to an iterator", text())),
        "method_definition" if n.children().any(|c| matches!(c.kind(), "get" | "set")) => {
            Some(format!("`{}` defines an accessor: reading the property runs code", text()))
        }
        "assignment_expression" | "augmented_assignment_expression"
            if n.field_child("left").map(bare).is_some_and(|l| matches!(l.kind(), "member_expression" | "subscript_expression")) =>
        {
            Some(format!("`{}` writes an object's member: a reviewed region changes no shared state", text()))
        }
        _ => None,
    }
}

/// What a plain `for (… of X)` or an array or argument spread `...X`
/// iterates: X, through parentheses and casts. `for await` and object
/// spreads are not iterations.
fn iterated(n: Node<'_>) -> Option<Node<'_>> {
    let x = match n.kind() {
        "for_in_statement" if n.children().any(|c| c.kind() == "of") && !n.children().any(|c| c.kind() == "await") => n.field_child("right")?,
        "spread_element" if n.parent().is_none_or(|p| p.kind() != "object") => operand(n)?,
        _ => return None,
    };
    Some(bare(x))
}

/// The call a plain `for (… of CALL(…))` or an array or argument spread
/// `...CALL(…)` iterates the result of: it calls that result's iterator,
/// whose identity is `CALL()[Symbol.iterator]` (an inventory entry then records that the reviewer read what the call
/// returns). Only a direct call with a named callee has one; iterating
/// anything else, and `for await`, stay dynamic.
pub(super) fn iterated_call(n: Node<'_>) -> Option<Node<'_>> {
    let right = iterated(n)?;
    let named = matches!(identity(right), Identity::Path(p) if !p.starts_with("function"));
    (right.kind() == "call_expression" && named).then_some(right)
}

/// The value a plain `for (… of VALUE)` or an array or argument spread
/// `...VALUE` iterates, when VALUE is a name or a member chain (not a call,
/// whose iterator [`iterated_call`] spells): iterating runs VALUE's iterator,
/// whose identity is `VALUE[Symbol.iterator]` with VALUE spelled as a callee
/// is (a local bound once stands for what it holds, `[]` for a fresh array).
/// `for await` and object spreads are not iterations of this kind.
pub(super) fn iterated_value(n: Node<'_>) -> Option<Node<'_>> {
    let value = iterated(n)?;
    matches!(value.kind(), "identifier" | "member_expression").then_some(value)
}

/// The identity of iterating the result of a call whose callee resolved to `callee`.
pub(super) fn iterator_of(callee: Identity) -> Identity {
    match callee {
        Identity::Path(p) => Identity::Path(format!("{p}()[Symbol.iterator]")),
        other => other,
    }
}

/// A call's arguments, comments left out.
pub(super) fn arguments(call: Node<'_>) -> Vec<Node<'_>> {
    call.items("arguments")
}

/// The content of a plain string literal (no substitutions, no escapes).
pub(super) fn string_content(n: Node<'_>) -> Option<String> {
    let n = bare(n);
    match n.kind() {
        "string" => {
            let parts: Vec<Node<'_>> = n.named_children().collect();
            if parts.iter().any(|p| p.kind() != "string_fragment") {
                return None;
            }
            Some(parts.iter().map(|p| p.text()).collect())
        }
        "template_string" if n.named_children().all(|c| c.kind() == "string_fragment") => Some(n.named_children().map(|c| c.text()).collect()),
        _ => None,
    }
}

/// A JavaScript literal a profile can spell: `true`, `false`, an integer, a plain string.
pub(super) fn literal(n: Node<'_>) -> Option<fcd_model::effect::FactValue> {
    let n = bare(n);
    match n.kind() {
        "true" => Some(fcd_model::effect::FactValue::Bool(true)),
        "false" => Some(fcd_model::effect::FactValue::Bool(false)),
        "number" => n.text().replace('_', "").parse().ok().map(fcd_model::effect::FactValue::Int),
        _ => string_content(n).map(fcd_model::effect::FactValue::Text),
    }
}
