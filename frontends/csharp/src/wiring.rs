//! C#'s facts about an option's wiring past the service: `map` (a parameter
//! mapped to two literals), `field` (a member initializer and what it
//! receives), `key` (the returned JSON template's value) and `flow` (a value
//! reaching the sink). Split from [`super::facts`] to keep each file to one
//! stage of the wiring.

use std::collections::BTreeMap;

use fcd_frontends::field::{FieldShape, Member};
use fcd_frontends::frontend::Found;
use fcd_frontends::ir::Escalation;
use fcd_frontends::ts::Node;
use fcd_model::effect::FactValue;

use super::facts::Cx;
use super::settings::Settings;
use super::syntax::{bare, inner, is_argument_label, literal, string_content};
use super::{held, json, plain};

impl<'a> Cx<'_, 'a> {
    /// `var V = P == true ? "A" : "B"` over the parameter the pass fact feeds.
    pub(super) fn map_fact(&self, pass: &Found<'a>) -> Result<Option<Found<'a>>, Escalation> {
        let params: Vec<Node<'a>> =
            self.site.region.node.field_child("parameters").map(|l| l.named_children().filter(|p| p.kind() == "parameter").collect()).unwrap_or_default();
        let by_name = match pass.fact.values.get("name") {
            Some(FactValue::Text(n)) => params.iter().find(|p| p.field_child("name").is_some_and(|x| x.text() == n)).copied(),
            _ => match pass.fact.values.get("index") {
                Some(FactValue::Int(i)) => params.get(*i as usize).copied(),
                _ => None,
            },
        };
        let Some(param) = by_name.and_then(|p| p.field_child("name")) else {
            return Err(self.site.mismatch(self.site.region.node, "the service has no parameter where the value is passed".into()));
        };
        let p = param.text();
        let maps: Vec<(Node<'a>, Node<'a>, bool)> = self
            .site
            .region
            .node
            .descendants()
            .filter(|n| n.kind() == "conditional_expression")
            .filter_map(|c| {
                let condition = c.field_child("condition")?;
                tests_param(condition, p).map(|positive| (c, condition, positive))
            })
            .collect();
        let (conditional, condition, positive) = match maps.as_slice() {
            [] => return Ok(None),
            [one] => *one,
            [_, (second, _, _), ..] => return Err(self.site.mismatch(*second, format!("`{p}` is mapped {} times", maps.len()))),
        };
        // The parameter must have no other use: any would be another flow.
        if let Some(other) = self
            .site
            .region
            .node
            .descendants()
            .filter(|n| n.kind() == "identifier" && n.text() == p && *n != param && !condition.contains(*n))
            .find(|n| !is_argument_label(*n))
        {
            return Err(self.site.mismatch(other, format!("`{p}` is also used at line {} (another flow)", other.line())));
        }
        let (Some(yes), Some(no)) =
            (conditional.field_child("consequence").and_then(string_content), conditional.field_child("alternative").and_then(string_content))
        else {
            return Err(self.site.mismatch(conditional, format!("`{p}` is mapped to something other than two string literals")));
        };
        let (when_true, when_false) = if positive { (yes, no) } else { (no, yes) };
        let Some(holder) = conditional.parent().filter(|h| h.kind() == "variable_declarator").and_then(|h| h.field_child("name")) else {
            return Err(self.site.mismatch(conditional, "the mapped value is not held by a local variable".into()));
        };
        let variable = holder.text().to_owned();
        if let Some((_, again, _)) = self.assignments().iter().find(|(v, n, _)| *v == variable && *n != holder) {
            return Err(self.site.mismatch(*again, format!("`{variable}` is assigned again at line {}", again.line())));
        }
        let mut values = BTreeMap::new();
        values.insert("parameter".into(), FactValue::Text(p.to_owned()));
        values.insert("variable".into(), FactValue::Text(variable));
        values.insert("when_true".into(), FactValue::Text(when_true));
        values.insert("when_false".into(), FactValue::Text(when_false));
        Ok(Some(self.site.fact(conditional, values)))
    }

    /// The type of the object whose initializer holds `init`: `new T { … }`, or
    /// `T x = new() { … }`; a type fcd cannot see escalates.
    pub(super) fn created_type(&self, init: Node<'a>) -> Result<String, Escalation> {
        let creation = init.parent().and_then(|i| i.parent());
        let explicit = creation.filter(|c| c.kind() == "object_creation_expression").and_then(|c| c.field_child("type"));
        let declared = creation
            .and_then(|c| c.parent())
            .filter(|d| d.kind() == "variable_declarator")
            .and_then(|d| d.parent())
            .and_then(|d| d.field_child("type"))
            .filter(|t| t.kind() != "implicit_type");
        match explicit.or(declared) {
            Some(t) => Ok(plain::simple_name(t)),
            None => Err(self.site.mismatch(init, "the object holding the field has a type fcd cannot see".into())),
        }
    }

    /// The declared type of property `name` of the closure type `owner`, if the closure declares it.
    pub(super) fn property_type(&self, owner: &str, name: &str) -> Option<String> {
        plain::declarations(self.site.region.trees, owner).into_iter().find_map(|(_, decl)| {
            decl.field_child("body")?
                .named_children()
                .find(|m| m.kind() == "property_declaration" && m.field_child("name").is_some_and(|n| n.text() == name))
                .and_then(|m| m.field_child("type"))
                .map(plain::simple_name)
        })
    }

    /// The template the region returns, read as strict JSON: the one value
    /// under `key` that is not an object (objects under the key declare it,
    /// e.g. an ARM parameter). The region must be `return LITERAL;` or
    /// `=> LITERAL`: a built, interpolated or chosen template escalates.
    pub(super) fn key_fact(&self, key: &str) -> Result<Option<Found<'a>>, Escalation> {
        let literal = self.returned_literal()?;
        let Some(text) = string_content(literal) else {
            return Err(self.site.mismatch(literal, "the returned template is not a plain, verbatim or raw string literal (or has an unknown escape)".into()));
        };
        let template = json::parse(&text).map_err(|e| self.site.mismatch(literal, format!("the returned template is not strict JSON: {e}")))?;
        let mut under = Vec::new();
        template.values_of(key, &mut under);
        let scalars: Vec<&json::Json> = under.into_iter().filter(|v| !matches!(v, json::Json::Object(_))).collect();
        match scalars.as_slice() {
            [] => Ok(None),
            [json::Json::Text(value)] => {
                let mut values = BTreeMap::new();
                values.insert("key".into(), FactValue::Text(key.to_owned()));
                values.insert("value".into(), FactValue::Text(value.clone()));
                Ok(Some(self.site.fact(literal, values)))
            }
            [other] => Err(self.site.mismatch(literal, format!("`\"{key}\"` holds {other:?}, not a string"))),
            many => Err(self.site.mismatch(literal, format!("`\"{key}\"` has {} values in the template", many.len()))),
        }
    }

    /// The string literal a region's body is made of: `=> LIT` or `{ return LIT; }`.
    pub(super) fn returned_literal(&self) -> Result<Node<'a>, Escalation> {
        let node = self.site.region.node;
        let body = node.field_child("body").or_else(|| node.children().find(|c| c.kind() == "arrow_expression_clause"));
        let expr = match body {
            Some(arrow) if arrow.kind() == "arrow_expression_clause" => inner(arrow),
            Some(block) => {
                let statements: Vec<Node<'a>> = block.named_children().filter(|c| c.kind() != "comment").collect();
                match statements.as_slice() {
                    [r] if r.kind() == "return_statement" => r.named_children().find(|c| c.kind() != "comment"),
                    _ => None,
                }
            }
            None => None,
        };
        match expr.map(bare) {
            Some(e) if matches!(e.kind(), "string_literal" | "verbatim_string_literal" | "raw_string_literal") => Ok(e),
            Some(e) => Err(self.site.mismatch(e, format!("the region returns a {} at line {}, not one string literal", e.kind(), e.line()))),
            None => Err(self.site.mismatch(node, "the region is not one `return` of a string literal".into())),
        }
    }

    /// The value behind `from` (the object a field fact initializes, the
    /// result of a call fact) reaches the call fact `sink`, through `into`.
    pub(super) fn flow_fact(&self, from: &Found<'a>, sink: &Found<'a>, into: Option<&str>) -> Result<Option<Found<'a>>, Escalation> {
        let start = if from.node.kind() == "assignment_expression" { from.node.parent().and_then(|i| i.parent()).unwrap_or(from.node) } else { from.node };
        let node = self.site.region.node;
        if !node.contains(start) || !node.contains(sink.node) {
            return Err(self.site.mismatch(node, format!("`{}` and `{}` are not both in region `{}`", from.fact.name, sink.fact.name, self.site.region.name)));
        }
        let path = held::flow(node, start, sink.node, into)
            .map_err(|(at, why)| self.site.mismatch(at, format!("`{}` does not reach `{}`: {why}", from.fact.name, sink.fact.name)))?;
        if let Some(into) = into
            && !path.passed_into
        {
            return Err(self.site.mismatch(start, format!("`{}` reaches `{}` but not through `{into}`", from.fact.name, sink.fact.name)));
        }
        let mut values = BTreeMap::new();
        values.insert("through".into(), FactValue::List(path.locals.into_iter().map(FactValue::Text).collect()));
        if let Some(into) = into {
            values.insert("into".into(), FactValue::Text(into.to_owned()));
        }
        Ok(Some(self.site.fact(start, values)))
    }
}

