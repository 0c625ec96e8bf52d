//! Name resolution for Python: what a name in a region refers to.
//!
//! Identities are dotted paths resolved through the module's imports
//! (`import a.b as c`, `from a import b as c`), module-level definitions,
//! parameter annotations (`repo: git.Repo`) and local aliases (`d = repo.git.diff`).
//! Resolution is flow-insensitive and conservative: a name bound twice, or bound
//! to something we cannot name, resolves to nothing, and the caller then
//! reports it as unresolved instead of guessing.

use std::collections::{BTreeMap, BTreeSet};

use crate::ts::Node;

/// Builtins whose call can reach arbitrary code or names: always dynamic callees.
pub const DYNAMIC_BUILTINS: &[&str] = &[
    "eval",
    "exec",
    "compile",
    "getattr",
    "setattr",
    "delattr",
    "__import__",
    "globals",
    "locals",
    "vars",
    "importlib.import_module",
    "operator.attrgetter",
    "operator.methodcaller",
];

/// Where a local name was bound inside the region, and to what.
#[derive(Debug, Clone)]
pub struct Binding<'a> {
    pub node: Node<'a>,
    /// The bound expression when the binding is a plain `name = expr`.
    pub value: Option<Node<'a>>,
}

/// The names visible inside one region.
pub struct Scope<'a> {
    /// Import aliases: local name -> dotted path; `None` when bound ambiguously.
    imports: BTreeMap<String, Option<String>>,
    /// Names of module-level `def` and `class` statements.
    module_defs: BTreeSet<String>,
    /// The module's own dotted name, used for its definitions.
    module: String,
    /// A `from m import *` makes every unknown bare name unknowable.
    wildcard: bool,
    /// Parameters of the region's function and their annotations.
    params: BTreeMap<String, Option<Node<'a>>>,
    /// Every binding of a name inside the region (assignments, loops, `with … as`, …).
    pub bindings: BTreeMap<String, Vec<Binding<'a>>>,
}

