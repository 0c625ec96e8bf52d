//! Python's candidate operations on process-wide state ([`fcd_frontends::ambient`]):
//! every name or attribute chain, resolved through the imports and aliases of
//! the function it stands in (`from os import environ as E`, `import os as o`,
//! `env = os.environ`), as a call, a reference or a write target.

use fcd_frontends::ambient::{CWD, ENV, Entry, LOGGING, Op, Quiet, SIGNALS, Table, UMASK, Use, Writes, any, call, object};
use fcd_frontends::ts::{Node, Syntax};

use super::bindings::is_function;
use super::scope::Scope;

pub fn ops<'a>(file: &str, syntax: &'a Syntax) -> Vec<Op<'a>> {
    let root = syntax.root();
    // One scope per function (and one for module-level code), built once.
    let mut scopes: Vec<(Node<'a>, Scope<'a>)> = Vec::new();
    let mut out = Vec::new();
    for node in root.descendants() {
        let targets: Vec<Node<'a>> = match node.kind() {
            "assignment" | "augmented_assignment" | "for_statement" => node.field_child("left").into_iter().collect(),
            "delete_statement" => node.named_children().collect(),
            "attribute" | "identifier" => {
                if !expression(node) {
                    continue;
                }
                let scope = scope_at(&mut scopes, root, node, file);
                let Some(path) = scope.resolve(node) else { continue };
                let call = node.parent().filter(|p| p.kind() == "call" && p.field_child("function") == Some(node));
                let mut handler = None;
                let what = match call {
                    Some(call) => {
                        let args: Vec<Node<'_>> =
                            call.field_child("arguments").map(|a| a.named_children().filter(|c| c.kind() != "comment").collect()).unwrap_or_default();
                        let keywords = args
                            .iter()
                            .filter(|a| a.kind() == "keyword_argument")
                            .filter_map(|a| Some((a.field_child("name")?.text().to_owned(), a.field_child("value").and_then(|v| scope.resolve(v)))))
                            .collect();
                        handler = args.last().and_then(|a| defined_once(root, *a));
                        Use::Called { callee: path, args: args.len(), first: args.first().and_then(|a| super::syntax::plain_string(*a)), keywords }
                    }
                    None => Use::Reference(path),
                };
                out.push(Op { handler, ..Op::new(node, what) });
                continue;
            }
            _ => continue,
        };
        for target in targets.into_iter().flat_map(written) {
            let scope = scope_at(&mut scopes, root, target, file);
            if let Some(path) = target_path(scope, target) {
                out.push(Op::new(target, Use::Written(path)));
            }
        }
    }
    out
}

/// The module-level function `arg` names, when the module binds the name
/// exactly once, by that `def`.
fn defined_once<'a>(root: Node<'a>, arg: Node<'a>) -> Option<Node<'a>> {
    if arg.kind() != "identifier" {
        return None;
    }
    let name = arg.text();
    let mut sites = root.descendants().filter(|n| binds(*n, name));
    match (sites.next(), sites.next()) {
        (Some(def), None) if is_function(def) && def.parent() == Some(root) => Some(def),
        _ => None,
    }
}

/// Whether `n` binds `name`: a definition, an assignment or loop target, an
/// import, a parameter, a `global` or `nonlocal` declaration.
fn binds(n: Node<'_>, name: &str) -> bool {
    let named = |field: &str| n.field_child(field).is_some_and(|c| c.text() == name);
    match n.kind() {
        "function_definition" | "class_definition" => named("name"),
        "assignment" | "augmented_assignment" | "for_statement" | "named_expression" | "for_in_clause" => {
            let target = n.field_child("left").or_else(|| n.field_child("name"));
            target.is_some_and(|t| t.descendants().any(|c| c.kind() == "identifier" && c.text() == name))
        }
        "aliased_import" => named("alias"),
        "dotted_name" => n.parent().is_some_and(|p| matches!(p.kind(), "import_statement" | "import_from_statement")) && n.text() == name,
        "identifier" => {
            n.text() == name
                && n.parent().is_some_and(|p| {
                    matches!(p.kind(), "parameters" | "lambda_parameters" | "global_statement" | "nonlocal_statement" | "as_pattern_target")
                        || (matches!(p.kind(), "default_parameter" | "typed_parameter" | "typed_default_parameter") && p.named_children().next() == Some(n))
                })
        }
        _ => false,
    }
}