/// Whether `condition` tests the parameter `p`: `Some(true)` for `p`, `p == true`,
/// `p is true`; `Some(false)` for `p == false`, `!p`; `None` otherwise.
fn tests_param(condition: Node<'_>, p: &str) -> Option<bool> {
    let c = bare(condition);
    match c.kind() {
        "identifier" if c.text() == p => Some(true),
        "prefix_unary_expression" if c.text().starts_with('!') => inner(c).filter(|i| i.text() == p).map(|_| false),
        "binary_expression" | "is_pattern_expression" => {
            let parts: Vec<Node<'_>> = c.named_children().collect();
            let (Some(left), Some(right)) = (parts.first(), parts.last()) else { return None };
            if left.text() != p {
                return None;
            }
            let op: String = c.children().filter(|x| !x.is_named()).map(|x| x.text()).collect();
            match (op.as_str(), right.text()) {
                ("==" | "is", "true") => Some(true),
                ("==" | "is", "false") | ("!=", "true") => Some(false),
                _ => None,
            }
        }
        _ => None,
    }
}

/// A member initializer (`new T { FIELD = VALUE }`) of the region: the one
/// that sets the field, on a plain data type, never assigned elsewhere; `wrap`
/// names the nested initializer member holding the value.
impl<'a> FieldShape<'a> for Cx<'_, 'a> {
    fn member(&self, _sink: Option<&Found<'a>>, _arg: Option<usize>, field: &str) -> Result<Option<Member<'a>>, Escalation> {
        let inits: Vec<Node<'a>> = self
            .site
            .region
            .node
            .descendants()
            .filter(|n| n.kind() == "assignment_expression" && n.parent().is_some_and(|p| p.kind() == "initializer_expression"))
            .filter(|n| n.field_child("left").is_some_and(|l| l.text() == field))
            .collect();
        if let Some((_, later, _)) = self.assignments().iter().find(|(t, n, _)| {
            (t == field || t.ends_with(&format!(".{field}")) || t.contains(&format!(".{field}.")))
                && n.parent().and_then(|a| a.parent()).is_none_or(|i| i.kind() != "initializer_expression")
        }) {
            return Err(self.site.mismatch(*later, format!("`{field}` is assigned at line {} outside its initializer", later.line())));
        }
        let init = match inits.as_slice() {
            [] => return Ok(None),
            [one] => *one,
            [_, second, ..] => return Err(self.site.mismatch(*second, format!("`{field}` is initialized {} times", inits.len()))),
        };
        let Some(value) = init.field_child("right").map(bare) else { return Ok(None) };
        let owner = self.created_type(init)?;
        plain::check(self.site.region.trees, &owner, &format!("`{field}` is set on it"), &Settings::of(self.site.region.env).inert_attributes)?;
        Ok(Some(Member { element: init, value }))
    }

    fn unwrap(&self, member: &Member<'a>, field: &str, wrap: &str) -> Result<Node<'a>, Escalation> {
        let (init, value) = (member.element, member.value);
        let owner = self.created_type(init)?;
        let member_type = self.property_type(&owner, field);
        let explicit = value.field_child("type").filter(|_| value.kind() == "object_creation_expression").map(plain::simple_name);
        for ty in [member_type, explicit].into_iter().flatten() {
            plain::check(self.site.region.trees, &ty, &format!("`{field}.{wrap}` is set on it"), &Settings::of(self.site.region.env).inert_attributes)?;
        }
        let nested = value
            .named_children()
            .find(|c| c.kind() == "initializer_expression")
            .and_then(|i| i.named_children().filter(|a| a.kind() == "assignment_expression").find(|a| a.field_child("left").is_some_and(|l| l.text() == wrap)))
            .and_then(|a| a.field_child("right"));
        match nested {
            Some(v) => Ok(bare(v)),
            None => Err(self.site.mismatch(init, format!("`{field}` is not initialized through `{wrap}`"))),
        }
    }

    fn is_variable(&self, value: Node<'a>, variable: &str) -> Result<bool, Escalation> {
        Ok(value.compact_text() == variable)
    }

    fn literal(&self, value: Node<'a>) -> Option<FactValue> {
        literal(value)
    }

    /// Nothing upstream was found: the field states nothing the rules could
    /// use, and the missing wiring is reported by the facts that imply it.
    fn absent_without_upstream(&self) -> bool {
        true
    }
}
