//! Where names are bound inside a Go region.
//!
//! Flow-insensitive and conservative: every declaration, assignment, range
//! variable, increment and nested parameter counts as a binding site, so a
//! variable the profile follows is trusted only when it is bound exactly once.
//! Every syntactic kind of binding counts: `:=`, `=`, `var`, `const`, local
//! types, range and type-switch variables, `select` receives, parameters and
//! named results of nested literals, and `true := false` (a literal on the left).

use std::collections::BTreeMap;

use fcd_frontends::ts::Node;

pub struct Bindings<'a> {
    params: Vec<String>,
    /// Name -> binding identifiers, in source order.
    sites: BTreeMap<String, Vec<Node<'a>>>,
    /// Binding identifier -> the expression bound to it, when one is.
    values: Vec<(Node<'a>, Node<'a>)>,
}

impl<'a> Bindings<'a> {
    pub fn of(region: Node<'a>) -> Bindings<'a> {
        let mut b = Bindings { params: Vec::new(), sites: BTreeMap::new(), values: Vec::new() };
        if let Some(params) = region.field_child("parameters") {
            for p in params.named_children() {
                b.params.extend(p.field_children("name").map(|n| n.text().to_owned()));
            }
        }
        for node in region.descendants() {
            match node.kind() {
                "short_var_declaration" | "assignment_statement" => {
                    let left: Vec<Node<'a>> = node.field_child("left").map(|l| l.named_children().collect()).unwrap_or_default();
                    let right: Vec<Node<'a>> = node.field_child("right").map(|r| r.named_children().collect()).unwrap_or_default();
                    for (i, target) in left.iter().enumerate() {
                        let value = if right.len() == left.len() { right.get(i) } else { right.first() };
                        b.bind(*target, value.copied());
                    }
                }
                "var_spec" | "const_spec" => {
                    let values: Vec<Node<'a>> = node.field_child("value").map(|v| v.named_children().collect()).unwrap_or_default();
                    for (i, name) in node.field_children("name").enumerate() {
                        let value = if values.len() > 1 { values.get(i) } else { values.first() };
                        b.bind(name, value.copied());
                    }
                }
                "range_clause" => {
                    if let Some(left) = node.field_child("left") {
                        for n in left.named_children() {
                            b.bind(n, None);
                        }
                    }
                }
                "inc_statement" | "dec_statement" => {
                    if let Some(n) = node.named_children().next() {
                        b.bind(n, None);
                    }
                }
                "func_literal" if node != region => {
                    for list in ["parameters", "result"].iter().filter_map(|f| node.field_child(f)) {
                        for p in list.named_children() {
                            for n in p.field_children("name") {
                                b.bind(n, None);
                            }
                        }
                    }
                }
                // Named results and receivers of the region itself, type
                // parameters: bindings too, never values the profile follows.
                "function_declaration" | "method_declaration" | "func_literal" => {
                    for list in ["result", "receiver", "type_parameters"].iter().filter_map(|f| node.field_child(f)) {
                        for p in list.named_children() {
                            for n in p.field_children("name") {
                                b.bind(n, None);
                            }
                        }
                    }
                }
                "type_switch_statement" => {
                    if let Some(alias) = node.field_child("alias") {
                        for n in alias.named_children() {
                            b.bind(n, None);
                        }
                    }
                }
                "receive_statement" if node.children().any(|c| c.kind() == ":=") => {
                    if let Some(left) = node.field_child("left") {
                        for n in left.named_children() {
                            b.bind(n, None);
                        }
                    }
                }
                "type_spec" | "type_alias" => {
                    if let Some(n) = node.field_child("name") {
                        b.bind(n, None);
                    }
                }
                _ => {}
            }
        }
        b
    }

    fn bind(&mut self, target: Node<'a>, value: Option<Node<'a>>) {
        match target.kind() {
            // `true := false` parses with a literal on the left: still a binding.
            "identifier" | "type_identifier" | "true" | "false" | "nil" | "iota" if target.text() != "_" => {
                self.sites.entry(target.text().to_owned()).or_default().push(target);
                if let Some(v) = value {
                    self.values.push((target, v));
                }
            }
            _ => {}
        }
    }

    pub fn is_param(&self, name: &str) -> bool {
        self.params.iter().any(|p| p == name)
    }

    /// Every binding identifier of `name` inside the region.
    pub fn sites(&self, name: &str) -> Vec<Node<'a>> {
        self.sites.get(name).cloned().unwrap_or_default()
    }

    pub fn is_binding_site(&self, n: Node<'a>) -> bool {
        self.sites.get(n.text()).is_some_and(|s| s.contains(&n))
    }

    /// The expression bound at a binding identifier.
    pub fn value(&self, site: Node<'a>) -> Option<Node<'a>> {
        self.values.iter().find(|(s, _)| *s == site).map(|(_, v)| *v)
    }

    /// The variable a call's first result is bound to, when the call is the
    /// whole right side of a declaration or assignment.
    pub fn bound_by(&self, call: Node<'a>) -> Option<Node<'a>> {
        self.values.iter().find(|(_, v)| *v == call).map(|(s, _)| *s)
    }

    /// Whether a binding site takes a call's result (`x, err := f()`) or is
    /// a `var x T` without a value.
    pub fn bound_to_call(&self, site: Node<'a>) -> bool {
        match self.value(site) {
            Some(v) => matches!(v.kind(), "call_expression" | "type_conversion_expression"),
            None => site.parent().is_some_and(|p| p.kind() == "var_spec" && p.field_child("value").is_none()),
        }
    }

    /// Every name bound in the region, with its binding sites.
    pub fn all(&self) -> impl Iterator<Item = (&String, &Vec<Node<'a>>)> {
        self.sites.iter()
    }
}
