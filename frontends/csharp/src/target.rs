//! What a target-typed `new()` creates. C# lets `new()` take its type from
//! where the value goes: a parameter of the method called, the return type of
//! the function it is returned from, or a property of the object being
//! initialized. Creating a type the closure declares runs that type's code
//! (constructor, field initializers), so such a type must be plain data just
//! like one named in `new T` ([`super::plain`]). This module finds the type;
//! where fcd cannot tell which type it is, the creation escalates.
//!
//! A type found here may be a library's: only the closure's own types are
//! checked, and a library's method or type cannot name one of them.

use fcd_frontends::ts::{Node, Syntax};

use super::plain;

/// The simple names of the types the target-typed creation `n` may create
/// (one per declaration of the method it is passed to; none when it goes to a
/// library). `Err` says why fcd cannot tell.
pub(super) fn created_types(trees: &[(&str, &Syntax)], n: Node<'_>) -> Result<Vec<String>, String> {
    let parent = n.parent().ok_or("a creation with no parent")?;
    match parent.kind() {
        "argument" => argument_types(trees, parent),
        "return_statement" | "arrow_expression_clause" => returned_type(parent).map(|t| vec![t]),
        "assignment_expression" if parent.parent().is_some_and(|i| i.kind() == "initializer_expression") => member_types(trees, parent),
        other => Err(format!("a target-typed creation in a `{other}`")),
    }
}

/// The parameter type(s) an argument is passed to: the declarations in the
/// closure of the method called (by position, or by name for a named
/// argument); none for a method the closure does not declare.
fn argument_types(trees: &[(&str, &Syntax)], argument: Node<'_>) -> Result<Vec<String>, String> {
    let list = argument.parent().filter(|l| l.kind() == "argument_list").ok_or("an argument outside an argument list")?;
    let args: Vec<Node<'_>> = list.named_children().filter(|a| a.kind() == "argument").collect();
    let position = args.iter().position(|a| *a == argument).ok_or("an argument fcd cannot place")?;
    let named = argument.field_child("name").map(|i| i.text().to_owned());
    if named.is_none() && args[..position].iter().any(|a| a.field_child("name").is_some()) {
        return Err("a positional argument after a named one".into());
    }
    let call = list.parent().ok_or("an argument list with no call")?;
    let method = match call.kind() {
        "invocation_expression" => callee_name(call.field_child("function").ok_or("a call with no callee")?)?,
        "object_creation_expression" => {
            let ty = plain::simple_name(call.field_child("type").ok_or("a creation with no type")?);
            return if plain::declarations(trees, &ty).is_empty() {
                Ok(Vec::new())
            } else {
                Err(format!("an argument of a constructor of `{ty}`, which the closure declares"))
            };
        }
        other => return Err(format!("an argument of a `{other}`")),
    };
    let mut types = Vec::new();
    for (_, syntax) in trees {
        for decl in syntax.root().descendants().filter(|d| matches!(d.kind(), "method_declaration" | "local_function_statement")) {
            if decl.field_child("name").map(|i| i.text()) != Some(method.as_str()) {
                continue;
            }
            let params: Vec<Node<'_>> =
                decl.field_child("parameters").map(|p| p.named_children().filter(|c| c.kind() == "parameter").collect()).unwrap_or_default();
            if params.iter().any(|p| p.children().any(|c| c.kind() == "modifier" && c.text() == "params")) {
                return Err(format!("`{method}` takes a `params` array"));
            }
            let param = match &named {
                Some(name) => params.iter().find(|p| p.field_child("name").map(|i| i.text()) == Some(name.as_str())),
                None => params.get(position),
            };
            let ty = param.and_then(|p| p.field_child("type")).ok_or_else(|| format!("a declaration of `{method}` has no parameter for this argument"))?;
            types.push(plain::simple_name(ty));
        }
    }
    Ok(types)
}

