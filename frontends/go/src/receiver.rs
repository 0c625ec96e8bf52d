//! A method call's receiver spelled by its declared type, not by the
//! parameter's name.
//!
//! `deps.GetClient` names the object through a parameter whose name is the
//! author's choice; what the reviewer read is the parameter's type. When the
//! head of a callee is a parameter (of the enclosing top-level function or of
//! a function literal inside it) and nothing else in that function binds the
//! name, the head is replaced by the declared type, pointer left out:
//! `deps ToolDependencies` makes `deps.GetClient` `ToolDependencies#GetClient`,
//! `r mcp.CallToolRequest` makes `r.GetArguments` `mcp.CallToolRequest#GetArguments`.
//! A name bound twice (a second parameter, a `:=`, an assignment), a variadic
//! parameter or a bare call of a parameter keeps its spelling, so an inventory
//! entry in the derived spelling never matches it. A local whose only
//! binding is `a, b := CALL(…)` stands for that call's result at its
//! position: `client, err := deps.GetClient(ctx)` makes `client.Repositories.Create`
//! `ToolDependencies#GetClient()@0.Repositories.Create` (`CALL()` alone for a
//! single name), so renaming it changes nothing and binding it to another
//! call, or to another result of the same call, changes the identity.

use fcd_frontends::ts::Node;

use super::bindings::Bindings;
use super::scope::enclosing;

/// The derived spelling of `path`, the callee of `call`, when its head is a typed parameter bound once.
pub fn typed(call: Node<'_>, path: &str) -> Option<String> {
    typed_depth(call, path, 0)
}

/// How deep locals are followed through the calls that bind them.
const DEPTH: usize = 8;

fn typed_depth(call: Node<'_>, path: &str, depth: usize) -> Option<String> {
    let end = path.find(['.', '[', '('])?;
    let (head, rest) = path.split_at(end);
    let rest = rest.strip_prefix('.')?;
    let function = enclosing(call);
    if !matches!(function.kind(), "function_declaration" | "method_declaration") {
        return None;
    }
    let bindings = Bindings::of(function);
    let sites = bindings.sites(head);
    let declaration = match (bindings.is_param(head), sites.as_slice()) {
        // A parameter of the top-level function, bound nowhere else in it.
        (true, []) => function
            .field_child("parameters")?
            .named_children()
            .find(|p| p.kind() == "parameter_declaration" && p.field_children("name").any(|n| n.text() == head))?,
        // A parameter of a function literal inside it, the name's only binding.
        (false, [site]) if site.parent().is_some_and(|p| p.kind() == "parameter_declaration") => site.parent()?,
        // A local whose only binding is `a, b := CALL(…)`: result N of that call.
        (false, [site]) if depth < DEPTH => return result_of(*site, depth).map(|value| format!("{value}.{rest}")),
        _ => return None,
    };
    let ty = declaration.field_child("type")?.compact_text();
    let ty = ty.trim_start_matches('*');
    (!ty.is_empty()).then(|| format!("{ty}#{rest}"))
}

/// `CALL()@N` for a name declared by `…, name, … := CALL(…)`, the call spelled
/// as a callee is (its own receiver derived), N the name's position; `CALL()`
/// when it is the only name.
fn result_of(site: Node<'_>, depth: usize) -> Option<String> {
    let left = site.parent().filter(|l| l.kind() == "expression_list")?;
    let declaration = left.parent().filter(|d| d.kind() == "short_var_declaration" && d.field_child("left") == Some(left))?;
    let right: Vec<Node<'_>> = declaration.field_child("right")?.named_children().filter(|c| c.kind() != "comment").collect();
    let [value] = right.as_slice() else { return None };
    if value.kind() != "call_expression" {
        return None;
    }
    let fcd_frontends::ir::Identity::Path(path) = super::syntax::identity(*value) else { return None };
    let callee = typed_depth(*value, &path, depth + 1).unwrap_or(path);
    let names: Vec<Node<'_>> = left.named_children().filter(|c| c.kind() != "comment").collect();
    let position = names.iter().position(|n| *n == site)?;
    Some(if names.len() == 1 { format!("{callee}()") } else { format!("{callee}()@{position}") })
}
