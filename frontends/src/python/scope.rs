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

use std::collections::BTreeMap;

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
    "breakpoint",
    "importlib.import_module",
    "operator.attrgetter",
    "operator.methodcaller",
];

/// The names of Python 3's `builtins` module (3.10 to 3.13).
const BUILTINS: &[&str] = &[
    "ArithmeticError",
    "AssertionError",
    "AttributeError",
    "BaseException",
    "BaseExceptionGroup",
    "BlockingIOError",
    "BrokenPipeError",
    "BufferError",
    "BytesWarning",
    "ChildProcessError",
    "ConnectionAbortedError",
    "ConnectionError",
    "ConnectionRefusedError",
    "ConnectionResetError",
    "DeprecationWarning",
    "EOFError",
    "Ellipsis",
    "EncodingWarning",
    "EnvironmentError",
    "Exception",
    "ExceptionGroup",
    "FileExistsError",
    "FileNotFoundError",
    "FloatingPointError",
    "FutureWarning",
    "GeneratorExit",
    "IOError",
    "ImportError",
    "ImportWarning",
    "IndentationError",
    "IndexError",
    "InterruptedError",
    "IsADirectoryError",
    "KeyError",
    "KeyboardInterrupt",
    "LookupError",
    "MemoryError",
    "ModuleNotFoundError",
    "NameError",
    "NotADirectoryError",
    "NotImplemented",
    "NotImplementedError",
    "OSError",
    "OverflowError",
    "PendingDeprecationWarning",
    "PermissionError",
    "ProcessLookupError",
    "RecursionError",
    "ReferenceError",
    "ResourceWarning",
    "RuntimeError",
    "RuntimeWarning",
    "StopAsyncIteration",
    "StopIteration",
    "SyntaxError",
    "SyntaxWarning",
    "SystemError",
    "SystemExit",
    "TabError",
    "TimeoutError",
    "TypeError",
    "UnboundLocalError",
    "UnicodeDecodeError",
    "UnicodeEncodeError",
    "UnicodeError",
    "UnicodeTranslateError",
    "UnicodeWarning",
    "UserWarning",
    "ValueError",
    "Warning",
    "ZeroDivisionError",
    "abs",
    "aiter",
    "all",
    "anext",
    "any",
    "ascii",
    "bin",
    "bool",
    "breakpoint",
    "bytearray",
    "bytes",
    "callable",
    "chr",
    "classmethod",
    "compile",
    "complex",
    "delattr",
    "dict",
    "dir",
    "divmod",
    "enumerate",
    "eval",
    "exec",
    "filter",
    "float",
    "format",
    "frozenset",
    "getattr",
    "globals",
    "hasattr",
    "hash",
    "hex",
    "id",
    "input",
    "int",
    "isinstance",
    "issubclass",
    "iter",
    "len",
    "list",
    "locals",
    "map",
    "max",
    "memoryview",
    "min",
    "next",
    "object",
    "oct",
    "open",
    "ord",
    "pow",
    "print",
    "property",
    "range",
    "repr",
    "reversed",
    "round",
    "set",
    "setattr",
    "slice",
    "sorted",
    "staticmethod",
    "str",
    "sum",
    "super",
    "tuple",
    "type",
    "vars",
    "zip",
    "__import__",
    "__build_class__",
];

/// Whether `name` is one of Python's builtins.
pub fn is_builtin(name: &str) -> bool {
    BUILTINS.contains(&name)
}

/// Where a name was bound, and to what.
#[derive(Debug, Clone)]
pub struct Binding<'a> {
    pub node: Node<'a>,
    pub kind: BindingKind<'a>,
}

#[derive(Debug, Clone)]
pub enum BindingKind<'a> {
    /// `import …` / `from … import …`: the dotted path bound.
    Import(String),
    /// `def` or `class` at this level.
    Definition,
    /// `name = expr`.
    Value(Node<'a>),
    /// Any other binding (a loop target, `with … as`, a `global` write, `del`, a match capture, …).
    Other,
}

/// The names bound at one level: a module or one function.
#[derive(Debug, Default)]
pub struct Level<'a> {
    pub bindings: BTreeMap<String, Vec<Binding<'a>>>,
    /// A function's parameters and their trusted annotations.
    params: BTreeMap<String, Option<Node<'a>>>,
}

