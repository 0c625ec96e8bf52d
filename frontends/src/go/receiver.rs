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
//! entry in the derived spelling never matches it. Locals bound by `:=` are
//! spelled as written (their value may come from one of several results).

use crate::ts::Node;

use super::bindings::Bindings;
use super::scope::enclosing;

/// The derived spelling of `path`, the callee of `call`, when its head is a typed parameter bound once.
pub fn typed(call: Node<'_>, path: &str) -> Option<String> {
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
        (false, [site]) => site.parent().filter(|p| p.kind() == "parameter_declaration")?,
        _ => return None,
    };
    let ty = declaration.field_child("type")?.compact_text();
    let ty = ty.trim_start_matches('*');
    (!ty.is_empty()).then(|| format!("{ty}#{rest}"))
}
