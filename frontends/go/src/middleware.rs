//! Code the release installs around every request: SDK middleware and hooks.
//!
//! An MCP SDK runs a server's middleware and hooks on every request, around
//! the tool's handler: that code can change the arguments the handler reads,
//! answer the call itself, or have effects of its own. So it is bound like
//! the function a handler literal is handed to ([`super::pinned`]): each
//! function the module installs through an SDK's middleware or hook API
//! (the tables below) is a region or pinned by the digest of its closure,
//! or the registration escalates naming the installing call.
//!
//! What an installing call installs is read from its argument, failing closed:
//! - a function of the release, named or called as a middleware factory
//!   (`addUserAgentsMiddleware(cfg, …)`): pinned as that function
//!   (`internal/ghmcp.addUserAgentsMiddleware`, its closure holding the
//!   middleware it returns); a factory handed a function literal escalates
//!   (that code would run unbound);
//! - a function literal, written in place or bound once to a local: the
//!   literals one function installs through one API are pinned together,
//!   keyed `DIR.FUNC#API` (`internal/ghmcp.NewMCPServer#AddReceivingMiddleware`);
//!   what they capture from the function is data the statement describes;
//! - a variadic parameter spread on (`middleware...`): every call of that
//!   function in the module must hand it nothing;
//! - code of a package outside the release (an SDK's own middleware):
//!   trusted by identity like any dependency.
//!
//! Anything else escalates: a field, an element, a method's result, a
//! package variable, a hook list assigned outside a `Hooks` literal.

use fcd_frontends::ts::{Node, Syntax};

use super::pinned::Index;
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

/// Code installed around every request, as the pin check binds it.
pub(super) enum Installed<'a> {
    /// A function of the release: `name` of package `dir`.
    Function { file: &'a str, at: Node<'a>, dir: String, name: String },
    /// The function literals `key` (`FUNC#API`) of package `dir` installs.
    Literals { file: &'a str, at: Node<'a>, dir: String, key: String },
    /// Code no pin can name, and why.
    Unbound { file: &'a str, at: Node<'a>, why: String },
}

/// One argument of an installing call (or one hook of a `Hooks` literal).
struct Site<'a> {
    file: &'a str,
    argument: Node<'a>,
    /// The installing API (`AddReceivingMiddleware`, the hook field `OnBeforeAny`).
    api: String,
}

