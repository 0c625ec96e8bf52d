//! What surrounds a Python region: the module and package code that runs
//! before the handler and can change what its names mean.
//!
//! A region's facts are only as good as the names they resolve. Code outside
//! the region can make those names mean something else at run time without
//! touching a single line of the region: rebinding the handler's own name
//! (`git_diff = wrapper(git_diff)`), writing an attribute of an imported
//! module or class (`git.Repo.rev_parse = …`, `server.git_diff = …`,
//! `sys.modules["git"] = …`), writing through `globals()`, `setattr`, or
//! `exec`, or registering a second function with the same decorator (the last
//! registration wins). Every such construct anywhere in the closure escalates.

use fcd_frontends::frontend::Region;
use fcd_frontends::ir::{Escalation, EscalationCode};
use fcd_frontends::ts::Node;

use super::bindings::{self, BindingKind};

/// Builtins that write names or run text: never allowed anywhere in the closure.
const WRITERS: &[&str] = &["setattr", "delattr", "exec", "eval", "compile", "__import__", "globals", "locals", "vars"];

pub fn check(region: &Region<'_>) -> Result<(), Escalation> {
    handler_bound_once(region)?;
    unique_registration(region)?;
    for (path, syntax) in region.trees.iter().filter(|(p, _)| p.ends_with(".py")) {
        no_patching(path, syntax.root())?;
    }
    Ok(())
}

fn escalate(file: &str, node: Node<'_>, detail: String) -> Escalation {
    Escalation::new(EscalationCode::ShapeMismatch, detail, Some(fcd_model::effect::Anchor::new(file, node.line(), node.end_line(), node.text())))
}

/// The region's name is bound exactly once where it is defined: by its `def`.
fn handler_bound_once(region: &Region<'_>) -> Result<(), Escalation> {
    let Some(name) = region.node.field_child("name") else { return Ok(()) };
    let owner = region.node.ancestors().find(|a| matches!(a.kind(), "function_definition" | "class_definition" | "module")).unwrap_or(region.node);
    let mut bindings = bindings::bindings_at(owner, Some(name.text())).remove(name.text()).unwrap_or_default();
    if owner.kind() == "function_definition" {
        // A function's level counts every binding inside it, nested functions
        // included; a nested function's own local of that name rebinds nothing
        // here, unless it declares the name `nonlocal` (then it counts).
        let nonlocal =
            owner.descendants().any(|n| n.kind() == "nonlocal_statement" && n.named_children().any(|c| c.kind() == "identifier" && c.text() == name.text()));
        if !nonlocal {
            bindings.retain(|b| scope_of(b.node) == Some(owner));
        }
    }
    match bindings.as_slice() {
        [one] if matches!(one.kind, BindingKind::Definition) => Ok(()),
        _ => {
            let other = bindings.iter().find(|b| b.node != name).map_or(owner, |b| b.node);
            Err(escalate(
                region.file,
                other,
                format!(
                    "the handler's name `{}` is bound {} times where it is defined (line {}): callers may reach another function",
                    name.text(),
                    bindings.len(),
                    other.line()
                ),
            ))
        }
    }
}

