//! Name resolution for Python: what a name in a region refers to, by its
//! declaration, never by its spelling.
//!
//! Identities are dotted paths resolved through the module's imports
//! (`import a.b as c`, `from a import b as c`), module-level definitions,
//! parameter annotations (`repo: git.Repo`), local aliases (`d = repo.git.diff`)
//! and the locals of enclosing functions (a handler nested in `serve`).
//! Resolution is flow-insensitive and conservative: a name bound twice at one
//! level (an import and a `def`, two assignments, a `global` write from a
//! function), or bound to something we cannot name, resolves to nothing, and
//! the caller reports it as unresolved instead of guessing. A bare name with no
//! binding is a builtin only when Python has that builtin; anything else (a
//! name a star import or `globals()` may supply) is unresolved.

use fcd_frontends::ts::Node;

use super::bindings::{Binding, BindingKind, Level, function_level, is_function, module_level};
use super::builtins::is_builtin;

/// The names visible inside one region.
pub struct Scope<'a> {
    /// The module's bindings (imports, definitions, assignments, `global` writes).
    pub module: Level<'a>,
    /// The module's own dotted name, used for its definitions.
    module_name: String,
    /// A `from m import *` makes every unbound bare name unknowable.
    wildcard: bool,
    /// Enclosing functions, outermost first; each is a level of its own.
    enclosing: Vec<Level<'a>>,
    /// The region's own function: its parameters and every binding in it.
    pub local: Level<'a>,
}