impl<'a> Scope<'a> {
    /// Builds the scope of the function `func` in module `root` of file `path`.
    pub fn new(root: Node<'a>, func: Node<'a>, path: &str) -> Scope<'a> {
        let module = path
            .rsplit('/')
            .next()
            .unwrap_or(path)
            .trim_end_matches(".py")
            .to_owned();
        let mut scope = Scope {
            imports: BTreeMap::new(),
            module_defs: BTreeSet::new(),
            module,
            wildcard: false,
            params: BTreeMap::new(),
            bindings: BTreeMap::new(),
        };
        // Imports anywhere outside other functions and classes count for the module;
        // imports inside the region count too. Both are bindings in Python's model.
        for node in root.descendants() {
            match node.kind() {
                "import_statement" | "import_from_statement" if in_scope_of(node, func) => {
                    scope.add_import(node)
                }
                "function_definition" | "class_definition" if node.parent() == Some(root) => {
                    if let Some(n) = node.field_child("name") {
                        scope.module_defs.insert(n.text().to_owned());
                    }
                }
                "decorated_definition" if node.parent() == Some(root) => {
                    if let Some(n) = node.field_child("definition").and_then(|d| d.field_child("name")) {
                        scope.module_defs.insert(n.text().to_owned());
                    }
                }
                _ => {}
            }
        }
        if let Some(params) = func.field_child("parameters") {
            for p in params.named_children() {
                scope.add_param(p);
            }
        }
        scope.collect_bindings(func);
        scope
    }

    fn add_import(&mut self, node: Node<'a>) {
        let mut bind = |name: &str, path: String| {
            let slot = self.imports.entry(name.to_owned()).or_insert_with(|| Some(path.clone()));
            if slot.as_deref() != Some(path.as_str()) {
                *slot = None;
            }
        };
        if node.kind() == "import_statement" {
            for item in node.field_children("name") {
                match item.kind() {
                    // `import a.b` binds `a` to the package `a`.
                    "dotted_name" => {
                        let root = item.text().split('.').next().unwrap_or_default();
                        bind(root, root.to_owned());
                    }
                    "aliased_import" => {
                        if let (Some(n), Some(a)) = (item.field_child("name"), item.field_child("alias")) {
                            bind(a.text(), compact(n.text()));
                        }
                    }
                    _ => {}
                }
            }
            return;
        }
        let module = node.field_child("module_name").map(|m| compact(m.text())).unwrap_or_default();
        if node.named_children().any(|c| c.kind() == "wildcard_import") {
            self.wildcard = true;
        }
        for item in node.field_children("name") {
            match item.kind() {
                "dotted_name" => bind(item.text(), format!("{module}.{}", compact(item.text()))),
                "aliased_import" => {
                    if let (Some(n), Some(a)) = (item.field_child("name"), item.field_child("alias")) {
                        bind(a.text(), format!("{module}.{}", compact(n.text())));
                    }
                }
                _ => {}
            }
        }
    }

    fn add_param(&mut self, p: Node<'a>) {
        let (name, annotation) = match p.kind() {
            "identifier" => (Some(p), None),
            "typed_parameter" => (p.named_children().find(|c| c.kind() == "identifier"), p.field_child("type")),
            "default_parameter" => (p.field_child("name"), None),
            "typed_default_parameter" => (p.field_child("name"), p.field_child("type")),
            "list_splat_pattern" | "dictionary_splat_pattern" => (p.named_children().next(), None),
            _ => (None, None),
        };
        if let Some(n) = name {
            self.params.insert(n.text().to_owned(), annotation);
        }
    }

    /// Records every place inside `func` that binds a name.
    fn collect_bindings(&mut self, func: Node<'a>) {
        for node in func.descendants() {
            if node == func {
                continue;
            }
            match node.kind() {
                "assignment" => {
                    let Some(left) = node.field_child("left") else { continue };
                    let value = node.field_child("right").filter(|_| left.kind() == "identifier");
                    self.bind_targets(left, value);
                }
                "augmented_assignment" => {
                    if let Some(left) = node.field_child("left") {
                        self.bind_targets(left, None);
                    }
                }
                "for_statement" | "for_in_clause" => {
                    if let Some(left) = node.field_child("left") {
                        self.bind_targets(left, None);
                    }
                }
                "named_expression" => {
                    if let Some(n) = node.field_child("name") {
                        self.bind_targets(n, None);
                    }
                }
                "as_pattern" => {
                    if let Some(alias) = node.field_child("alias") {
                        self.bind_targets(alias, None);
                    }
                }
                "function_definition" | "class_definition" => {
                    if let Some(n) = node.field_child("name") {
                        self.bind_targets(n, None);
                    }
                    // Parameters of nested functions and lambdas shadow the outer names.
                    if let Some(params) = node.field_child("parameters") {
                        for p in params.named_children() {
                            self.bind_param_shadow(p);
                        }
                    }
                }
                "lambda" => {
                    if let Some(params) = node.field_child("parameters") {
                        for p in params.named_children() {
                            self.bind_param_shadow(p);
                        }
                    }
                }
                "global_statement" | "nonlocal_statement" | "delete_statement" => {
                    for n in node.descendants().filter(|n| n.kind() == "identifier") {
                        self.bindings.entry(n.text().to_owned()).or_default().push(Binding { node: n, value: None });
                    }
                }
                // An import inside the region is resolved like a module import; it
                // only counts as a rebinding when it shadows a parameter.
                "import_statement" | "import_from_statement" => {
                    for n in node.field_children("name") {
                        let bound = n.field_child("alias").unwrap_or(n);
                        let root = bound.text().split('.').next().unwrap_or_default().to_owned();
                        if self.params.contains_key(&root) {
                            self.bindings.entry(root).or_default().push(Binding { node: bound, value: None });
                        }
                    }
                }
                _ => {}
            }
        }
    }

    fn bind_param_shadow(&mut self, p: Node<'a>) {
        let n = match p.kind() {
            "identifier" => Some(p),
            "typed_parameter" | "list_splat_pattern" | "dictionary_splat_pattern" => {
                p.named_children().find(|c| c.kind() == "identifier")
            }
            "default_parameter" | "typed_default_parameter" => p.field_child("name"),
            _ => None,
        };
        if let Some(n) = n {
            self.bindings.entry(n.text().to_owned()).or_default().push(Binding { node: n, value: None });
        }
    }

    fn bind_targets(&mut self, target: Node<'a>, value: Option<Node<'a>>) {
        if target.kind() == "identifier" {
            self.bindings.entry(target.text().to_owned()).or_default().push(Binding { node: target, value });
            return;
        }
        // Tuple, list and starred targets bind each identifier they hold; an
        // attribute or subscript target binds no name.
        if matches!(target.kind(), "attribute" | "subscript") {
            return;
        }
        for n in target.named_children() {
            self.bind_targets(n, None);
        }
    }

    /// Whether `name` is a parameter of the region's function.
    pub fn is_param(&self, name: &str) -> bool {
        self.params.contains_key(name)
    }

    /// The first place inside the region that rebinds `name`, if any.
    pub fn rebinding(&self, name: &str) -> Option<Node<'a>> {
        self.bindings.get(name).and_then(|b| b.first()).map(|b| b.node)
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
            "identifier" => self.resolve_name(expr.text(), depth),
            "attribute" => {
                let object = self.resolve_depth(expr.field_child("object")?, depth + 1)?;
                Some(format!("{object}.{}", expr.field_child("attribute")?.text()))
            }
            "parenthesized_expression" => self.resolve_depth(expr.named_children().find(|c| c.kind() != "comment")?, depth + 1),
            "call" => {
                let callee = self.resolve_depth(expr.field_child("function")?, depth + 1)?;
                Some(format!("{callee}()"))
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
        if let Some(bindings) = self.bindings.get(name) {
            // A local name resolves only when bound exactly once, by `name = expr`,
            // and never also a parameter (then it would have two meanings).
            return match bindings.as_slice() {
                [Binding { value: Some(v), .. }] if !self.params.contains_key(name) => self.resolve_depth(*v, depth + 1),
                _ => None,
            };
        }
        if let Some(annotation) = self.params.get(name) {
            return annotation.and_then(|a| self.resolve_annotation(a, depth));
        }
        if let Some(path) = self.imports.get(name) {
            return path.clone();
        }
        if self.module_defs.contains(name) {
            return Some(format!("{}.{name}", self.module));
        }
        // Any other bare name is a builtin, unless a wildcard import may have
        // replaced it.
        (!self.wildcard).then(|| name.to_owned())
    }

    fn resolve_annotation(&self, annotation: Node<'a>, depth: usize) -> Option<String> {
        let inner = if annotation.kind() == "type" { annotation.named_children().next()? } else { annotation };
        match inner.kind() {
            "identifier" | "attribute" => self.resolve_depth(inner, depth + 1),
            _ => None,
        }
    }
}

/// Whether an import statement binds names visible in `func`: it is at module
/// level (not inside another function or class) or inside `func` itself.
fn in_scope_of(import: Node<'_>, func: Node<'_>) -> bool {
    import.ancestors().all(|a| {
        !matches!(a.kind(), "function_definition" | "class_definition" | "lambda") || a == func
    })
}

/// `a . b` -> `a.b`: dotted names may contain white space and comments in the source.
fn compact(text: &str) -> String {
    text.split('.').map(str::trim).collect::<Vec<_>>().join(".")
}