impl<'a> Level<'a> {
    fn bind(&mut self, name: &str, node: Node<'a>, kind: BindingKind<'a>) {
        self.bindings.entry(name.to_owned()).or_default().push(Binding { node, kind });
    }
}

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

    /// Whether a bare `name` in the region means a function or class the
    /// module defines (no local, enclosing or parameter binding hides it).
    pub fn is_module_definition(&self, name: &str) -> bool {
        let shadowed = std::iter::once(&self.local).chain(self.enclosing.iter()).any(|l| l.bindings.contains_key(name) || l.params.contains_key(name));
        !shadowed && self.module.bindings.get(name).is_some_and(|bs| bs.iter().any(|b| matches!(b.kind, BindingKind::Definition)))
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
        // Innermost level first: the region's function, its enclosing
        // functions, the module, then the builtins.
        let levels = std::iter::once(&self.local).chain(self.enclosing.iter().rev());
        for level in levels {
            if let Some(bindings) = level.bindings.get(name) {
                // A local name resolves only when bound exactly once, by
                // `name = expr`, and never also a parameter (two meanings).
                return match bindings.as_slice() {
                    [Binding { kind: BindingKind::Value(v), .. }] if !level.params.contains_key(name) => self.resolve_depth(*v, depth + 1),
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
            // `X | None`: the value is an X whenever it is used as one.
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

/// The bindings made at the level `owner` executes (a module, a class body or
/// a function), all names or only `name`.
pub fn bindings_at<'a>(owner: Node<'a>, name: Option<&str>) -> BTreeMap<String, Vec<Binding<'a>>> {
    let mut all = match owner.kind() {
        "function_definition" | "lambda" => function_level(owner).bindings,
        "module" => module_level(owner).bindings,
        _ => {
            let mut level = Level::default();
            for node in owner.descendants().filter(|n| *n != owner && at_level(*n, owner)) {
                bind_statement(&mut level, node);
            }
            level.bindings
        }
    };
    if let Some(name) = name {
        all.retain(|k, _| k == name);
    }
    all
}

fn is_function(n: Node<'_>) -> bool {
    matches!(n.kind(), "function_definition" | "lambda")
}

/// Whether `node` executes at the level of `owner` (the module or one
/// function): not inside a nested function, lambda or class body.
fn at_level(node: Node<'_>, owner: Node<'_>) -> bool {
    node.ancestors().take_while(|a| *a != owner).all(|a| !matches!(a.kind(), "function_definition" | "class_definition" | "lambda"))
}

/// Every binding made at module level, including writes from functions that
/// declare the name `global`.
fn module_level<'a>(root: Node<'a>) -> Level<'a> {
    let mut level = Level::default();
    for node in root.descendants() {
        if at_level(node, root) {
            bind_statement(&mut level, node);
        }
    }
    // `global NAME` in any function makes that function's bindings of NAME module bindings.
    for g in root.descendants().filter(|n| n.kind() == "global_statement") {
        let Some(func) = g.ancestors().find(|a| a.kind() == "function_definition") else { continue };
        let names: Vec<&str> = g.named_children().filter(|n| n.kind() == "identifier").map(|n| n.text()).collect();
        let mut inner = Level::default();
        for node in func.descendants() {
            if at_level(node, func) {
                bind_statement(&mut inner, node);
            }
        }
        for name in names {
            for b in inner.bindings.remove(name).unwrap_or_default() {
                level.bind(name, b.node, BindingKind::Other);
            }
            level.bind(name, g, BindingKind::Other);
        }
    }
    level
}

/// A function's parameters (with the annotations we trust) and every binding
/// made anywhere inside it, nested functions and lambdas included (their
/// parameters shadow the outer names, which is conservative).
fn function_level<'a>(func: Node<'a>) -> Level<'a> {
    let mut level = Level::default();
    if let Some(params) = func.field_child("parameters") {
        for p in params.named_children() {
            if let Some((name, annotation)) = param(p) {
                level.params.insert(name.text().to_owned(), annotation);
            }
        }
    }
    for node in func.descendants() {
        if node == func {
            continue;
        }
        bind_statement(&mut level, node);
        if is_function(node)
            && let Some(params) = node.field_child("parameters")
        {
            for p in params.named_children() {
                if let Some((name, _)) = param(p) {
                    level.bind(name.text(), name, BindingKind::Other);
                }
            }
        }
    }
    level
}

/// A parameter's name and the annotation we trust for it. An annotation is
/// only a claim: it is trusted when the parameter has no default or a literal
/// one, never when the default is an expression that could be another object.
fn param<'a>(p: Node<'a>) -> Option<(Node<'a>, Option<Node<'a>>)> {
    match p.kind() {
        "identifier" => Some((p, None)),
        "typed_parameter" => Some((p.named_children().find(|c| c.kind() == "identifier")?, p.field_child("type"))),
        "default_parameter" => Some((p.field_child("name")?, None)),
        "typed_default_parameter" => {
            let literal = p.field_child("value").is_some_and(|v| matches!(v.kind(), "integer" | "float" | "string" | "true" | "false" | "none" | "identifier"));
            Some((p.field_child("name")?, p.field_child("type").filter(|_| literal)))
        }
        "list_splat_pattern" | "dictionary_splat_pattern" => Some((p.named_children().next()?, None)),
        _ => None,
    }
}

