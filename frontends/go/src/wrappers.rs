//! Code that can wrap a tool's handler, found by its type.
//!
//! The code that registers a tool is bound (a region, or pinned: NewTool,
//! the inventory's `RegisterFunc`, a toolset), but it may take functions
//! that wrap the handler as values (github-mcp-server's
//! `inventory.ToolHandlerMiddleware`, v1.7.0 on, handed from the command
//! through a configuration field and a slice built by `append`). Following
//! values through fields and slices is what [`super::function_values`]
//! refuses, so this asks the question by type, over the whole module: a
//! wrapper is a function, method or function literal whose one parameter
//! and one result are the same handler type of an MCP SDK ([`HANDLERS`]),
//! an alias or definition of one in the module, or a type parameter (a
//! generic `func[T any](t T) T` wraps a handler once instantiated). Go
//! assigns or converts a function value only between identical underlying
//! types, so whatever can wrap a handler is one of these texts, or a
//! dependency's code (trusted by identity). Each must lie in a region or in
//! the closure of a pin the registration verified, or be bound by a pin of
//! its own (a literal by the function or method around it), or the
//! registration escalates naming it ([`super::pinned`]).

use std::collections::BTreeSet;

use fcd_frontends::ts::Node;

use super::index::Index;
use super::scope;

/// The handler types of the MCP SDKs, by import path: the go-sdk's tool
/// and method handlers (`ToolHandlerFor[In, Out]` whatever its type
/// arguments), and mcp-go's tool handler.
const HANDLERS: &[(&str, &[&str])] = &[
    ("github.com/modelcontextprotocol/go-sdk/mcp", &["ToolHandler", "ToolHandlerFor", "MethodHandler"]),
    ("github.com/mark3labs/mcp-go/server", &["ToolHandlerFunc"]),
];

/// A piece of code that can wrap a handler.
pub(super) struct Wrapper<'a> {
    pub(super) file: &'a str,
    /// The function, method or literal.
    pub(super) node: Node<'a>,
    /// The package directory and the top-level function (`F`) or method
    /// (`T.m`) holding it, which a pin binds it by; `None` for a literal
    /// outside any (a package variable's initializer), which no pin names.
    pub(super) holder: Option<(String, String)>,
}

/// Every piece of code in the module that can wrap a handler.
pub(super) fn wrappers<'a>(index: &Index<'_, 'a>) -> Vec<Wrapper<'a>> {
    let local = local_handler_types(index);
    let mut out = Vec::new();
    for (file, syntax) in index.all_files() {
        let imports = scope::imports(syntax.root());
        let dir = scope::dir(file);
        for n in syntax.root().descendants() {
            if !matches!(n.kind(), "function_declaration" | "method_declaration" | "func_literal") {
                continue;
            }
            let Some(ty) = wrapped(n) else { continue };
            let handler = is_handler(ty, dir, &imports, &local, index) || is_type_parameter(ty, n);
            if !handler {
                continue;
            }
            out.push(Wrapper { file, node: n, holder: super::function_values::enclosing_key(n).map(|key| (dir.to_owned(), key)) });
        }
    }
    out
}

/// The type a function both takes (as its one parameter) and returns (as
/// its one result), when it has that signature.
fn wrapped(function: Node<'_>) -> Option<Node<'_>> {
    let parameter = one(function.field_child("parameters")?)?;
    let result = function.field_child("result")?;
    let result = if result.kind() == "parameter_list" { one(result)? } else { result };
    (parameter.token_text() == result.token_text()).then_some(parameter)
}

/// The type of the one parameter of a list holding exactly one.
fn one(list: Node<'_>) -> Option<Node<'_>> {
    let [p] = list.named_children().filter(|c| c.kind() != "comment").collect::<Vec<_>>()[..] else { return None };
    (p.kind() == "parameter_declaration" && p.field_children("name").count() <= 1).then(|| p.field_child("type")).flatten()
}

/// Whether the type `ty` (in package `dir`) is an SDK handler type or a
/// module type declared as one.
fn is_handler(ty: Node<'_>, dir: &str, imports: &scope::Imports<'_>, local: &BTreeSet<(String, String)>, index: &Index<'_, '_>) -> bool {
    let mut ty = ty;
    while matches!(ty.kind(), "parenthesized_type" | "generic_type") {
        let Some(inner) = ty.field_child("type").or_else(|| ty.named_children().next()) else { return false };
        ty = inner;
    }
    match ty.kind() {
        "type_identifier" => local.contains(&(dir.to_owned(), ty.text().to_owned())),
        "qualified_type" => {
            let (Some(package), Some(name)) = (ty.field_child("package"), ty.field_child("name")) else { return false };
            let Some((path, _)) = imports.get(package.text()) else { return false };
            let name = name.text();
            match index.release(path) {
                Some(target) => local.contains(&(target, name.to_owned())),
                None => HANDLERS.iter().any(|(p, names)| p == path && names.contains(&name)),
            }
        }
        _ => false,
    }
}

/// Whether `ty` is a bare name the function (or its method's receiver)
/// declares as a type parameter.
fn is_type_parameter(ty: Node<'_>, function: Node<'_>) -> bool {
    if ty.kind() != "type_identifier" {
        return false;
    }
    std::iter::once(function).chain(function.ancestors()).any(|f| {
        let declared = f.field_child("type_parameters").into_iter().flat_map(|l| l.descendants()).filter(|d| d.kind() == "identifier");
        let receiver = (f.kind() == "method_declaration")
            .then(|| f.field_child("receiver"))
            .flatten()
            .into_iter()
            .flat_map(|r| r.descendants())
            .filter(|d| d.kind() == "type_identifier" && d.ancestors().any(|a| a.kind() == "type_arguments"));
        declared.chain(receiver).any(|d| d.text() == ty.text())
    })
}

/// The module's types declared as an SDK handler type (`type H = mcp.ToolHandler`,
/// `type H mcp.ToolHandler`), or as another such type, by `(DIR, NAME)`.
fn local_handler_types(index: &Index<'_, '_>) -> BTreeSet<(String, String)> {
    let mut local = BTreeSet::new();
    loop {
        let before = local.len();
        for (file, syntax) in index.all_files() {
            let imports = scope::imports(syntax.root());
            let dir = scope::dir(file);
            for spec in syntax.root().descendants().filter(|n| matches!(n.kind(), "type_spec" | "type_alias")) {
                let (Some(name), Some(ty)) = (spec.field_child("name"), spec.field_child("type")) else { continue };
                if is_handler(ty, dir, &imports, &local, index) {
                    local.insert((dir.to_owned(), name.text().to_owned()));
                }
            }
        }
        if local.len() == before {
            return local;
        }
    }
}
