//! Where names are bound inside a Go region.
//!
//! Flow-insensitive and conservative: every declaration, assignment, range
//! variable, increment and nested parameter counts as a binding site, so a
//! variable the profile follows is trusted only when it is bound exactly once.

use std::collections::BTreeMap;

use crate::ts::Node;

pub struct Bindings<'a> {
    params: Vec<String>,
    /// Name -> binding identifiers, in source order.
    sites: BTreeMap<String, Vec<Node<'a>>>,
    /// Binding identifier -> the expression bound to it, when one is.
    values: Vec<(Node<'a>, Node<'a>)>,
    /// `(variable, field)` -> assignments `variable.field = …`.
    field_writes: BTreeMap<(String, String), Vec<Node<'a>>>,
}

impl<'a> Bindings<'a> {
    pub fn of(region: Node<'a>) -> Bindings<'a> {
        let mut b = Bindings { params: Vec::new(), sites: BTreeMap::new(), values: Vec::new(), field_writes: BTreeMap::new() };
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
                    if let Some(params) = node.field_child("parameters") {
                        for p in params.named_children() {
                            for n in p.field_children("name") {
                                b.bind(n, None);
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        b
    }

    fn bind(&mut self, target: Node<'a>, value: Option<Node<'a>>) {
        match target.kind() {
            "identifier" if target.text() != "_" => {
                self.sites.entry(target.text().to_owned()).or_default().push(target);
                if let Some(v) = value {
                    self.values.push((target, v));
                }
            }
            "selector_expression" => {
                if let (Some(op), Some(field)) = (target.field_child("operand"), target.field_child("field"))
                    && op.kind() == "identifier"
                {
                    self.field_writes.entry((op.text().to_owned(), field.text().to_owned())).or_default().push(target);
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

    pub fn field_writes(&self, name: &str, field: &str) -> Vec<Node<'a>> {
        self.field_writes.get(&(name.to_owned(), field.to_owned())).cloned().unwrap_or_default()
    }
}