/// The function, lambda or class body a binding happens in; a `def`'s or
/// `class`'s own name is bound where the definition stands.
fn scope_of(node: Node<'_>) -> Option<Node<'_>> {
    node.ancestors().find(|a| matches!(a.kind(), "function_definition" | "class_definition" | "lambda" | "module") && a.field_child("name") != Some(node))
}

/// A decorator of the region (a registration such as `@server.call_tool()`)
/// decorates nothing else in its module: a second registration replaces the first.
fn unique_registration(region: &Region<'_>) -> Result<(), Escalation> {
    // A route's registration is its dispatcher's.
    let function = super::route::function_of(region.node);
    let Some(decorated) = function.parent().filter(|p| p.kind() == "decorated_definition") else { return Ok(()) };
    let root = region.node.ancestors().last().unwrap_or(region.node);
    for own in decorated.named_children().filter(|c| c.kind() == "decorator") {
        // `@wrapper` naming a region of the profile: a reviewed wrapper makes
        // a new function for each definition it decorates and registers none.
        let wrapper = own.named_children().find(|c| c.kind() != "comment").filter(|e| e.kind() == "identifier");
        if wrapper.is_some_and(|w| region.env.reviewed.iter().any(|r| r == w.text())) {
            continue;
        }
        let text = squeeze(own.text());
        if let Some(other) = root.descendants().filter(|d| d.kind() == "decorator" && *d != own).find(|d| squeeze(d.text()) == text) {
            return Err(escalate(
                region.file,
                other,
                format!("`{}` also decorates another definition at line {}: the later registration replaces the reviewed one", own.text(), other.line()),
            ));
        }
    }
    Ok(())
}

fn squeeze(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// No statement of the file writes an attribute or item of an imported
/// module or class, of `globals()`-like objects, or calls a name writer.
fn no_patching(file: &str, root: Node<'_>) -> Result<(), Escalation> {
    let module = bindings::bindings_at(root, None);
    let imported = |name: &str| module.get(name).is_some_and(|bs| bs.iter().any(|b| matches!(b.kind, BindingKind::Import(_))));
    for node in root.descendants() {
        let targets: Vec<Node<'_>> = match node.kind() {
            "assignment" | "augmented_assignment" => node.field_child("left").into_iter().collect(),
            "delete_statement" => node.named_children().collect(),
            // The grammar reads `type(x).a = v` as a type alias; Python reads
            // it as an assignment (`type NAME = …` is the only alias form).
            "type_alias_statement" => match node.field_child("left").and_then(|t| t.named_children().next()) {
                Some(name) if matches!(name.kind(), "identifier" | "generic_type") => continue,
                Some(target) => vec![target],
                None => continue,
            },
            "call" => {
                let callee = node.field_child("function").map(|f| f.text()).unwrap_or_default();
                if WRITERS.contains(&callee) && !module.contains_key(callee) {
                    let detail = format!("`{callee}(…)` can rebind any name the handler resolves; fcd cannot follow it");
                    return Err(Escalation::new(EscalationCode::DynamicCallee, detail, escalate(file, node, String::new()).anchor));
                }
                if let Some(function) = node.field_child("function") {
                    special_write_by_call(file, root, function)?;
                }
                continue;
            }
            _ => continue,
        };
        for target in targets.into_iter().flat_map(|t| written(t)) {
            special_write(file, target)?;
            let base = base_of(target);
            let patched = match base.kind() {
                "identifier" => imported(base.text()),
                // `globals()[…] = …`, `sys._getframe().f_globals[…] = …`, `type(x).a = …`
                "call" => true,
                _ => false,
            };
            // Process-wide state (`os.environ[k] = …`) is judged by the
            // ambient check, which names it and knows the pinned regions.
            if patched && !super::ambient::writes_state(root, target, file) {
                return Err(escalate(
                    file,
                    target,
                    format!("`{}` writes into an imported module or class (or a namespace object): what the handler's names mean may change", target.text()),
                ));
            }
        }
    }
    Ok(())
}

/// Whether `name` is a special attribute (`__class__`, `__dict__`, `__code__`,
/// `__getattr__`, …): Python reads them to decide what an object is and does.
fn is_special(name: &str) -> bool {
    name.len() > 4 && name.starts_with("__") && name.ends_with("__")
}

/// The special attributes an attribute or subscript chain passes through.
fn specials_in(mut node: Node<'_>) -> Option<String> {
    loop {
        let next = match node.kind() {
            "attribute" => {
                let name = node.field_child("attribute").map(|a| a.text()).unwrap_or_default();
                if is_special(name) {
                    return Some(name.to_owned());
                }
                node.field_child("object")
            }
            "subscript" => node.field_child("value"),
            _ => None,
        };
        node = next?;
    }
}

/// A write through a special attribute of any object, a local's too
/// (`obj.attr.__class__ = …`, `x.__dict__[k] = …`, `del f.__defaults__`):
/// it changes what the object is, or what its methods do, where no region
/// looks, so it escalates wherever it is.
fn special_write(file: &str, target: Node<'_>) -> Result<(), Escalation> {
    match specials_in(target) {
        Some(name) => Err(escalate(
            file,
            target,
            format!("`{}` writes the special attribute `{name}`: it changes what the object is or does, in code no region shows", target.compact_text()),
        )),
        None => Ok(()),
    }
}

/// A call that writes through a special method or attribute, which no name
/// resolution sees through: `object.__setattr__(o, …)`,
/// `type(os.environ).__setitem__(os.environ, …)`, a mutating method of `o.__dict__`.
fn special_write_by_call(file: &str, root: Node<'_>, function: Node<'_>) -> Result<(), Escalation> {
    if function.kind() != "attribute" {
        return Ok(());
    }
    let method = function.field_child("attribute").map(|a| a.text()).unwrap_or_default();
    let object = function.field_child("object");
    // Process-wide state (`os.environ.__setitem__(…)`) is the ambient check's, which names it.
    if object.is_some_and(|o| super::ambient::writes_state(root, o, file)) {
        return Ok(());
    }
    let through_dict = object.and_then(specials_in).is_some_and(|n| n == "__dict__")
        && matches!(method, "update" | "setdefault" | "pop" | "popitem" | "clear" | "__setitem__" | "__delitem__" | "__ior__");
    if matches!(method, "__setattr__" | "__delattr__" | "__setitem__" | "__delitem__" | "__set__" | "__delete__" | "__ior__") || through_dict {
        return Err(escalate(
            file,
            function,
            format!(
                "`{}(…)` writes an attribute through a special method or `__dict__`: it changes what the object is or does, in code no region shows",
                function.compact_text()
            ),
        ));
    }
    Ok(())
}

/// Whether any statement inside `func` writes an item or attribute of the
/// name `base` (`arguments["x"] = …`, `del arguments["x"]`, `arguments.x += …`).
pub fn writes_into(func: Node<'_>, base: &str) -> bool {
    func.descendants().any(|node| {
        let targets: Vec<Node<'_>> = match node.kind() {
            "assignment" | "augmented_assignment" => node.field_child("left").into_iter().collect(),
            "delete_statement" => node.named_children().collect(),
            _ => return false,
        };
        targets.into_iter().flat_map(written).any(|t| {
            let b = base_of(t);
            b.kind() == "identifier" && b.text() == base
        })
    })
}

