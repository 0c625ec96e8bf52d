//! Where names are bound inside a JavaScript/TypeScript region.
//!
//! Flow-insensitive and conservative, as for the other languages: every
//! declaration (destructuring included), assignment, update, loop variable,
//! catch parameter, nested function or class declaration and nested parameter
//! counts, so a followed variable is trusted only when it is bound exactly once.

use std::collections::BTreeMap;

use fcd_frontends::ts::Node;

use super::FUNCTIONS;
use super::syntax::string_content;

pub struct Bindings {
    params: Vec<String>,
    /// Each parameter in order: its name when it is a plain identifier
    /// (TypeScript's `name: T` too), `None` for a pattern or a default.
    positional: Vec<Option<String>>,
    counts: BTreeMap<String, usize>,
    /// Every binding site of each name, in source order.
    sites: BTreeMap<String, Vec<usize>>,
}

/// What each binding of `name` inside `region` assigns: `None` for a
/// parameter, else the value node (a declarator's or an assignment's value,
/// or the binding construct itself for a loop variable, a catch parameter, an
/// update or a declaration without a value).
pub fn origins<'a>(region: Node<'a>, name: &str) -> Vec<Option<Node<'a>>> {
    let mut out = Vec::new();
    for node in region.descendants() {
        let (target, value) = match node.kind() {
            "variable_declarator" if node != region => (node.field_child("name"), Some(node.field_child("value").unwrap_or(node))),
            "assignment_expression" | "augmented_assignment_expression" => {
                (node.field_child("left"), Some(node.field_child("right").filter(|_| node.kind() == "assignment_expression").unwrap_or(node)))
            }
            "for_in_statement" => (node.field_child("left"), Some(node)),
            "catch_clause" => (node.field_child("parameter"), Some(node)),
            "update_expression" => (node.field_child("argument"), Some(node)),
            "formal_parameters" => {
                let mut names = Vec::new();
                for p in node.named_children() {
                    pattern_names(p, &mut names);
                }
                out.extend(names.iter().filter(|n| n.text() == name).map(|_| None));
                continue;
            }
            "arrow_function" => (node.field_child("parameter"), None),
            "function_declaration" | "generator_function_declaration" | "class_declaration" | "function_expression" if node != region => {
                (node.field_child("name"), Some(node))
            }
            _ => continue,
        };
        let mut names = Vec::new();
        if let Some(t) = target {
            pattern_names(t, &mut names);
        }
        out.extend(names.iter().filter(|n| n.text() == name).map(|_| value));
    }
    out
}

/// Identifiers a pattern binds (`a`, `{ a, b: c }`, `[a, ...b]`, `a = 1`).
pub fn pattern_names<'a>(pattern: Node<'a>, out: &mut Vec<Node<'a>>) {
    match pattern.kind() {
        "identifier" | "shorthand_property_identifier_pattern" => out.push(pattern),
        "pair_pattern" => {
            if let Some(v) = pattern.field_child("value") {
                pattern_names(v, out);
            }
        }
        "assignment_pattern" | "object_assignment_pattern" => {
            if let Some(l) = pattern.field_child("left") {
                pattern_names(l, out);
            }
        }
        "required_parameter" | "optional_parameter" => {
            if let Some(p) = pattern.field_child("pattern") {
                pattern_names(p, out);
            }
        }
        "object_pattern" | "array_pattern" | "rest_pattern" => {
            for c in pattern.named_children() {
                pattern_names(c, out);
            }
        }
        _ => {}
    }
}

impl Bindings {
    pub fn of(region: Node<'_>) -> Bindings {
        let mut b = Bindings { params: Vec::new(), positional: Vec::new(), counts: BTreeMap::new(), sites: BTreeMap::new() };
        // `const f = (…) => {…}`: the parameters belong to the bound function.
        let function = if region.kind() == "variable_declarator" { region.field_child("value").unwrap_or(region) } else { region };
        if let Some(params) = function.field_child("parameters") {
            let mut names = Vec::new();
            for p in params.named_children() {
                pattern_names(p, &mut names);
                if p.kind() != "comment" {
                    let plain = match p.kind() {
                        "identifier" => Some(p),
                        "required_parameter" if p.field_child("value").is_none() => p.field_child("pattern").filter(|i| i.kind() == "identifier"),
                        _ => None,
                    };
                    b.positional.push(plain.map(|i| i.text().to_owned()));
                }
            }
            b.params = names.iter().map(|n| n.text().to_owned()).collect();
        }
        for node in region.descendants() {
            let mut names = Vec::new();
            match node.kind() {
                "variable_declarator" if node != region => {
                    if let Some(n) = node.field_child("name") {
                        pattern_names(n, &mut names);
                    }
                }
                "assignment_expression" | "augmented_assignment_expression" => {
                    if let Some(l) = node.field_child("left") {
                        pattern_names(l, &mut names);
                    }
                }
                "update_expression" => {
                    if let Some(a) = node.field_child("argument") {
                        pattern_names(a, &mut names);
                    }
                }
                "for_in_statement" => {
                    if let Some(l) = node.field_child("left") {
                        pattern_names(l, &mut names);
                    }
                }
                // `catch (sql)` binds, and so does a nested declaration (hoisted).
                "catch_clause" => {
                    if let Some(p) = node.field_child("parameter") {
                        pattern_names(p, &mut names);
                    }
                }
                "function_declaration" | "generator_function_declaration" | "class_declaration" | "function_expression" if node != region => {
                    if let Some(n) = node.field_child("name") {
                        names.push(n);
                    }
                }
                "formal_parameters" if Some(node) != function.field_child("parameters") => {
                    for p in node.named_children() {
                        pattern_names(p, &mut names);
                    }
                }
                // `x => …`: a single parameter without parentheses.
                "arrow_function" => {
                    if let Some(p) = node.field_child("parameter") {
                        pattern_names(p, &mut names);
                    }
                }
                _ => {}
            }
            for n in names {
                *b.counts.entry(n.text().to_owned()).or_default() += 1;
                b.sites.entry(n.text().to_owned()).or_default().push(n.byte_range().start);
            }
        }
        b
    }

