//! What an object literal a JavaScript handler passes to a sink sets, for
//! the shared `field` kind ([`fcd_frontends::field`]): the sink's argument `arg` is
//! the literal itself or a local declared once to it and used nowhere else;
//! the field is one plain key (`private: v`, `"private": v`, `{ private }`).
//! A spread, a computed key or a method could set the field too: they escalate.

use fcd_frontends::field::{FieldShape, Member, keyed_member};
use fcd_frontends::frontend::Found;
use fcd_frontends::ir::{Escalation, Identity};
use fcd_frontends::ts::Node;
use fcd_model::effect::FactValue;

use super::facts::Cx;
use super::syntax::{arguments, bare, identity, literal, string_content};

/// The key a member of an object literal sets, when it is a plain one.
fn plain_key(member: Node<'_>) -> Option<String> {
    match member.kind() {
        "shorthand_property_identifier" => Some(member.text().to_owned()),
        "pair" => {
            let key = member.field_child("key")?;
            match key.kind() {
                "property_identifier" => Some(key.text().to_owned()),
                "string" => string_content(key),
                _ => None,
            }
        }
        _ => None,
    }
}

impl<'a> Cx<'_, 'a> {
    /// The identifiers spelled `name` in the region that read it (not its declaration).
    fn reads_of(&self, name: &str) -> Vec<Node<'a>> {
        self.site
            .region
            .node
            .descendants()
            .filter(|n| matches!(n.kind(), "identifier" | "shorthand_property_identifier") && n.text() == name)
            .filter(|n| !n.parent().is_some_and(|p| p.kind() == "variable_declarator" && p.field_child("name") == Some(*n)))
            .collect()
    }
}

impl<'a> FieldShape<'a> for Cx<'_, 'a> {
    fn member(&self, sink: Option<&Found<'a>>, index: Option<usize>, field: &str) -> Result<Option<Member<'a>>, Escalation> {
        let (Some(sink), Some(index)) = (sink, index) else {
            return Err(self.site.mismatch(self.site.region.node, "a JavaScript field fact names its `sink` and `arg`".into()));
        };
        let Some(arg) = arguments(sink.node).get(index).map(|a| bare(*a)) else {
            return Err(self.site.mismatch(sink.node, format!("the sink has no argument {index}")));
        };
        let object = match arg.kind() {
            "object" => arg,
            "identifier" => {
                let name = arg.text();
                let Some((_, value)) = self.declared_once(name).filter(|_| self.names.count(name) == 1) else {
                    return Err(self.site.mismatch(arg, format!("`{name}` is not declared once, so the object reaching the sink is not one literal")));
                };
                if let Some(other) = self.reads_of(name).into_iter().find(|u| *u != arg) {
                    return Err(self
                        .site
                        .mismatch(other, format!("`{name}` is also used at line {}: the object may change between its literal and the sink", other.line())));
                }
                if value.kind() != "object" {
                    return Err(self.site.mismatch(value, format!("`{name}` is not bound to an object literal")));
                }
                value
            }
            _ => return Err(self.site.mismatch(arg, format!("argument {index} of the sink is `{}`, not an object literal", arg.compact_text()))),
        };
        let member = keyed_member(&self.site, object.named_children(), plain_key, field, "object", "a spread, a computed key or a method")?;
        Ok(member.map(|m| Member { element: m, value: m.field_child("value").map(bare).unwrap_or(m) }))
    }

    fn unwrap(&self, member: &Member<'a>, _field: &str, wrap: &str) -> Result<Node<'a>, Escalation> {
        let value = member.value;
        if value.kind() != "call_expression" || self.names.resolve(identity(value)) != Identity::Path(wrap.to_owned()) {
            return Ok(value);
        }
        match arguments(value).as_slice() {
            [inner] => Ok(bare(*inner)),
            _ => Err(self.site.mismatch(value, format!("`{wrap}` takes one argument here"))),
        }
    }

    fn is_variable(&self, value: Node<'a>, variable: &str) -> Result<bool, Escalation> {
        if !matches!(value.kind(), "identifier" | "shorthand_property_identifier") || value.text() != variable {
            return Ok(false);
        }
        match self.reads_of(variable).into_iter().find(|u| *u != value) {
            Some(other) => Err(self.site.mismatch(other, format!("`{variable}` is also used at line {} (a conditional or another flow)", other.line()))),
            None => Ok(true),
        }
    }

    fn literal(&self, value: Node<'a>) -> Option<FactValue> {
        literal(value)
    }
}