/// Records what one syntax node binds at the level it belongs to.
fn bind_statement<'a>(level: &mut Level<'a>, node: Node<'a>) {
    match node.kind() {
        "import_statement" | "import_from_statement" => bind_import(level, node),
        "function_definition" | "class_definition" => {
            if let Some(n) = node.field_child("name") {
                level.bind(n.text(), n, BindingKind::Definition);
            }
        }
        "assignment" => {
            let Some(left) = node.field_child("left") else { return };
            match (left.kind(), node.field_child("right")) {
                ("identifier", Some(value)) => level.bind(left.text(), left, BindingKind::Value(value)),
                _ => bind_targets(level, left),
            }
        }
        "augmented_assignment" | "for_statement" | "for_in_clause" => {
            if let Some(left) = node.field_child("left") {
                bind_targets(level, left);
            }
        }
        "named_expression" => {
            if let Some(n) = node.field_child("name") {
                bind_targets(level, n);
            }
        }
        // `with … as x`, `except E as x`, `case P as x`.
        "as_pattern" => {
            if let Some(alias) = node.field_child("alias") {
                bind_targets(level, alias);
            }
        }
        // Capture patterns of `match`: a single bare name binds it (a dotted
        // name is a value pattern; a class pattern's first name is its class).
        "case_pattern" => {
            for d in node.descendants().filter(|d| d.kind() == "dotted_name") {
                let parts: Vec<Node<'a>> = d.named_children().filter(|c| c.kind() == "identifier").collect();
                let is_class = d.parent().is_some_and(|p| p.kind() == "class_pattern" && p.named_children().next() == Some(d));
                if let [only] = parts.as_slice()
                    && !is_class
                    && only.text() != "_"
                {
                    level.bind(only.text(), *only, BindingKind::Other);
                }
            }
        }
        "delete_statement" | "global_statement" | "nonlocal_statement" => {
            for n in node.named_children().filter(|n| n.kind() == "identifier") {
                level.bind(n.text(), n, BindingKind::Other);
            }
            // `del (a, b)` and `del [a]` bind each name they hold.
            for n in node.named_children().filter(|n| matches!(n.kind(), "expression_list" | "tuple" | "list")) {
                bind_targets(level, n);
            }
        }
        _ => {}
    }
}

fn bind_import<'a>(level: &mut Level<'a>, node: Node<'a>) {
    if node.kind() == "import_statement" {
        for item in node.field_children("name") {
            match item.kind() {
                // `import a.b` binds `a` to the package `a`.
                "dotted_name" => {
                    let root = item.text().split('.').next().unwrap_or_default().trim();
                    level.bind(root, item, BindingKind::Import(root.to_owned()));
                }
                "aliased_import" => {
                    if let (Some(n), Some(a)) = (item.field_child("name"), item.field_child("alias")) {
                        level.bind(a.text(), a, BindingKind::Import(compact(n.text())));
                    }
                }
                _ => {}
            }
        }
        return;
    }
    let module = node.field_child("module_name").map(|m| compact(m.text())).unwrap_or_default();
    for item in node.field_children("name") {
        match item.kind() {
            "dotted_name" => level.bind(item.text(), item, BindingKind::Import(format!("{module}.{}", compact(item.text())))),
            "aliased_import" => {
                if let (Some(n), Some(a)) = (item.field_child("name"), item.field_child("alias")) {
                    level.bind(a.text(), a, BindingKind::Import(format!("{module}.{}", compact(n.text()))));
                }
            }
            _ => {}
        }
    }
}

/// Tuple, list, starred and pattern targets bind each identifier they hold;
/// an attribute or subscript target binds no name.
fn bind_targets<'a>(level: &mut Level<'a>, target: Node<'a>) {
    match target.kind() {
        "identifier" => level.bind(target.text(), target, BindingKind::Other),
        "attribute" | "subscript" => {}
        _ => {
            for n in target.named_children() {
                bind_targets(level, n);
            }
        }
    }
}

/// `a . b` -> `a.b`: dotted names may contain white space and comments in the source.
pub fn compact(text: &str) -> String {
    text.split('.').map(str::trim).collect::<Vec<_>>().join(".")
}
