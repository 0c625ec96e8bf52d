//! Go syntax the frontend reads without resolving a name: callee identities
//! as dotted tokens (generic instantiations kept, indexed values dynamic),
//! a function's statements and a `return`'s operands, a handler factory's
//! product, arguments and literals. Kept apart from name resolution
//! ([`super::scope`]) and the frontend's regions and facts.

use fcd_frontends::ir::Identity;
use fcd_frontends::ts::Node;
use fcd_model::effect::FactValue;

use super::scope;

pub(super) fn is_call(n: Node<'_>) -> bool {
    matches!(n.kind(), "call_expression" | "type_conversion_expression")
}

/// Whether a type argument list's text names types, not values.
fn type_like(text: &str) -> bool {
    text.split(',').map(str::trim).all(|part| {
        let part = part.trim_start_matches(['*', '[', ']']);
        let last = part.rsplit('.').next().unwrap_or(part);
        scope::PREDECLARED_TYPES.contains(&part) || last.chars().next().is_some_and(char::is_uppercase) || part.starts_with("map[")
    })
}

/// A dotted token for an operand chain, or `None` when its root is not a name.
pub(super) fn dotted(n: Node<'_>) -> Option<String> {
    match n.kind() {
        "identifier" | "package_identifier" | "type_identifier" | "field_identifier" => Some(n.text().to_owned()),
        "selector_expression" => Some(format!("{}.{}", dotted(n.field_child("operand")?)?, n.field_child("field")?.text())),
        "qualified_type" => Some(n.compact_text()),
        "call_expression" => Some(format!("{}()", dotted(n.field_child("function")?)?)),
        "parenthesized_expression" => dotted(n.named_children().find(|c| c.kind() != "comment")?),
        "index_expression" => {
            let index = n.field_child("index")?;
            type_like(index.text()).then(|| Some(format!("{}[{}]", dotted(n.field_child("operand")?)?, index.compact_text())))?
        }
        _ => None,
    }
}

/// The identity of a call site's callee.
pub(crate) fn identity(call: Node<'_>) -> Identity {
    if call.kind() == "type_conversion_expression" {
        let Some(ty) = call.field_child("type") else { return Identity::Dynamic("a conversion without a type".into()) };
        let args = ty.field_child("type_arguments").map(|a| a.text().trim_matches(['[', ']']).to_owned());
        return match args {
            Some(a) if !type_like(&a) => Identity::Dynamic(format!("calls an indexed value (`{}`)", ty.compact_text())),
            _ => Identity::Path(ty.compact_text()),
        };
    }
    let Some(function) = call.field_child("function") else { return Identity::Dynamic("a call without a callee".into()) };
    match function.kind() {
        "func_literal" => Identity::Path("func()".into()),
        "call_expression" => Identity::Dynamic(format!("calls the result of `{}`", function.compact_text())),
        "index_expression" if !function.field_child("index").is_some_and(|i| type_like(i.text())) => {
            Identity::Dynamic(format!("calls an indexed value (`{}`)", function.compact_text()))
        }
        "identifier" | "selector_expression" | "index_expression" | "parenthesized_expression" => match dotted(function) {
            Some(path) => Identity::Path(path),
            None => Identity::Unresolved(function.compact_text()),
        },
        other => Identity::Dynamic(format!("calls a {other} (`{}`)", function.compact_text())),
    }
}

/// The statement holding a node, for messages.
pub(super) fn enclosing_statement(n: Node<'_>) -> Node<'_> {
    std::iter::once(n).chain(n.ancestors()).find(|a| a.kind().ends_with("_statement") || a.kind() == "short_var_declaration").unwrap_or(n)
}

/// A function's statements, comments left out (the body's own statement list unwrapped).
pub(super) fn statements(function: Node<'_>) -> Vec<Node<'_>> {
    let mut statements: Vec<Node<'_>> =
        function.field_child("body").map(|b| b.named_children().filter(|c| c.kind() != "comment").collect()).unwrap_or_default();
    if let [list] = statements.as_slice()
        && list.kind() == "statement_list"
    {
        statements = list.named_children().filter(|c| c.kind() != "comment").collect();
    }
    statements
}

/// The operands of a `return` statement, comments left out.
pub(super) fn returned(ret: Node<'_>) -> Vec<Node<'_>> {
    ret.named_children()
        .filter(|c| c.kind() != "comment")
        .flat_map(|c| if c.kind() == "expression_list" { c.named_children().filter(|o| o.kind() != "comment").collect() } else { vec![c] })
        .collect()
}

/// The literal a function literal makes when its one statement is `return
/// func(…) {…}`: the handler of a factory. `None` for any other body.
pub(crate) fn factory_product(literal: Node<'_>) -> Option<Node<'_>> {
    let body = statements(literal);
    let [ret] = body.as_slice() else { return None };
    if ret.kind() != "return_statement" {
        return None;
    }
    match returned(*ret).as_slice() {
        [product] if product.kind() == "func_literal" => Some(*product),
        _ => None,
    }
}

/// A call's arguments, comments left out.
pub(super) fn arguments(call: Node<'_>) -> Vec<Node<'_>> {
    call.items("arguments")
}

/// The content of a string literal (interpreted without escapes, or raw).
pub(crate) fn string_content(n: Node<'_>) -> Option<String> {
    match n.kind() {
        "interpreted_string_literal" => {
            let inner = n.text().strip_prefix('"')?.strip_suffix('"')?;
            (!inner.contains('\\')).then(|| inner.to_owned())
        }
        "raw_string_literal" => Some(n.text().strip_prefix('`')?.strip_suffix('`')?.to_owned()),
        _ => None,
    }
}

/// A literal's value: booleans, integers and strings.
pub(super) fn literal(n: Node<'_>) -> Option<FactValue> {
    match n.kind() {
        "true" => Some(FactValue::Bool(true)),
        "false" => Some(FactValue::Bool(false)),
        "int_literal" => n.text().replace('_', "").parse().ok().map(FactValue::Int),
        _ => string_content(n).map(FactValue::Text),
    }
}

/// The base name of a method's receiver type: `T` of `(r *T)` or `(r T[K])`.
pub(super) fn receiver_type<'a>(method: Node<'a>) -> Option<&'a str> {
    let param = method.field_child("receiver")?.named_children().find(|c| c.kind() == "parameter_declaration")?;
    let mut ty = param.field_child("type")?;
    loop {
        ty = match ty.kind() {
            "pointer_type" | "parenthesized_type" => ty.named_children().next()?,
            "generic_type" => ty.field_child("type")?,
            "type_identifier" => return Some(ty.text()),
            _ => return None,
        };
    }
}

/// Whether an identifier is a member name, not a reference: the key of a
/// keyed element names a field of the literal's type.
pub(super) fn is_member(n: Node<'_>) -> bool {
    let element = n.parent().filter(|p| p.kind() == "literal_element");
    element.and_then(|e| e.parent()).is_some_and(|k| k.kind() == "keyed_element" && k.named_children().next() == element)
}