/// What one site installs.
enum Bound<'a> {
    Release { dir: String, name: String },
    Literal(Node<'a>),
    Library,
    Spread(&'a str),
    Unbound(String),
}

/// Every piece of code the module installs around requests.
pub(super) fn installed<'a>(index: &Index<'_, 'a>) -> Vec<Installed<'a>> {
    let mut out: Vec<Installed<'a>> = Vec::new();
    for (file, syntax) in index.all_files() {
        let dir = scope::dir(file);
        for site in sites(file, syntax) {
            let (file, at) = (site.file, site.argument);
            let unbound = |why: String| Installed::Unbound { file, at, why };
            out.push(match bound(index, dir, &site) {
                Bound::Library => continue,
                Bound::Release { dir, name } => Installed::Function { file, at, dir, name },
                Bound::Literal(_) => match enclosing_key(at) {
                    Some(function) => {
                        let key = format!("{function}#{}", site.api);
                        if out.iter().any(|i| matches!(i, Installed::Literals { dir: d, key: k, .. } if d.as_str() == dir && *k == key)) {
                            continue;
                        }
                        Installed::Literals { file, at, dir: dir.to_owned(), key }
                    }
                    None => unbound("a function literal installed outside any function".to_owned()),
                },
                Bound::Spread(parameter) => match callers_hand_nothing(index, dir, at, parameter) {
                    Ok(()) => continue,
                    Err(why) => unbound(why),
                },
                Bound::Unbound(why) => unbound(why),
            });
        }
    }
    out
}

/// The function literals the function `function` (`F`, or `T.m`) of
/// package `dir` installs through `api`, in source order: the text a
/// `FUNC#API` pin binds.
pub(super) fn literals<'a>(index: &Index<'_, 'a>, dir: &str, function: &str, api: &str) -> Vec<(&'a str, Node<'a>)> {
    let mut out = Vec::new();
    for (file, syntax) in index.files(dir) {
        for site in sites(file, syntax).into_iter().filter(|s| s.api == api && enclosing_key(s.argument).as_deref() == Some(function)) {
            if let Bound::Literal(literal) = bound(index, dir, &site) {
                out.push((site.file, literal));
            }
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

/// What the argument of one site installs.
fn bound<'a>(index: &Index<'_, 'a>, dir: &str, site: &Site<'a>) -> Bound<'a> {
    let mut e = site.argument;
    while e.kind() == "parenthesized_expression" {
        let Some(inner) = e.named_children().next() else { break };
        e = inner;
    }
    let root = e.ancestors().last().unwrap_or(e);
    let imports = scope::imports(root);
    // A function of package `dir` or of an imported package, by the name written.
    let function = |f: Node<'a>| -> Option<Bound<'a>> {
        let mut f = f;
        while matches!(f.kind(), "index_expression" | "generic_type") {
            f = f.field_child("operand").or_else(|| f.field_child("type"))?;
        }
        match f.kind() {
            "identifier" if index.declares_function(dir, f.text()) => Some(Bound::Release { dir: dir.to_owned(), name: f.text().to_owned() }),
            "selector_expression" => {
                let (package, member) = (f.field_child("operand")?, f.field_child("field")?);
                let (path, _) = imports.get(package.text()).filter(|_| package.kind() == "identifier")?;
                match index.release(path) {
                    None => Some(Bound::Library),
                    Some(target) if index.declares_function(&target, member.text()) => Some(Bound::Release { dir: target, name: member.text().to_owned() }),
                    Some(_) => None,
                }
            }
            _ => None,
        }
    };
    match e.kind() {
        "func_literal" => Bound::Literal(e),
        "variadic_argument" => match e.named_children().next().filter(|p| p.kind() == "identifier") {
            Some(parameter) => Bound::Spread(parameter.text()),
            None => Bound::Unbound(format!("`{}` spreads a value no pin can name", e.compact_text())),
        },
        "identifier" => match bound_once(e) {
            Some(literal) => Bound::Literal(literal),
            None => function(e)
                .unwrap_or_else(|| Bound::Unbound(format!("`{}` is neither a function of the release nor a local bound once to a function literal", e.text()))),
        },
        "selector_expression" => function(e).unwrap_or_else(|| Bound::Unbound(format!("`{}` is not a function fcd can name", e.compact_text()))),
        "call_expression" => {
            if e.field_child("arguments").is_some_and(|a| a.descendants().any(|d| d.kind() == "func_literal")) {
                return Bound::Unbound(format!("`{}` hands a function literal to what builds the middleware", e.compact_text()));
            }
            e.field_child("function")
                .and_then(function)
                .unwrap_or_else(|| Bound::Unbound(format!("`{}` is not the call of a function fcd can name", e.compact_text())))
        }
        _ => Bound::Unbound(format!("`{}` is not a function, a call of one, or a function literal", e.compact_text())),
    }
}

/// The function literal the local `name` is bound to, when its one binding
/// in the enclosing function is `name := func(…) {…}` (or `var name =`)
/// and nothing else assigns it or takes its address.
fn bound_once<'a>(name: Node<'a>) -> Option<Node<'a>> {
    let function = scope::enclosing(name);
    if !matches!(function.kind(), "function_declaration" | "method_declaration") {
        return None;
    }
    let mut literal = None;
    for n in function.descendants() {
        let (left, right) = match n.kind() {
            "short_var_declaration" | "assignment_statement" => (n.field_child("left"), n.field_child("right")),
            "var_spec" => (Some(n), n.field_child("value")),
            "unary_expression" if n.field_child("operator").is_some_and(|o| o.text() == "&") => {
                if n.field_child("operand").is_some_and(|o| o.kind() == "identifier" && o.text() == name.text()) {
                    return None;
                }
                continue;
            }
            _ => continue,
        };
        let names: Vec<Node<'a>> = match n.kind() {
            "var_spec" => n.field_children("name").collect(),
            _ => left.into_iter().flat_map(|l| l.named_children()).collect(),
        };
        let Some(at) = names.iter().position(|l| l.kind() == "identifier" && l.text() == name.text()) else { continue };
        let value = right.and_then(|r| r.named_children().nth(at)).filter(|v| v.kind() == "func_literal");
        if n.kind() == "assignment_statement" || literal.is_some() || value.is_none() {
            return None;
        }
        literal = value;
    }
    literal
}