impl<'a> Scope<'a> {
    /// Builds the scope of the function `func` in module `root` of file `path`.
    pub fn new(root: Node<'a>, func: Node<'a>, path: &str) -> Scope<'a> {
        let module_name = path.rsplit('/').next().unwrap_or(path).trim_end_matches(".py").to_owned();
        let mut scope = Scope { module: module_level(root), module_name, wildcard: false, enclosing: Vec::new(), local: Level::default() };
        scope.wildcard = root.descendants().any(|n| n.kind() == "wildcard_import");
        let mut outer: Vec<Node<'a>> = func.ancestors().filter(|a| *a != func && is_function(*a)).collect();
        outer.reverse();
        scope.enclosing = outer.into_iter().map(function_level).collect();
        scope.local = function_level(func);
        scope
    }

    /// The scope of module-level code of `root` (no function around it).
    pub fn module(root: Node<'a>, path: &str) -> Scope<'a> {
        let module_name = path.rsplit('/').next().unwrap_or(path).trim_end_matches(".py").to_owned();
        let wildcard = root.descendants().any(|n| n.kind() == "wildcard_import");
        Scope { module: module_level(root), module_name, wildcard, enclosing: Vec::new(), local: Level::default() }
    }

    /// Whether a bare `name` in the region means a function or class the
    /// module defines (no local, enclosing or parameter binding hides it).
    pub fn is_module_definition(&self, name: &str) -> bool {
        let shadowed = std::iter::once(&self.local).chain(self.enclosing.iter()).any(|l| l.bindings.contains_key(name) || l.params.contains_key(name));
        !shadowed && self.module.bindings.get(name).is_some_and(|bs| bs.iter().any(|b| matches!(b.kind, BindingKind::Definition)))
    }

    /// Whether a bare `name` in the region means a function or class defined
    /// once inside the region's function or an enclosing one (`open_repo`
    /// nested in `create_server`), with no parameter of that name.
    pub fn is_nested_definition(&self, name: &str) -> bool {
        let levels = std::iter::once(&self.local).chain(self.enclosing.iter().rev());
        for level in levels {
            if let Some(bindings) = level.bindings.get(name) {
                return matches!(bindings.as_slice(), [Binding { kind: BindingKind::Definition, .. }]) && !level.params.contains_key(name);
            }
            if level.params.contains_key(name) {
                return false;
            }
        }
        false
    }

    /// Whether `name` is a parameter of the region's own function that
    /// nothing inside it rebinds, nested functions' parameters included.
    pub fn is_unchanged_param(&self, name: &str) -> bool {
        self.is_param(name) && self.bindings(name).is_empty()
    }

    /// Whether `name` is a parameter of the region's function.
    pub fn is_param(&self, name: &str) -> bool {
        self.local.params.contains_key(name)
    }

    /// The bindings of `name` inside the region's own function (parameters excluded).
    pub fn bindings(&self, name: &str) -> &[Binding<'a>] {
        self.local.bindings.get(name).map_or(&[], Vec::as_slice)
    }

    /// The first place inside the region that rebinds `name`, if any.
    pub fn rebinding(&self, name: &str) -> Option<Node<'a>> {
        self.bindings(name).first().map(|b| b.node)
    }

    /// For a use of a name whose only binding in the region's function is
    /// as a parameter of a function nested in it that holds the use: that
    /// parameter's trusted annotation (`Some(None)` when it has none).
    pub fn nested_parameter(&self, use_: Node<'a>) -> Option<Option<Node<'a>>> {
        match self.local.bindings.get(use_.text())?.as_slice() {
            [Binding { kind: BindingKind::Parameter { function, annotation }, .. }]
                if function.contains(use_) && !self.local.params.contains_key(use_.text()) =>
            {
                Some(*annotation)
            }
            _ => None,
        }
    }

    /// The dotted path an expression names, or `None` when it cannot be known.
    pub fn resolve(&self, expr: Node<'a>) -> Option<String> {
        self.resolve_depth(expr, 0)
    }

    fn resolve_depth(&self, expr: Node<'a>, depth: usize) -> Option<String> {
        // Alias chains longer than this are cycles or deliberate obfuscation.
        if depth > 16 {
            return None;
        }
        match expr.kind() {
            "identifier" => match self.nested_parameter(expr) {
                Some(annotation) => annotation.and_then(|a| self.resolve_annotation(a, depth)),
                None => self.resolve_name(expr.text(), depth),
            },
            // `A if c else B`: one path when both are the same, else both, `(A|B)`.
            "conditional_expression" => {
                let parts: Vec<Node<'a>> = expr.named_children().filter(|c| c.kind() != "comment").collect();
                let [then, _, otherwise] = parts.as_slice() else { return None };
                let (a, b) = (self.resolve_depth(*then, depth + 1)?, self.resolve_depth(*otherwise, depth + 1)?);
                if a == b { Some(a) } else { Some(format!("({}|{})", a.clone().min(b.clone()), a.max(b))) }
            }
            "attribute" => {
                let object = expr.field_child("object")?;
                // `X["k"].strip`: a method of what X's `__getitem__` returns,
                // spelled as that call. Only as a receiver: `X["k"](…)`
                // calls whatever the container holds and stays unknown.
                let object = match object.kind() {
                    "subscript" => format!("{}.__getitem__()", self.resolve_depth(object.field_child("value")?, depth + 1)?),
                    _ => self.resolve_depth(object, depth + 1)?,
                };
                Some(format!("{object}.{}", expr.field_child("attribute")?.text()))
            }
            "parenthesized_expression" => self.resolve_depth(expr.named_children().find(|c| c.kind() != "comment")?, depth + 1),
            // `await CALL`: the call's awaited result, spelled as the call's
            // (an inventory's `f()` is what calling f gives, awaited or not).
            "await" => self.resolve_depth(expr.named_children().find(|c| c.kind() != "comment")?, depth + 1),
            "call" => {
                let callee = self.resolve_depth(expr.field_child("function")?, depth + 1)?;
                Some(format!("{callee}()"))
            }
            // `A / B`: what the left operand's operator method returns,
            // spelled as its call (`pathlib.Path().__truediv__()`), so that
            // `(root / name).resolve()` names the method it calls. The right
            // operand is resolved too: an operand nothing names leaves the
            // result unknown (its reflected method could answer instead).
            "binary_operator" => {
                let method = operator_method(expr.field_child("operator")?.text())?;
                let left = self.resolve_depth(expr.field_child("left")?, depth + 1)?;
                self.resolve_depth(expr.field_child("right")?, depth + 1)?;
                Some(format!("{left}.{method}()"))
            }
            "string" | "concatenated_string" => Some("str".into()),
            "integer" => Some("int".into()),
            "float" => Some("float".into()),
            "true" | "false" => Some("bool".into()),
            "list" | "list_comprehension" => Some("list".into()),
            "dictionary" | "dictionary_comprehension" => Some("dict".into()),
            "set" | "set_comprehension" => Some("set".into()),
            "tuple" => Some("tuple".into()),
            _ => None,
        }
    }

    fn resolve_name(&self, name: &str, depth: usize) -> Option<String> {
        // Innermost level first: the region's function, its enclosing
        // functions, the module, then the builtins.
        let levels = std::iter::once(&self.local).chain(self.enclosing.iter().rev());
        for level in levels {
            if let Some(bindings) = level.bindings.get(name) {
                // A local name resolves only when bound exactly once, by
                // `name = expr`, and never also a parameter (two meanings).
                if level.params.contains_key(name) {
                    return None;
                }
                return match bindings.as_slice() {
                    [Binding { kind: BindingKind::Value(v), .. }] => self.resolve_depth(*v, depth + 1),
                    // `import m` / `from m import x` inside the function: the
                    // path, when every binding of the name imports the same one.
                    [Binding { kind: BindingKind::Import(path), .. }, rest @ ..]
                        if rest.iter().all(|b| matches!(&b.kind, BindingKind::Import(p) if p == path)) =>
                    {
                        Some(path.clone())
                    }
                    // `with M as x`: what M's `__enter__` returns, which the
                    // inventory spells (`httpx.AsyncClient().__aenter__().get`).
                    [Binding { kind: BindingKind::Entered { manager, asynchronous }, .. }] => {
                        let manager = self.resolve_depth(*manager, depth + 1)?;
                        Some(format!("{manager}.{}()", if *asynchronous { "__aenter__" } else { "__enter__" }))
                    }
                    // `for x in ITERABLE`: an element of it, spelled `ITERABLE[]`.
                    [Binding { kind: BindingKind::Element(iterable), .. }] => Some(format!("{}[]", self.resolve_depth(*iterable, depth + 1)?)),
                    // A function or class defined once in an enclosing
                    // function: named like Python's qualified name.
                    [Binding { kind: BindingKind::Definition, .. }] => Some(format!("{}.<locals>.{name}", self.module_name)),
                    _ => None,
                };
            }
            if let Some(annotation) = level.params.get(name) {
                return annotation.and_then(|a| self.resolve_annotation(a, depth));
            }
        }
        if let Some(bindings) = self.module.bindings.get(name) {
            return self.resolve_module_binding(name, bindings, depth);
        }
        // An unbound bare name is a builtin, unless a wildcard import may have
        // supplied it; a name Python does not have is unknowable.
        (!self.wildcard && is_builtin(name)).then(|| name.to_owned())
    }

    /// One meaning at module level, or none: imports of the same path may
    /// repeat; any other second binding makes the name ambiguous.
    fn resolve_module_binding(&self, name: &str, bindings: &[Binding<'a>], depth: usize) -> Option<String> {
        let first = bindings.first()?;
        match &first.kind {
            BindingKind::Import(path) => bindings.iter().all(|b| matches!(&b.kind, BindingKind::Import(p) if p == path)).then(|| path.clone()),
            BindingKind::Definition if bindings.len() == 1 => Some(format!("{}.{name}", self.module_name)),
            BindingKind::Value(v) if bindings.len() == 1 => self.resolve_depth(*v, depth + 1),
            _ => None,
        }
    }

    fn resolve_annotation(&self, annotation: Node<'a>, depth: usize) -> Option<String> {
        let inner = if annotation.kind() == "type" { annotation.named_children().next()? } else { annotation };
        match inner.kind() {
            "identifier" | "attribute" => self.resolve_depth(inner, depth + 1),
            // `X[A, B]`, a generic class with its type arguments: an X.
            "generic_type" => self.resolve_annotation(inner.named_children().find(|c| matches!(c.kind(), "identifier" | "attribute"))?, depth + 1),
            "subscript" => self.resolve_annotation(inner.field_child("value")?, depth + 1),
            // `X | None`: the value is an X whenever it is used as one.
            "union_type" => {
                let parts: Vec<Node<'a>> = inner.named_children().filter(|c| c.kind() != "comment").collect();
                let [left, right] = parts.as_slice() else { return None };
                let none = |t: &Node<'a>| t.text() == "None";
                match (none(left), none(right)) {
                    (false, true) => self.resolve_annotation(*left, depth + 1),
                    (true, false) => self.resolve_annotation(*right, depth + 1),
                    _ => None,
                }
            }
            "binary_operator" if inner.field_child("operator").is_some_and(|o| o.text() == "|") => {
                let (left, right) = (inner.field_child("left")?, inner.field_child("right")?);
                match (left.kind(), right.kind()) {
                    (_, "none") => self.resolve_annotation(left, depth + 1),
                    ("none", _) => self.resolve_annotation(right, depth + 1),
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

/// The method Python calls on the left operand of a binary operator.
fn operator_method(operator: &str) -> Option<&'static str> {
    Some(match operator {
        "+" => "__add__",
        "-" => "__sub__",
        "*" => "__mul__",
        "@" => "__matmul__",
        "/" => "__truediv__",
        "//" => "__floordiv__",
        "%" => "__mod__",
        "**" => "__pow__",
        "<<" => "__lshift__",
        ">>" => "__rshift__",
        "&" => "__and__",
        "|" => "__or__",
        "^" => "__xor__",
        _ => return None,
    })
}
