//! JavaScript's candidate operations on process-wide state ([`fcd_frontends::ambient`]):
//! names and member chains with their head resolved by its binding: the
//! global `process` (or `globalThis.process`), an import of `process` or
//! `node:process` (default, namespace or a named export such as `env`), a
//! `require` of it, and an alias bound once (`const env = process.env`,
//! `const { env } = process`). A head bound otherwise is some other value.

use std::collections::BTreeSet;

use fcd_frontends::ambient::{CWD, ENV, Entry, Op, SIGNALS, Table, UMASK, Use, Writes, call, object};
use fcd_frontends::ts::{Node, Syntax};

use super::FUNCTIONS;
use super::bindings::{Bindings, origins};
use super::bindings::{Head, module_head};
use super::syntax::{arguments, bare, dotted, string_content};

pub fn ops<'a>(syntax: &'a Syntax, writes_first_argument: &[&str]) -> Vec<Op<'a>> {
    let root = syntax.root();
    let mut out = Vec::new();
    let mut heads = process_heads(root);
    // The heads of the calls that write their first argument (`Object.assign`).
    heads.extend(writes_first_argument.iter().map(|c| c.split('.').next().unwrap_or(c).to_owned()));
    for node in root.descendants() {
        if matches!(node.kind(), "member_expression" | "identifier")
            && (head_of(node).is_none_or(|h| !heads.contains(&h)) || node.ancestors().any(|a| a.kind() == "import_statement"))
        {
            continue;
        }
        let target = match node.kind() {
            "assignment_expression" | "augmented_assignment_expression" => node.field_child("left"),
            "update_expression" => node.field_child("argument"),
            "unary_expression" if node.field_child("operator").is_some_and(|o| o.text() == "delete") => node.field_child("argument"),
            "for_in_statement" => node.field_child("left"),
            "member_expression" | "identifier" => {
                let Some(path) = resolve(root, node, 0) else { continue };
                let call = node.parent().filter(|p| p.kind() == "call_expression" && p.field_child("function").map(bare) == Some(node));
                let mut handler = None;
                let what = match call {
                    Some(call) => {
                        let args = arguments(call);
                        handler = args.last().and_then(|a| installed_function(root, bare(*a)));
                        if writes_first_argument.contains(&path.as_str()) {
                            if let Some(written) = args.first().and_then(|a| resolve(root, bare(*a), 0)) {
                                out.push(Op::new(call, Use::Written(written)));
                            }
                            continue;
                        }
                        Use::Called { callee: path, args: args.len(), first: args.first().and_then(|a| string_content(*a)), keywords: Vec::new() }
                    }
                    None => Use::Reference(path),
                };
                out.push(Op { handler, ..Op::new(node, what) });
                continue;
            }
            _ => continue,
        };
        let Some(target) = target.map(bare) else { continue };
        if matches!(target.kind(), "member_expression" | "subscript_expression" | "identifier")
            && let Some(path) = resolve(root, target, 0)
        {
            out.push(Op::new(target, Use::Written(path)));
        }
    }
    out
}

/// The function `arg` stands for: an inline function, or a name the file
/// binds exactly once, to a function.
fn installed_function<'a>(root: Node<'a>, arg: Node<'a>) -> Option<Node<'a>> {
    if FUNCTIONS.contains(&arg.kind()) {
        return Some(arg);
    }
    if arg.kind() != "identifier" {
        return None;
    }
    match origins(root, arg.text()).as_slice() {
        [Some(value)] if FUNCTIONS.contains(&value.kind()) => Some(*value),
        _ => None,
    }
}

/// The first name of a chain: `process` in `process.env[k]`.
fn head_of(n: Node<'_>) -> Option<String> {
    dotted(n).map(|p| p[..p.find(['.', '[', '(']).unwrap_or(p.len())].to_owned())
}

/// Every name that may stand for `process` or a part of it: `process`,
/// `globalThis`, `global`, the names an import or `require` of `process`
/// binds, and the names a declaration binds from one of these (to a fixed
/// point). Only chains headed by one of them are resolved.
fn process_heads(root: Node<'_>) -> BTreeSet<String> {
    let mut heads: BTreeSet<String> = ["process", "globalThis", "global"].into_iter().map(str::to_owned).collect();
    loop {
        let before = heads.len();
        for n in root.descendants() {
            let from_process = match n.kind() {
                "import_statement" => n.field_child("source").and_then(string_content).is_some_and(|s| is_process(&s)),
                "variable_declarator" => {
                    n.field_child("value").map(bare).is_some_and(|v| v.text().contains("process") || head_of(v).is_some_and(|h| heads.contains(&h)))
                }
                _ => false,
            };
            if !from_process {
                continue;
            }
            let mut names = Vec::new();
            match n.kind() {
                "import_statement" => names.extend(n.descendants().filter(|d| d.kind() == "identifier")),
                _ => super::bindings::pattern_names(n.field_child("name").unwrap_or(n), &mut names),
            }
            heads.extend(names.iter().map(|i| i.text().to_owned()));
        }
        if heads.len() == before {
            return heads;
        }
    }
}