/// The name a call's callee ends with: `a.B.M(…)` and `M<T>(…)` call `M`.
fn callee_name(function: Node<'_>) -> Result<String, String> {
    let last = match function.kind() {
        "member_access_expression" => function.field_child("name").ok_or("a member access with no name")?,
        _ => function,
    };
    match last.kind() {
        "identifier" => Ok(last.text().to_owned()),
        "generic_name" => {
            last.named_children().find(|c| c.kind() == "identifier").map(|i| i.text().to_owned()).ok_or_else(|| "a generic callee with no name".into())
        }
        other => Err(format!("a callee that is a `{other}`")),
    }
}

/// The type a `return new()` (or `=> new()`) creates: the declared return
/// type of the function around it, a `Task<T>`'s `T` in an async one.
fn returned_type(at: Node<'_>) -> Result<String, String> {
    let function = at
        .ancestors()
        .find(|a| {
            matches!(
                a.kind(),
                "method_declaration"
                    | "local_function_statement"
                    | "property_declaration"
                    | "lambda_expression"
                    | "anonymous_method_expression"
                    | "accessor_declaration"
            )
        })
        .ok_or("a return outside a function")?;
    let function = if function.kind() == "accessor_declaration" {
        function.ancestors().find(|a| a.kind() == "property_declaration").ok_or("an accessor outside a property")?
    } else {
        function
    };
    let ty = match function.kind() {
        "method_declaration" => function.field_child("returns"),
        "local_function_statement" | "property_declaration" => function.field_child("type"),
        other => return Err(format!("a return from a `{other}`, whose type fcd does not infer")),
    }
    .ok_or("a function with no declared type")?;
    let is_async = function.children().any(|c| c.kind() == "modifier" && c.text() == "async");
    if is_async {
        let name = plain::simple_name(ty);
        if !matches!(name.as_str(), "Task" | "ValueTask") {
            return Err(format!("an async function returning `{}`", ty.compact_text()));
        }
        let args = ty.descendants().find(|d| d.kind() == "type_argument_list").ok_or("an async function returning no value")?;
        let inner: Vec<Node<'_>> = args.named_children().collect();
        return match inner.as_slice() {
            [one] => Ok(plain::simple_name(*one)),
            _ => Err("a task of several types".into()),
        };
    }
    Ok(plain::simple_name(ty))
}

/// The type of the member `X` in `… { X = new() }`: the property (or field)
/// of the object being initialized, when the closure declares that object's
/// type; nothing when the object is a library's.
fn member_types(trees: &[(&str, &Syntax)], assignment: Node<'_>) -> Result<Vec<String>, String> {
    let left = assignment.field_child("left").ok_or("an initializer with no member")?;
    if left.kind() != "identifier" {
        return Err(format!("an initializer of `{}`", left.compact_text()));
    }
    let creation = assignment.parent().and_then(|i| i.parent()).ok_or("an initializer outside a creation")?;
    let owners = match creation.kind() {
        "object_creation_expression" => vec![plain::simple_name(creation.field_child("type").ok_or("a creation with no type")?)],
        "implicit_object_creation_expression" => created_types(trees, creation)?,
        other => return Err(format!("an initializer of a `{other}`")),
    };
    let mut types = Vec::new();
    for owner in owners {
        let decls = plain::declarations(trees, &owner);
        if decls.is_empty() {
            continue;
        }
        let member = decls.iter().find_map(|(_, decl)| {
            decl.field_child("body")?.named_children().find_map(|m| match m.kind() {
                "property_declaration" if m.field_child("name").is_some_and(|i| i.text() == left.text()) => m.field_child("type"),
                "field_declaration" => m
                    .descendants()
                    .find(|d| d.kind() == "variable_declarator" && d.field_child("name").is_some_and(|i| i.text() == left.text()))
                    .and_then(|_| m.descendants().find(|d| d.kind() == "variable_declaration"))
                    .and_then(|v| v.field_child("type")),
                _ => None,
            })
        });
        let ty = member.ok_or_else(|| format!("`{owner}`, which the closure declares, has no member `{}` fcd can see", left.text()))?;
        types.push(plain::simple_name(ty));
    }
    Ok(types)
}
