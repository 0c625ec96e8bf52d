//! How a JavaScript handler reads a tool argument through a helper, for the
//! shared `default` kind ([`fcd_frontends::default`]): `const v = helper(args,
//! "name", 3)` or `const v = args.get("name")`, the argument map a parameter
//! of the region used only to read arguments by name; `args.name` and
//! `args["name"]` read it without any helper.

use fcd_frontends::default::{DefaultShape, Read};
use fcd_frontends::facts::CallShape;
use fcd_frontends::ir::{Escalation, Identity};
use fcd_frontends::ts::Node;
use fcd_model::effect::FactValue;

use super::facts::Cx;
use super::syntax::{arguments, bare, literal, string_content};

/// The map a helper call reads: the receiver of a method or else its first argument.
fn read_map(call: Node<'_>) -> Option<Node<'_>> {
    let function = bare(call.field_child("function")?);
    if function.kind() == "member_expression" { function.field_child("object").map(bare) } else { arguments(call).first().map(|a| bare(*a)) }
}

/// Whether `call` names some argument by a plain string literal.
fn names_by_string(call: Node<'_>) -> bool {
    arguments(call).iter().any(|a| string_content(bare(*a)).is_some())
}

impl<'a> DefaultShape<'a> for Cx<'_, 'a> {
    /// `P.name` or `P["name"]` of a parameter `P` of the region.
    fn direct_read(&self, argument: &str) -> Option<Node<'a>> {
        self.site.region.node.descendants().find(|n| {
            let object = n.field_child("object").map(bare).filter(|o| o.kind() == "identifier" && self.names.is_param(o.text()));
            let key = match n.kind() {
                "member_expression" => n.field_child("property").map(|p| p.text().to_owned()),
                "subscript_expression" => n.field_child("index").and_then(string_content),
                _ => None,
            };
            object.is_some() && key.as_deref() == Some(argument)
        })
    }

    fn reads(&self, argument: &str) -> Vec<Read<'a>> {
        self.site
            .region
            .node
            .descendants()
            .filter(|n| n.kind() == "call_expression" && arguments(*n).iter().any(|a| string_content(bare(*a)).as_deref() == Some(argument)))
            .filter_map(|call| {
                let declarator = std::iter::once(call)
                    .chain(call.ancestors())
                    .take_while(|a| matches!(a.kind(), "call_expression" | "parenthesized_expression" | "await_expression" | "variable_declarator"))
                    .find(|a| a.kind() == "variable_declarator")?;
                let name = declarator.field_child("name").filter(|n| n.kind() == "identifier")?;
                (declarator.field_child("value").map(bare) == Some(call)).then(|| Read { call, variable: name.text().to_owned(), target: name })
            })
            .collect()
    }

    fn helper_identity(&self, call: Node<'a>) -> Identity {
        self.callee(call).unwrap_or_else(|| Identity::Unresolved(call.compact_text()))
    }

    /// The variable is declared once; the map is a parameter of the region
    /// never bound again, used only as the map of reviewed helpers' calls.
    fn check_read(&self, read: &Read<'a>, helpers: &[&str]) -> Result<(), Escalation> {
        if self.names.count(&read.variable) != 1 || self.declared_once(&read.variable).is_none() {
            return Err(self
                .site
                .mismatch(read.target, format!("`{}` is bound more than once, so the value read is not the one the fact follows", read.variable)));
        }
        let Some(map) = read_map(read.call).filter(|m| m.kind() == "identifier") else {
            return Err(self.site.mismatch(read.call, "the helper reads no named argument map".into()));
        };
        let name = map.text();
        if !self.names.is_param(name) || self.names.count(name) != 0 {
            return Err(self.site.mismatch(map, format!("the helper reads `{name}`, not a parameter of the region that nothing binds again")));
        }
        let parameters = self.site.region.node.field_child("parameters").or_else(|| self.site.region.node.field_child("parameter"));
        for u in self.site.region.node.descendants().filter(|n| n.kind() == "identifier" && n.text() == name) {
            if parameters.is_some_and(|p| p.contains(u)) {
                continue;
            }
            let call = u
                .ancestors()
                .take_while(|a| matches!(a.kind(), "member_expression" | "arguments" | "parenthesized_expression" | "call_expression"))
                .find(|a| a.kind() == "call_expression")
                .filter(|c| {
                    read_map(*c) == Some(u) && names_by_string(*c) && matches!(self.callee(*c), Some(Identity::Path(p)) if helpers.contains(&p.as_str()))
                });
            if call.is_none() {
                let at = u.parent().unwrap_or(u);
                return Err(self
                    .site
                    .mismatch(u, format!("the argument map `{name}` is used at line {} (`{}`) other than by a reviewed helper", u.line(), at.compact_text())));
            }
        }
        Ok(())
    }

    fn argument_default(&self, call: Node<'a>, index: usize, helper: &str) -> Result<(FactValue, String), Escalation> {
        match arguments(call).get(index).copied().map(|a| (a, literal(a))) {
            Some((_, Some(v))) => Ok((v, "literal".into())),
            Some((arg, None)) => Err(self.site.mismatch(arg, format!("the default `{}` is not a literal", arg.compact_text()))),
            None => Err(self.site.mismatch(call, format!("`{helper}` has no argument {index} holding the default"))),
        }
    }
}
