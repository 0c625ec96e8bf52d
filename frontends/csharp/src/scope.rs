//! A callee's receiver spelled by what it is, not by the local's name.
//!
//! `_redisService.CreateResourceAsync` names the object through a field
//! whose name is the author's choice; what the reviewer read is the field's
//! declared type. Wherever one declaration says what the head of a callee is,
//! the head is replaced by it: a parameter, a local with an explicit type, a
//! `readonly` field or a primary-constructor parameter of the enclosing class
//! is its type (`IRedisService#CreateResourceAsync`, the type as written,
//! `?` left out); a local declared `var x = CALL(…)` or `var x = new T(…)`
//! stands for its value (`CommandContext#GetService<IRedisService>().CreateResourceAsync`,
//! arguments left out as in every chain; `X ?? throw …` is X). The name must be declared exactly
//! once in the member (or, for a field, in the class) and never assigned,
//! incremented or passed by `ref`/`out`; a name an enclosing lambda binds, a
//! type a `using` alias of the file names, a pattern or query variable, a
//! `using` or `ref` local keeps its spelled name, so an inventory entry in the
//! derived spelling never matches it. Renaming a local then changes nothing,
//! and binding it to another object changes the identity.

use fcd_frontends::ir::Identity;
use fcd_frontends::ts::Node;

use super::TYPES;
use super::held::{is_declared_name, occurrences};
use super::syntax::{bare, dotted, inner};

/// How deep `var` locals are followed through other `var` locals.
const DEPTH: usize = 8;

/// The identity of a callee expression whose dotted spelling is `path`, with
/// its receiver spelled by what it is where the source says so.
pub(super) fn spell(function: Node<'_>, path: &str) -> String {
    spell_depth(function, path, 0)
}

fn spell_depth(function: Node<'_>, path: &str, depth: usize) -> String {
    let Some(head) = head(function) else { return path.to_owned() };
    let name = head.text();
    let Some(rest) = path.strip_prefix(name).filter(|r| r.starts_with('.')) else { return path.to_owned() };
    match what_is(head, depth) {
        Some(What::Type(ty)) => format!("{ty}#{}", &rest[1..]),
        Some(What::Value(value)) => format!("{value}{rest}"),
        None => path.to_owned(),
    }
}

enum What {
    Type(String),
    Value(String),
}

