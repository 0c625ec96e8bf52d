//! What Python code binds, level by level: imports, definitions,
//! assignments, parameters and every other binding form, at module level,
//! in one function, or in a class body. Name resolution ([`super::scope`])
//! and the checks around regions read these levels; kept apart so that each
//! file holds one concern.

use std::collections::BTreeMap;

use fcd_frontends::ts::Node;

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
    /// `with MANAGER as name` (`asynchronous` for `async with`): what the
    /// manager's `__enter__` (`__aenter__`) returns.
    Entered { manager: Node<'a>, asynchronous: bool },
    /// `for name in ITERABLE` (a loop or a comprehension): an element of it.
    Element(Node<'a>),
    /// A parameter of a function or lambda nested in the level's function,
    /// with the annotation trusted as for the function's own parameters: the
    /// name means it only inside that function.
    Parameter { function: Node<'a>, annotation: Option<Node<'a>> },
    /// Any other binding (a loop target, `with … as`, a `global` write, `del`, a match capture, …).
    Other,
}

/// The names bound at one level: a module or one function.
#[derive(Debug, Default)]
pub struct Level<'a> {
    pub bindings: BTreeMap<String, Vec<Binding<'a>>>,
    /// A function's parameters and their trusted annotations.
    pub params: BTreeMap<String, Option<Node<'a>>>,
}

impl<'a> Level<'a> {
    fn bind(&mut self, name: &str, node: Node<'a>, kind: BindingKind<'a>) {
        self.bindings.entry(name.to_owned()).or_default().push(Binding { node, kind });
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

pub(super) fn is_function(n: Node<'_>) -> bool {
    matches!(n.kind(), "function_definition" | "lambda")
}

/// Whether `node` executes at the level of `owner` (the module or one
/// function): not inside a nested function, lambda or class body.
fn at_level(node: Node<'_>, owner: Node<'_>) -> bool {
    node.ancestors().take_while(|a| *a != owner).all(|a| !matches!(a.kind(), "function_definition" | "class_definition" | "lambda"))
}

/// Every binding made at module level, including writes from functions that
/// declare the name `global`.
pub(super) fn module_level<'a>(root: Node<'a>) -> Level<'a> {
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
pub(super) fn function_level<'a>(func: Node<'a>) -> Level<'a> {
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
                if let Some((name, annotation)) = param(p) {
                    level.bind(name.text(), name, BindingKind::Parameter { function: node, annotation });
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
        "for_statement" | "for_in_clause" => match (node.field_child("left"), node.field_child("right")) {
            (Some(left), Some(iterable)) if left.kind() == "identifier" => level.bind(left.text(), left, BindingKind::Element(iterable)),
            (Some(left), _) => bind_targets(level, left),
            (None, _) => {}
        },
        "augmented_assignment" => {
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
            let Some(alias) = node.field_child("alias") else { return };
            let name = alias.named_children().filter(|c| c.kind() != "comment").collect::<Vec<_>>();
            let manager = node.named_children().next().filter(|m| Some(*m) != Some(alias));
            let with = node.parent().filter(|p| p.kind() == "with_item").and_then(|item| item.ancestors().find(|a| a.kind() == "with_statement"));
            match (name.as_slice(), manager, with) {
                ([one], Some(manager), Some(with)) if one.kind() == "identifier" => {
                    level.bind(one.text(), *one, BindingKind::Entered { manager, asynchronous: with.text().starts_with("async") });
                }
                _ => bind_targets(level, alias),
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
