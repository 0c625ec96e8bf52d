//! Where names are bound inside a JavaScript/TypeScript region.
//!
//! Flow-insensitive and conservative, as for the other languages: every
//! declaration (destructuring included), assignment, update, loop variable and
//! nested parameter counts, so a followed variable is trusted only when it is
//! bound exactly once.

use std::collections::BTreeMap;

use crate::ts::Node;

pub struct Bindings {
    params: Vec<String>,
    counts: BTreeMap<String, usize>,
}

/// Identifiers a pattern binds (`a`, `{ a, b: c }`, `[a, ...b]`, `a = 1`).
fn pattern_names<'a>(pattern: Node<'a>, out: &mut Vec<Node<'a>>) {
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
        let mut b = Bindings { params: Vec::new(), counts: BTreeMap::new() };
        // `const f = (…) => {…}`: the parameters belong to the bound function.
        let function = if region.kind() == "variable_declarator" { region.field_child("value").unwrap_or(region) } else { region };
        if let Some(params) = function.field_child("parameters") {
            let mut names = Vec::new();
            for p in params.named_children() {
                pattern_names(p, &mut names);
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
            }
        }
        b
    }

    pub fn is_param(&self, name: &str) -> bool {
        self.params.iter().any(|p| p == name)
    }

    /// How many places inside the region bind `name` (the region's own parameters excluded).
    pub fn count(&self, name: &str) -> usize {
        self.counts.get(name).copied().unwrap_or(0)
    }
}