/// `F` or `T.m`: the top-level function or method holding `n`.
fn enclosing_key(n: Node<'_>) -> Option<String> {
    let function = scope::enclosing(n);
    let name = function.field_child("name")?.text();
    match function.kind() {
        "function_declaration" => Some(name.to_owned()),
        "method_declaration" => Some(format!("{}.{name}", super::syntax::receiver_type(function)?)),
        _ => None,
    }
}

/// The function holding `at` spreads its variadic parameter `parameter`
/// into an installing call: every call of it in the module hands that
/// parameter nothing, and the function is used only by calls.
fn callers_hand_nothing(index: &Index<'_, '_>, dir: &str, at: Node<'_>, parameter: &str) -> Result<(), String> {
    let function = scope::enclosing(at);
    let name = function.field_child("name").map(|n| n.text()).unwrap_or_default();
    let parameters: Vec<Node<'_>> = function.field_child("parameters").map(|p| p.named_children().collect()).unwrap_or_default();
    let variadic = parameters.last().filter(|p| p.kind() == "variadic_parameter_declaration");
    if function.kind() != "function_declaration" || variadic.and_then(|v| v.field_child("name")).is_none_or(|n| n.text() != parameter) {
        return Err(format!("`{parameter}...` is not the variadic parameter of a top-level function, so what it holds is not found"));
    }
    let fixed: usize = parameters[..parameters.len() - 1].iter().map(|p| p.field_children("name").count().max(1)).sum();
    for (file, syntax) in index.all_files() {
        let imports = scope::imports(syntax.root());
        let same = scope::dir(file) == dir;
        for n in syntax.root().descendants() {
            let names_it = match n.kind() {
                "identifier" => same && n.text() == name && !super::syntax::is_member(n) && n.parent().is_none_or(|p| p.kind() != "function_declaration"),
                "selector_expression" => {
                    n.field_child("field").is_some_and(|f| f.text() == name)
                        && n.field_child("operand").is_some_and(|o| imports.get(o.text()).is_some_and(|(path, _)| index.release(path).as_deref() == Some(dir)))
                }
                _ => false,
            };
            if !names_it {
                continue;
            }
            let call = n.parent().filter(|p| p.kind() == "call_expression" && p.field_child("function").is_some_and(|f| f.byte_range() == n.byte_range()));
            let handed = call.and_then(|c| c.field_child("arguments")).map(|a| {
                let arguments: Vec<Node<'_>> = a.named_children().collect();
                arguments.len() > fixed || arguments.iter().any(|x| x.kind() == "variadic_argument")
            });
            match handed {
                Some(false) => {}
                Some(true) => return Err(format!("{file}:{} hands `{name}` code for `{parameter}...`, which it installs around every request", n.line())),
                None => return Err(format!("{file}:{} uses `{name}` other than by calling it, so what `{parameter}...` holds is not found", n.line())),
            }
        }
    }
    Ok(())
}
