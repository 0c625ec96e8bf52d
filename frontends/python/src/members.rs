//! What a Python handler passes to a sink by name, for the shared `field`
//! kind ([`fcd_frontends::field`]): a keyword argument `FIELD=VALUE` of the sink, or
//! with `arg` the key `"FIELD"` of a dict literal at that position (inline,
//! or a local bound once to it and used nowhere else). A `**` splat, a
//! non-string key or a repeated key could set the field too: they escalate.

use fcd_frontends::field::{FieldShape, Member, keyed_member};
use fcd_frontends::frontend::Found;
use fcd_frontends::ir::{Escalation, Identity};
use fcd_frontends::ts::Node;
use fcd_model::effect::FactValue;

use super::bindings::BindingKind;
use super::facts::Cx;
use super::syntax::{literal, plain_string};
use super::{identity, route};

impl<'a> Cx<'_, 'a> {
    /// The uses of the name `name` in the region's function: identifiers
    /// spelled so, its binding targets, attribute names (`x.name`) and keyword
    /// names (`f(name=…)`) left out.
    fn reads_of(&self, name: &str) -> Vec<Node<'a>> {
        let bound: Vec<Node<'a>> = self.names.bindings(name).iter().map(|b| b.node).collect();
        let not_a_name = |n: &Node<'a>| {
            n.parent().is_some_and(|p| {
                (p.kind() == "attribute" && p.field_child("attribute") == Some(*n)) || (p.kind() == "keyword_argument" && p.field_child("name") == Some(*n))
            })
        };
        route::function_of(self.site.region.node)
            .descendants()
            .filter(|n| n.kind() == "identifier" && n.text() == name && !bound.contains(n) && !not_a_name(n))
            .collect()
    }

    /// The member of a dict literal setting the string key `field`.
    fn dict_member(&self, dict: Node<'a>, field: &str) -> Result<Option<Member<'a>>, Escalation> {
        let key = |m: Node<'a>| (m.kind() == "pair").then(|| m.field_child("key").and_then(plain_string)).flatten();
        let member = keyed_member(&self.site, dict.named_children(), key, field, "dict", "a splat or a key that is not a plain string")?;
        Ok(member.and_then(|m| m.field_child("value").map(|value| Member { element: m, value })))
    }
}

impl<'a> FieldShape<'a> for Cx<'_, 'a> {
    fn member(&self, sink: Option<&Found<'a>>, index: Option<usize>, field: &str) -> Result<Option<Member<'a>>, Escalation> {
        let Some(sink) = sink else {
            return Err(self.site.mismatch(self.site.region.node, "a Python field fact names its `sink`".into()));
        };
        let args: Vec<Node<'a>> = sink.node.items("arguments");
        if let Some(splat) = args.iter().find(|a| a.kind() == "dictionary_splat") {
            return Err(self.site.mismatch(*splat, format!("`{}` could pass `{field}` to the sink", splat.compact_text())));
        }
        let Some(index) = index else {
            let named: Vec<&Node<'a>> =
                args.iter().filter(|a| a.kind() == "keyword_argument" && a.field_child("name").is_some_and(|n| n.text() == field)).collect();
            return Ok(named.first().and_then(|k| k.field_child("value").map(|value| Member { element: **k, value })));
        };
        let positional: Vec<Node<'a>> = args.iter().copied().filter(|a| a.kind() != "keyword_argument").collect();
        let Some(arg) = positional.get(index).copied() else {
            return Err(self.site.mismatch(sink.node, format!("the sink has no positional argument {index}")));
        };
        match arg.kind() {
            "dictionary" => self.dict_member(arg, field),
            "identifier" => {
                let name = arg.text();
                let value = match self.names.bindings(name) {
                    [one] if !self.names.is_param(name) => match one.kind {
                        BindingKind::Value(v) if v.kind() == "dictionary" => v,
                        _ => return Err(self.site.mismatch(arg, format!("`{name}` is not bound to a dict literal"))),
                    },
                    _ => return Err(self.site.mismatch(arg, format!("`{name}` is not bound once, so the dict reaching the sink is not one literal"))),
                };
                if let Some(other) = self.reads_of(name).into_iter().find(|u| *u != arg) {
                    return Err(self
                        .site
                        .mismatch(other, format!("`{name}` is also used at line {}: the dict may change between its literal and the sink", other.line())));
                }
                self.dict_member(value, field)
            }
            _ => Err(self.site.mismatch(arg, format!("argument {index} of the sink is `{}`, not a dict literal", arg.compact_text()))),
        }
    }

    fn unwrap(&self, member: &Member<'a>, _field: &str, wrap: &str) -> Result<Node<'a>, Escalation> {
        let value = member.value;
        if value.kind() != "call" || identity(self.names, value) != Identity::Path(wrap.to_owned()) {
            return Ok(value);
        }
        match value.items("arguments").as_slice() {
            [inner] if inner.kind() != "keyword_argument" && inner.kind() != "list_splat" && inner.kind() != "dictionary_splat" => Ok(*inner),
            _ => Err(self.site.mismatch(value, format!("`{wrap}` takes one argument here"))),
        }
    }

    fn is_variable(&self, value: Node<'a>, variable: &str) -> Result<bool, Escalation> {
        if value.kind() != "identifier" || value.text() != variable {
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