/// The path a name or member chain stands for, its head resolved by its binding.
fn resolve(root: Node<'_>, n: Node<'_>, depth: usize) -> Option<String> {
    if depth > 8 {
        return None;
    }
    let n = bare(n);
    if n.kind() == "call_expression" {
        // `require("process")`
        let callee = n.field_child("function").map(bare)?;
        let spec = arguments(n).first().and_then(|a| string_content(*a));
        return (callee.kind() == "identifier" && callee.text() == "require" && spec.as_deref().is_some_and(is_process)).then(|| "process".to_owned());
    }
    let path = dotted(n)?;
    let end = path.find(['.', '[', '(']).unwrap_or(path.len());
    let (head, rest) = path.split_at(end);
    if matches!(head, "this" | "super") {
        return None;
    }
    // The innermost function that binds the head: an alias bound once, or another value.
    if let Some(f) = n.ancestors().filter(|a| FUNCTIONS.contains(&a.kind())).find(|f| {
        let b = Bindings::of(*f);
        b.is_param(head) || b.count(head) > 0
    }) {
        return alias(root, f, head, depth).map(|p| format!("{p}{rest}"));
    }
    let resolved = match module_head(root, head) {
        Head::Global if head == "globalThis" || head == "global" => {
            let inner = rest.strip_prefix(".process")?;
            return Some(format!("process{inner}"));
        }
        Head::Global => head.to_owned(),
        Head::Import(spec, orig) if is_process(&spec) => match orig.as_str() {
            "default" | "*" => "process".to_owned(),
            named => format!("process.{named}"),
        },
        Head::Import(..) => return None,
        Head::Declared => alias(root, root, head, depth)?,
    };
    Some(format!("{resolved}{rest}"))
}

fn is_process(spec: &str) -> bool {
    matches!(spec, "process" | "node:process")
}

/// What `name`, bound once in `owner` by a declaration with a value, stands for.
fn alias(root: Node<'_>, owner: Node<'_>, name: &str, depth: usize) -> Option<String> {
    let bound = origins(owner, name);
    let [Some(value)] = bound.as_slice() else { return None };
    let declarator = value.parent().filter(|d| d.kind() == "variable_declarator" && d.field_child("value") == Some(*value))?;
    let pattern = declarator.field_child("name")?;
    let base = resolve(root, *value, depth + 1)?;
    match pattern.kind() {
        "identifier" => Some(base),
        // `const { env } = process`, `const { env: e } = process`
        "object_pattern" => pattern.named_children().find_map(|p| match p.kind() {
            "shorthand_property_identifier_pattern" if p.text() == name => Some(format!("{base}.{name}")),
            "pair_pattern" if p.field_child("value").is_some_and(|v| v.kind() == "identifier" && v.text() == name) => {
                let key = p.field_child("key")?;
                Some(format!("{base}.{}", string_content(key).unwrap_or_else(|| key.text().to_owned())))
            }
            _ => None,
        }),
        _ => None,
    }
}

/// JavaScript's operations on process-wide state, by resolved path.
pub(super) const TABLE: Table = Table {
    entries: &[
        object("process.env", ENV),
        call("process.chdir", CWD),
        Entry { path: "process.umask", state: UMASK, writes: Writes::CallWithArgs },
        Entry { path: "process.on", state: SIGNALS, writes: Writes::Listener },
        Entry { path: "process.once", state: SIGNALS, writes: Writes::Listener },
        Entry { path: "process.addListener", state: SIGNALS, writes: Writes::Listener },
        Entry { path: "process.prependListener", state: SIGNALS, writes: Writes::Listener },
        Entry { path: "process.prependOnceListener", state: SIGNALS, writes: Writes::Listener },
    ],
    mutators: &[],
    writes_first_argument: &[
        "Object.assign",
        "Object.defineProperty",
        "Object.defineProperties",
        "Reflect.set",
        "Reflect.defineProperty",
        "Reflect.deleteProperty",
    ],
};