/// The identifier a member chain starts from (`a` in `a.B().C?.D`).
fn head(n: Node<'_>) -> Option<Node<'_>> {
    match n.kind() {
        "identifier" => Some(n),
        "member_access_expression" => head(n.field_child("expression")?),
        "conditional_access_expression" => head(n.field_child("condition")?),
        "invocation_expression" => head(n.field_child("function")?),
        "postfix_unary_expression" | "parenthesized_expression" | "await_expression" => head(inner(n)?),
        _ => None,
    }
}

/// Kinds whose identifiers declare a name other than through `is_declared_name`.
const OTHER_BINDERS: &[&str] = &[
    "declaration_pattern",
    "var_pattern",
    "parenthesized_variable_designation",
    "from_clause",
    "let_clause",
    "join_clause",
    "join_into_clause",
    // `into x` continues a query under a new name, an identifier of the query itself.
    "query_expression",
    "recursive_pattern",
    "list_pattern",
];

fn what_is(head: Node<'_>, depth: usize) -> Option<What> {
    let name = head.text();
    if bound_by_lambda(head, name) {
        return None;
    }
    let member =
        head.ancestors().take_while(|a| !TYPES.contains(&a.kind())).filter(|a| matches!(a.kind(), "method_declaration" | "constructor_declaration")).last();
    let class = head.ancestors().find(|a| TYPES.contains(&a.kind()))?;
    let scope = member.unwrap_or(class);
    let binders: Vec<Node<'_>> =
        scope.descendants().filter(|n| n.kind() == "identifier" && n.text() == name && n.parent().is_some_and(|p| OTHER_BINDERS.contains(&p.kind()))).collect();
    if !binders.is_empty() {
        return None;
    }
    let decls: Vec<Node<'_>> = member.map(|m| occurrences(m, name).into_iter().filter(|o| is_declared_name(*o)).collect()).unwrap_or_default();
    let what = match decls.as_slice() {
        [decl] => {
            if rebound(scope, name, *decl) {
                return None;
            }
            declared(*decl, depth)?
        }
        [] => member_of(class, name)?,
        _ => return None,
    };
    if let What::Type(ty) = &what
        && aliased(head, ty)
    {
        return None;
    }
    Some(what)
}

/// What one declaration of a local or parameter says it is.
fn declared(decl: Node<'_>, depth: usize) -> Option<What> {
    let parent = decl.parent()?;
    match parent.kind() {
        "parameter" => {
            if parent.named_children().any(|c| c.kind() == "modifier") {
                return None;
            }
            parent.field_child("type").map(|t| What::Type(type_text(t)))
        }
        "variable_declarator" => {
            let declaration = parent.parent().filter(|d| d.kind() == "variable_declaration")?;
            let statement = declaration.parent().filter(|s| s.kind() == "local_declaration_statement")?;
            if statement.children().any(|c| matches!(c.text(), "using" | "ref" | "const"))
                || declaration.named_children().filter(|c| c.kind() == "variable_declarator").count() != 1
            {
                return None;
            }
            let ty = declaration.field_child("type")?;
            if ty.kind() != "implicit_type" {
                return Some(What::Type(type_text(ty)));
            }
            if depth >= DEPTH {
                return None;
            }
            let mut value = bare(parent.named_children().rfind(|c| Some(*c) != parent.field_child("name"))?);
            // `X ?? throw …` is X whenever the declaration completes.
            if value.kind() == "binary_expression" && value.field_child("right").is_some_and(|r| r.kind() == "throw_expression") {
                let operator: String = value.children().filter(|x| !x.is_named()).map(|x| x.text()).collect();
                if operator == "??" {
                    value = bare(value.field_child("left")?);
                }
            }
            match value.kind() {
                "invocation_expression" => {
                    let function = value.field_child("function")?;
                    let path = dotted(function)?;
                    Some(What::Value(format!("{}()", spell_depth(function, &path, depth + 1))))
                }
                "object_creation_expression" => Some(What::Value(format!("new {}()", value.field_child("type")?.compact_text()))),
                _ => None,
            }
        }
        _ => None,
    }
}

/// A `readonly` field or a primary-constructor parameter of the class, declared once.
fn member_of(class: Node<'_>, name: &str) -> Option<What> {
    let body = class.field_child("body")?;
    let fields: Vec<Node<'_>> = body
        .named_children()
        .filter(|m| m.kind() == "field_declaration")
        .filter(|m| m.descendants().any(|d| d.kind() == "variable_declarator" && d.field_child("name").is_some_and(|n| n.text() == name)))
        .collect();
    let primary: Vec<Node<'_>> = class
        .named_children()
        .filter(|c| c.kind() == "parameter_list")
        .flat_map(|l| l.named_children().filter(|p| p.kind() == "parameter" && p.field_child("name").is_some_and(|n| n.text() == name)).collect::<Vec<_>>())
        .collect();
    let properties = body.named_children().any(|m| m.field_child("name").is_some_and(|n| n.text() == name) && m.kind() != "field_declaration");
    match (fields.as_slice(), primary.as_slice()) {
        _ if properties => None,
        ([field], []) => {
            let readonly = field.named_children().any(|c| c.kind() == "modifier" && c.text() == "readonly");
            let declaration = field.named_children().find(|c| c.kind() == "variable_declaration")?;
            let one = declaration.named_children().filter(|c| c.kind() == "variable_declarator").count() == 1;
            (readonly && one).then(|| declaration.field_child("type").map(|t| What::Type(type_text(t)))).flatten()
        }
        ([], [param]) => {
            let name_node = param.field_child("name")?;
            if param.named_children().any(|c| c.kind() == "modifier") || rebound(class, name, name_node) {
                return None;
            }
            param.field_child("type").map(|t| What::Type(type_text(t)))
        }
        _ => None,
    }
}

/// The type as written, without a trailing `?`.
fn type_text(t: Node<'_>) -> String {
    let text = t.compact_text();
    text.strip_suffix('?').unwrap_or(&text).to_owned()
}

/// Whether `name` is assigned, incremented or passed by reference anywhere in `scope` other than its declaration.
fn rebound(scope: Node<'_>, name: &str, decl: Node<'_>) -> bool {
    occurrences(scope, name).into_iter().filter(|o| *o != decl).any(|o| {
        let Some(p) = o.parent() else { return false };
        match p.kind() {
            "assignment_expression" => p.field_child("left") == Some(o),
            "prefix_unary_expression" | "postfix_unary_expression" => p.text().contains("++") || p.text().contains("--"),
            "argument" => ["ref ", "out ", "in "].iter().any(|m| p.text().starts_with(m)),
            _ => is_declared_name(o),
        }
    })
}

/// Whether a lambda or anonymous method around `head` binds `name` (then it is the lambda's, not the member's).
fn bound_by_lambda(head: Node<'_>, name: &str) -> bool {
    head.ancestors().filter(|a| matches!(a.kind(), "lambda_expression" | "anonymous_method_expression")).any(|l| {
        l.named_children().take_while(|c| Some(*c) != l.field_child("body")).any(|c| {
            (c.kind() == "identifier" && c.text() == name)
                || (c.kind() == "parameter_list" && c.descendants().any(|d| d.kind() == "identifier" && d.text() == name))
        })
    })
}

/// Whether the file declares a `using` alias named like the type's first segment.
fn aliased(head: Node<'_>, ty: &str) -> bool {
    let first = ty.split(['.', '<']).next().unwrap_or(ty);
    let root = head.ancestors().last().unwrap_or(head);
    root.descendants().any(|n| n.kind() == "using_directive" && n.field_child("name").is_some_and(|a| a.text() == first))
}

/// The identity of an invocation's callee, its receiver spelled by what it
/// is where one declaration says so (this module).
pub(super) fn identity(call: Node<'_>) -> Identity {
    let Some(function) = call.field_child("function") else { return Identity::Dynamic("an invocation without a callee".into()) };
    match function.kind() {
        "element_access_expression" => Identity::Dynamic(format!("calls an indexed value (`{}`)", function.compact_text())),
        "invocation_expression" => Identity::Dynamic(format!("calls the result of `{}`", function.compact_text())),
        "identifier" | "generic_name" | "member_access_expression" | "conditional_access_expression" | "qualified_name" | "parenthesized_expression" => {
            match dotted(function) {
                Some(path) => Identity::Path(spell(function, &path)),
                None if function.kind() == "parenthesized_expression" => Identity::Dynamic(format!("calls `{}`", function.compact_text())),
                None => Identity::Unresolved(function.compact_text()),
            }
        }
        other => Identity::Dynamic(format!("calls a {other} (`{}`)", function.compact_text())),
    }
}

/// The identity of anything in a region that runs code: an invocation, an
/// object creation (`new T`; a target-typed `new()` only where its type is
/// fixed by a call's parameter, a member initializer or a `return`), or a
/// `using` that disposes (never accepted: disposal runs code no call shows).
pub(super) fn implicit_or_call(n: Node<'_>) -> Option<Identity> {
    match n.kind() {
        "invocation_expression" => Some(identity(n)),
        "object_creation_expression" => Some(Identity::Path(format!("new {}", n.field_child("type")?.compact_text()))),
        "implicit_object_creation_expression" => {
            let parent = n.parent()?;
            let fixed = matches!(parent.kind(), "argument" | "return_statement" | "arrow_expression_clause")
                || (parent.kind() == "assignment_expression" && parent.parent().is_some_and(|i| i.kind() == "initializer_expression"));
            Some(if fixed {
                Identity::Path("new()".into())
            } else {
                Identity::Unresolved(format!("`{}`: a target-typed creation whose type fcd cannot see", n.compact_text()))
            })
        }
        "using_statement" => Some(Identity::Unresolved("a `using` statement disposes its resource, running code no call shows".into())),
        "local_declaration_statement" if n.children().any(|c| c.text() == "using") => {
            Some(Identity::Unresolved("a `using` declaration disposes its resource, running code no call shows".into()))
        }
        _ => None,
    }
}
