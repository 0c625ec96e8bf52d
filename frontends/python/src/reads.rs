//! How a Python handler reads a tool argument through a helper, for the
//! shared `default` kind ([`fcd_frontends::default`]): `v = arguments.get("name", 3)`
//! or `v = helper(arguments, "name")`, the argument map a parameter of the
//! function used only to read arguments by name; `arguments["name"]` reads
//! it without any helper.

use fcd_frontends::default::{DefaultShape, Read};
use fcd_frontends::facts::CallShape;
use fcd_frontends::ir::{Escalation, Identity};
use fcd_frontends::ts::Node;
use fcd_model::effect::FactValue;

use super::bindings::BindingKind;
use super::facts::Cx;
use super::surroundings;
use super::syntax::{literal, plain_string};

/// The arguments of a call's argument list, comments left out.
fn call_arguments(call: Node<'_>) -> Vec<Node<'_>> {
    call.items("arguments")
}

impl<'a> Cx<'_, 'a> {
    /// The map a helper call reads: the receiver of a method (`arguments.get`)
    /// or else the first argument (`helper(arguments, "name")`).
    fn read_map(call: Node<'a>) -> Option<Node<'a>> {
        let function = call.field_child("function")?;
        if function.kind() == "attribute" { function.field_child("object") } else { call_arguments(call).first().copied() }
    }

    /// Whether `call` is a reviewed helper's, naming an argument by a plain string.
    fn reviewed_read(&self, call: Node<'a>, helpers: &[&str]) -> bool {
        let reviewed = matches!(self.callee(call), Some(Identity::Path(p)) if helpers.contains(&p.as_str()));
        reviewed && call_arguments(call).iter().any(|a| plain_string(*a).is_some())
    }
}

impl<'a> DefaultShape<'a> for Cx<'_, 'a> {
    fn direct_read(&self, argument: &str) -> Option<Node<'a>> {
        self.site.region.node.descendants().find(|n| n.kind() == "subscript" && n.field_child("subscript").and_then(plain_string).as_deref() == Some(argument))
    }

    fn reads(&self, argument: &str) -> Vec<Read<'a>> {
        self.site
            .region
            .node
            .descendants()
            .filter(|n| n.kind() == "call" && call_arguments(*n).iter().any(|a| plain_string(*a).as_deref() == Some(argument)))
            .filter_map(|call| {
                let assignment = call.parent().filter(|a| a.kind() == "assignment" && a.field_child("right") == Some(call))?;
                let left = assignment.field_child("left").filter(|l| l.kind() == "identifier")?;
                Some(Read { call, variable: left.text().to_owned(), target: left })
            })
            .collect()
    }

    fn helper_identity(&self, call: Node<'a>) -> Identity {
        self.callee(call).unwrap_or_else(|| Identity::Unresolved(call.compact_text()))
    }

    /// The variable is bound only by the read; the map is a parameter of the
    /// function that nothing rebinds or writes into, used only as the map of
    /// reviewed helpers' calls (a `.pop` or `.update` would change what a
    /// later read sees) or read as `map["name"]`.
    fn check_read(&self, read: &Read<'a>, helpers: &[&str]) -> Result<(), Escalation> {
        let bindings = self.names.bindings(&read.variable);
        if self.names.is_param(&read.variable) || !matches!(bindings, [one] if one.node == read.target && matches!(one.kind, BindingKind::Value(_))) {
            return Err(self
                .site
                .mismatch(read.target, format!("`{}` is bound more than once, so the value read is not the one the fact follows", read.variable)));
        }
        let Some(map) = Self::read_map(read.call).filter(|m| m.kind() == "identifier") else {
            return Err(self.site.mismatch(read.call, "the helper reads no named argument map".into()));
        };
        let name = map.text();
        let function = super::route::function_of(self.site.region.node);
        if !self.names.is_unchanged_param(name) || surroundings::writes_into(function, name) {
            return Err(self.site.mismatch(map, format!("the helper reads `{name}`, not a parameter of the function that nothing rebinds or writes into")));
        }
        let parameters = function.field_child("parameters");
        for u in function.descendants().filter(|n| n.kind() == "identifier" && n.text() == name) {
            if parameters.is_some_and(|p| p.contains(u)) {
                continue;
            }
            let parent = u.parent();
            let subscripted = parent.is_some_and(|p| p.kind() == "subscript" && p.field_child("value") == Some(u));
            let call = parent
                .filter(|p| p.kind() == "attribute" && p.field_child("object") == Some(u))
                .and_then(|a| a.parent())
                .or_else(|| parent.filter(|p| p.kind() == "argument_list").and_then(|l| l.parent()))
                .filter(|c| c.kind() == "call" && Self::read_map(*c) == Some(u) && self.reviewed_read(*c, helpers));
            if !subscripted && call.is_none() {
                return Err(self.site.mismatch(
                    u,
                    format!(
                        "the argument map `{name}` is used at line {} (`{}`) other than to read an argument by name",
                        u.line(),
                        parent.unwrap_or(u).compact_text()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// A literal, or a module-level name bound once, to a literal, and not
    /// bound in the function.
    fn argument_default(&self, call: Node<'a>, index: usize, helper: &str) -> Result<(FactValue, String), Escalation> {
        let Some(arg) = call_arguments(call).get(index).copied() else {
            return Err(self.site.mismatch(call, format!("`{helper}` has no argument {index} holding the default")));
        };
        if let Some(v) = literal(arg) {
            return Ok((v, "literal".into()));
        }
        if arg.kind() == "identifier" && !self.names.is_param(arg.text()) && self.names.bindings(arg.text()).is_empty() {
            let module = self.names.module.bindings.get(arg.text()).map(Vec::as_slice).unwrap_or_default();
            if let [one] = module
                && let BindingKind::Value(value) = one.kind
                && let Some(v) = literal(value)
            {
                return Ok((v, format!("constant {} at {}:{}", arg.text(), self.site.region.file, one.node.line())));
            }
        }
        Err(self.site.mismatch(arg, format!("the default `{}` is neither a literal nor a module constant bound once to one", arg.compact_text())))
    }
}
