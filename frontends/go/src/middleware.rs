//! Code the release installs around every request: SDK middleware and hooks.
//!
//! An MCP SDK runs a server's middleware and hooks on every request, around
//! the tool's handler: that code can change the arguments the handler reads,
//! answer the call itself, or have effects of its own. So it is bound like
//! the function a handler literal is handed to ([`super::pinned`]): each
//! function the module installs through an SDK's middleware or hook API
//! (the tables below) is a region or pinned by the digest of its closure,
//! or the registration escalates naming the installing call. Which code an
//! argument holds is [`super::function_values`]' question; the literals one
//! function installs through one API are pinned together, keyed
//! `DIR.FUNC#API` (`internal/ghmcp.NewMCPServer#AddReceivingMiddleware`). A
//! hook list filled outside a `Hooks` literal escalates.

use fcd_frontends::ts::{Node, Syntax};

use super::function_values::{self, Source};
use super::index::Index;
use super::scope;

/// go-sdk (`*mcp.Server`): methods installing middleware, whatever the
/// receiver (a method of the release with the same name is taken as one:
/// failing closed).
const METHODS: &[&str] = &["AddReceivingMiddleware", "AddSendingMiddleware"];

/// mcp-go's server package, whose options and hooks install code.
const MCP_GO_SERVER: &str = "github.com/mark3labs/mcp-go/server";

/// mcp-go: server options taking middleware.
const OPTIONS: &[&str] = &["WithToolHandlerMiddleware", "WithResourceHandlerMiddleware", "WithPromptHandlerMiddleware"];

/// mcp-go (`*server.Hooks`): the methods adding a hook (`AddBeforeAny`,
/// `AddOnRequestInitialization`, …), by prefix.
const HOOK_METHOD_PREFIXES: &[&str] = &["AddBefore", "AddAfter", "AddOn"];

/// One argument of an installing call (or one hook of a `Hooks` literal).
struct Site<'a> {
    file: &'a str,
    argument: Node<'a>,
    /// The installing API (`AddReceivingMiddleware`, the hook field `OnBeforeAny`).
    api: String,
}

/// Every piece of code the module installs around requests.
pub(super) fn installed<'a>(index: &Index<'_, 'a>) -> Vec<Source<'a>> {
    let mut out = Vec::new();
    for (file, syntax) in index.all_files() {
        for site in sites(file, syntax) {
            function_values::sources_of(index, site.file, site.argument, &site.api, 0, &mut out);
        }
    }
    out
}

/// Every argument of an installing call in the file, and every hook of a
/// `Hooks` literal; a hook list assigned elsewhere is a site no pin binds.
fn sites<'a>(file: &'a str, syntax: &'a Syntax) -> Vec<Site<'a>> {
    let root = syntax.root();
    let imports = scope::imports(root);
    let mcp_go = |package: Node<'_>| imports.get(package.text()).is_some_and(|(path, _)| path == MCP_GO_SERVER);
    let mut out = Vec::new();
    for n in root.descendants() {
        match n.kind() {
            "call_expression" => {
                let Some(function) = n.field_child("function").filter(|f| f.kind() == "selector_expression") else { continue };
                let (Some(operand), Some(field)) = (function.field_child("operand"), function.field_child("field")) else { continue };
                let name = field.text();
                let installs = METHODS.contains(&name)
                    || HOOK_METHOD_PREFIXES.iter().any(|p| name.strip_prefix(p).is_some_and(|rest| rest.starts_with(|c: char| c.is_uppercase())))
                    || (OPTIONS.contains(&name) && operand.kind() == "identifier" && mcp_go(operand));
                if !installs {
                    continue;
                }
                for argument in n.field_child("arguments").into_iter().flat_map(|a| a.named_children()) {
                    out.push(Site { file, argument, api: name.to_owned() });
                }
            }
            // `server.Hooks{OnBeforeAny: []server.BeforeAnyHookFunc{f, func(…) {…}}}`
            "composite_literal" => {
                let Some(ty) = n.field_child("type").filter(|t| t.kind() == "qualified_type") else { continue };
                if ty.field_child("name").is_none_or(|t| t.text() != "Hooks") || !ty.field_child("package").is_some_and(mcp_go) {
                    continue;
                }
                for element in n.field_child("body").into_iter().flat_map(|b| b.named_children()) {
                    let hook = element.field_child("key").map(|k| k.text().to_owned()).unwrap_or_default();
                    let value = element.field_child("value").and_then(|v| v.named_children().next());
                    let hooks = value.and_then(|v| match v.kind() {
                        "composite_literal" => v.field_child("body"),
                        "literal_value" => Some(v),
                        _ => None,
                    });
                    match hooks {
                        Some(list) => out.extend(list.named_children().filter_map(|e| e.named_children().next()).map(|argument| Site {
                            file,
                            argument,
                            api: hook.clone(),
                        })),
                        None => out.push(Site { file, argument: element, api: hook }),
                    }
                }
            }
            // `hooks.OnBeforeAny = append(…)`: a hook list filled where no literal shows it.
            "assignment_statement" if imports.values().any(|(path, _)| path == MCP_GO_SERVER) => {
                for target in n.field_child("left").into_iter().flat_map(|l| l.named_children()) {
                    let field = target.field_child("field").filter(|_| target.kind() == "selector_expression");
                    if field.is_some_and(|f| f.text().strip_prefix("On").is_some_and(|rest| rest.starts_with(|c: char| c.is_uppercase()))) {
                        out.push(Site { file, argument: target, api: "hook list".to_owned() });
                    }
                }
            }
            _ => {}
        }
    }
    out
}