    pub fn is_param(&self, name: &str) -> bool {
        self.params.iter().any(|p| p == name)
    }

    /// The name of the parameter at `index` when it is a plain identifier.
    pub fn param_at(&self, index: usize) -> Option<&str> {
        self.positional.get(index).and_then(|p| p.as_deref())
    }

    /// Where the one binding of `name` starts (a byte offset), if it is bound exactly once.
    pub fn only_site(&self, name: &str) -> Option<usize> {
        match self.sites.get(name).map(Vec::as_slice) {
            Some([one]) => Some(*one),
            _ => None,
        }
    }

    /// Where each binding of `name` inside the region starts (byte offsets, source order).
    pub fn site_offsets(&self, name: &str) -> &[usize] {
        self.sites.get(name).map_or(&[], Vec::as_slice)
    }

    /// How many places inside the region bind `name` (the region's own parameters excluded).
    pub fn count(&self, name: &str) -> usize {
        self.counts.get(name).copied().unwrap_or(0)
    }
}

/// Globals whose members every module shares: writing them changes code elsewhere.
pub const BUILTINS: &[&str] = &[
    "Object",
    "Array",
    "String",
    "Number",
    "Boolean",
    "Symbol",
    "Function",
    "Promise",
    "RegExp",
    "Date",
    "Math",
    "JSON",
    "Reflect",
    "Map",
    "Set",
    "WeakMap",
    "WeakSet",
    "Error",
    "globalThis",
    "global",
    "window",
    "self",
];

/// What a name is at module level in one file.
pub(super) enum Head {
    /// Imported: the specifier and the imported name (`default`, `*` or a named export).
    Import(String, String),
    /// Declared by the module itself (a variable, function or class).
    Declared,
    /// Neither: a global.
    Global,
}

/// What `name` is at the top of the module whose root is `root`.
pub(super) fn module_head(root: Node<'_>, name: &str) -> Head {
    for n in root.named_children() {
        let decl = if n.kind() == "export_statement" { n.field_child("declaration").unwrap_or(n) } else { n };
        if decl.kind() == "import_statement" {
            let Some(spec) = decl.field_child("source").and_then(string_content) else { continue };
            for i in decl.descendants() {
                match i.kind() {
                    "import_specifier" if i.field_child("alias").or_else(|| i.field_child("name")).is_some_and(|l| l.text() == name) => {
                        let orig = i.field_child("name").map(|o| o.text().to_owned()).unwrap_or_default();
                        return Head::Import(spec, orig);
                    }
                    "import_clause" | "namespace_import" if i.named_children().any(|c| c.kind() == "identifier" && c.text() == name) => {
                        return Head::Import(spec, if i.kind() == "import_clause" { "default" } else { "*" }.to_owned());
                    }
                    _ => {}
                }
            }
        }
        if module_bindings(decl).iter().any(|b| b.text() == name) || decl.descendants().any(|d| module_bindings(d).iter().any(|b| b.text() == name)) {
            return Head::Declared;
        }
    }
    Head::Global
}

/// The identifiers a module-level declaration binds (imports of the same name
/// excluded); a block-level declaration outside functions counts, as it hoists.
pub(super) fn module_bindings(n: Node<'_>) -> Vec<Node<'_>> {
    let module_level = || n.ancestors().all(|a| !FUNCTIONS.contains(&a.kind()) && a.kind() != "class_body");
    let mut out = Vec::new();
    match n.kind() {
        "function_declaration" | "generator_function_declaration" | "class_declaration" if module_level() => {
            out.extend(n.field_child("name"));
        }
        "variable_declarator" if module_level() => {
            if let Some(p) = n.field_child("name") {
                pattern_names(p, &mut out);
            }
        }
        _ => {}
    }
    out
}