/// The attribute and subscript targets of an assignment's left side.
fn written(target: Node<'_>) -> Vec<Node<'_>> {
    match target.kind() {
        "attribute" | "subscript" => vec![target],
        "identifier" => Vec::new(),
        _ => target.named_children().flat_map(written).collect(),
    }
}

/// The leftmost object of an attribute or subscript chain.
fn base_of(mut node: Node<'_>) -> Node<'_> {
    loop {
        let next = match node.kind() {
            "attribute" => node.field_child("object"),
            "subscript" => node.field_child("value"),
            "parenthesized_expression" => node.named_children().next(),
            _ => None,
        };
        match next {
            Some(n) => node = n,
            None => return node,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fcd_frontends::frontend::{Env, Lang};
    use fcd_frontends::ts::Syntax;

    /// Whether the function `name` of `src` passes [`handler_bound_once`].
    fn bound_once(src: &str, name: &str) -> bool {
        let syntax = Syntax::parse(Lang::Python, src.into()).unwrap();
        let node = syntax.root().descendants().find(|n| n.kind() == "function_definition" && n.field_child("name").is_some_and(|i| i.text() == name)).unwrap();
        let trees = [("m.py", &syntax)];
        let env = Env::default();
        handler_bound_once(&Region { name: "r", file: "m.py", node, trees: &trees, env: &env }).is_ok()
    }

    #[test]
    fn a_nested_functions_own_local_does_not_rebind_the_handler() {
        let nested = "def serve():\n    def helper():\n        diff = 1\n        return diff\n    def diff():\n        return 2\n";
        assert!(bound_once(nested, "diff"), "helper's local `diff` is its own");
        let nonlocal = "def serve():\n    def helper():\n        nonlocal diff\n        diff = 1\n    def diff():\n        return 2\n";
        assert!(!bound_once(nonlocal, "diff"), "a nonlocal write rebinds serve's `diff`");
        let twice = "def serve():\n    def diff():\n        return 2\n    diff = print\n";
        assert!(!bound_once(twice, "diff"), "a second binding at serve's level");
        let param = "def serve():\n    def helper(diff):\n        return diff\n    def diff():\n        return 2\n";
        assert!(bound_once(param, "diff"), "a nested function's parameter is its own");
    }
}