/// Whether an identifier or attribute is an expression: not an import's
/// name, an attribute's name, a keyword argument's name, a parameter or a
/// definition's name.
fn expression(node: Node<'_>) -> bool {
    if node.ancestors().any(|a| matches!(a.kind(), "import_statement" | "import_from_statement" | "future_import_statement")) {
        return false;
    }
    let Some(parent) = node.parent() else { return false };
    match parent.kind() {
        "attribute" => parent.field_child("attribute") != Some(node),
        "keyword_argument" => parent.field_child("name") != Some(node),
        "function_definition" | "class_definition" => parent.field_child("name") != Some(node),
        "parameters" | "default_parameter" | "typed_parameter" | "typed_default_parameter" | "lambda_parameters" => false,
        _ => true,
    }
}

/// Whether the write target `target` of file `file` (module `root`) writes
/// process-wide state, which the shared check of `fcd-frontends` (`ambient_check`) judges.
pub(super) fn writes_state(root: Node<'_>, target: Node<'_>, file: &str) -> bool {
    let mut scopes = Vec::new();
    let scope = scope_at(&mut scopes, root, target, file);
    target_path(scope, target).is_some_and(|p| fcd_frontends::ambient::is_state_write(&TABLE, &p))
}

/// The scope of the function (or module code) `node` stands in.
fn scope_at<'s, 'a>(scopes: &'s mut Vec<(Node<'a>, Scope<'a>)>, root: Node<'a>, node: Node<'a>, file: &str) -> &'s Scope<'a> {
    let owner = node.ancestors().find(|a| is_function(*a)).unwrap_or(root);
    let at = match scopes.iter().position(|(o, _)| *o == owner) {
        Some(i) => i,
        None => {
            let scope = if owner == root { Scope::module(root, file) } else { Scope::new(root, owner, file) };
            scopes.push((owner, scope));
            scopes.len() - 1
        }
    };
    &scopes[at].1
}

/// The attribute and subscript targets of a write (`a.b = …`, `a[k] = …`, `del a[k]`).
fn written(target: Node<'_>) -> Vec<Node<'_>> {
    match target.kind() {
        "attribute" | "subscript" => vec![target],
        "identifier" => Vec::new(),
        _ => target.named_children().flat_map(written).collect(),
    }
}

/// A write target's path, a subscript spelled `[]`: `os.environ[k]` is `os.environ[]`.
fn target_path<'a>(scope: &Scope<'a>, target: Node<'a>) -> Option<String> {
    match target.kind() {
        "subscript" => Some(format!("{}[]", target_path(scope, target.field_child("value")?)?)),
        "attribute" if target.field_child("object").is_some_and(|o| o.kind() == "subscript") => {
            Some(format!("{}.{}", target_path(scope, target.field_child("object")?)?, target.field_child("attribute")?.text()))
        }
        "parenthesized_expression" => target_path(scope, target.named_children().find(|c| c.kind() != "comment")?),
        _ => scope.resolve(target),
    }
}

/// The streams a quiet `logging.basicConfig` may write to.
const STANDARD_STREAMS: &[&str] = &["sys.stderr", "sys.stdout"];

/// `logging.basicConfig`'s keywords that only shape messages on a standard
/// stream: `filename`, `filemode`, `handlers` or another stream escalate.
const QUIET_BASIC_CONFIG: &[Quiet] =
    &[any("level"), any("format"), any("datefmt"), any("style"), any("force"), Quiet { keyword: "stream", values: Some(STANDARD_STREAMS) }];

/// Python's operations on process-wide state, by resolved dotted path.
pub(super) const TABLE: Table = Table {
    entries: &[
        object("os.environ", ENV),
        object("os.environb", ENV),
        call("os.putenv", ENV),
        call("os.unsetenv", ENV),
        call("os.chdir", CWD),
        call("os.fchdir", CWD),
        call("os.umask", UMASK),
        call("signal.signal", SIGNALS),
        call("signal.setitimer", SIGNALS),
        call("signal.alarm", SIGNALS),
        call("signal.siginterrupt", SIGNALS),
        call("signal.pthread_sigmask", SIGNALS),
        call("signal.set_wakeup_fd", SIGNALS),
        Entry { path: "logging.basicConfig", state: LOGGING, writes: Writes::CallUnlessQuiet(QUIET_BASIC_CONFIG) },
        call("logging.setLoggerClass", LOGGING),
        call("logging.setLogRecordFactory", LOGGING),
        call("logging.captureWarnings", LOGGING),
        call("logging.config.dictConfig", LOGGING),
        call("logging.config.fileConfig", LOGGING),
        call("logging.config.listen", LOGGING),
        object("logging.root", LOGGING),
        object("logging.getLogger()", LOGGING),
    ],
    mutators: &[
        "setdefault",
        "update",
        "pop",
        "popitem",
        "clear",
        "__setitem__",
        "__delitem__",
        "__ior__",
        "addHandler",
        "removeHandler",
        "addFilter",
        "removeFilter",
    ],
    writes_first_argument: &[],
};
