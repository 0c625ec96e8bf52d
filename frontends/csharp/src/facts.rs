//! C#'s facts about an option's binding: `call` through the shared skeleton
//! ([`fcd_frontends::facts`]), `default` (the helper that binds the option, and the
//! definition's own default) and `pass` (the bound value handed to the
//! service, held unchanged). The wiring after the service is in [`super::wiring`].

use std::collections::BTreeMap;

use fcd_frontends::default::{DefaultShape, Read};
use fcd_frontends::facts::{CallShape, FactSite};
use fcd_frontends::frontend::Found;
use fcd_frontends::ir::{Escalation, Identity};
use fcd_frontends::spec::{ArgPattern, ArgShape, FactKind};
use fcd_frontends::ts::Node;
use fcd_model::effect::FactValue;

use super::scope::identity;
use super::settings::Settings;
use super::syntax::{arguments, bare, dotted, inner, literal, string_content};
use super::{TYPES, held, plain};

/// An invocation's arguments are (name, expression) pairs; only alignment decides.
impl<'a> CallShape<'a> for Cx<'_, 'a> {
    type Arg = (Option<String>, Node<'a>);

    fn callee(&self, node: Node<'a>) -> Option<Identity> {
        (node.kind() == "invocation_expression").then(|| identity(node))
    }

    fn arguments(&self, call: Node<'a>) -> Result<Vec<Self::Arg>, Escalation> {
        Ok(arguments(call))
    }

    /// Named arguments (`name: value`) by name, for a fact that lists
    /// `keywords`: C# binds them to parameters by name, whatever their position.
    fn arguments_and_keywords(&self, call: Node<'a>) -> Result<fcd_frontends::facts::SplitArguments<Self::Arg>, Escalation> {
        let (named, positional): (Vec<Self::Arg>, Vec<Self::Arg>) = arguments(call).into_iter().partition(|(name, _)| name.is_some());
        Ok((positional, named.into_iter().map(|(name, node)| (name.clone().unwrap_or_default(), (name, node))).collect()))
    }

    fn arg_text(&self, arg: &Self::Arg) -> String {
        arg.1.compact_text()
    }

    fn arg_matches(&self, arg: &(Option<String>, Node<'a>), pattern: &ArgPattern) -> bool {
        let expr = bare(arg.1);
        match &pattern.shape {
            // Tool-argument flow is read by the Python frontend only so far.
            ArgShape::Arg(_) => false,
            ArgShape::Any => true,
            ArgShape::Ref(path) => dotted(expr).as_deref() == Some(path.as_str()),
            ArgShape::Param(name) | ArgShape::Var(name) => expr.kind() == "identifier" && expr.text() == name,
            ArgShape::Str(text) => string_content(expr).as_deref() == Some(text.as_str()),
            ArgShape::Format(_) => false,
            // `str(…)` is read by the Python frontend only.
            ArgShape::Text(_) | ArgShape::State(_) => false,
            // Splat arguments are read by the Python and JavaScript frontends only so far.
            ArgShape::Splat(_) => false,
            // A call's result is followed by the JavaScript frontend only so far.
            ArgShape::Result(_) => false,
        }
    }
}

/// `TARGET = HELPER(…, ARGUMENT, …)`, ARGUMENT the option's definition (or
/// its name as a string): the helper that binds the option. The definition's
/// own default (`definition`) overrides the helper's rule.
impl<'a> DefaultShape<'a> for Cx<'_, 'a> {
    fn direct_read(&self, _argument: &str) -> Option<Node<'a>> {
        None
    }

    fn reads(&self, argument: &str) -> Vec<Read<'a>> {
        let names_argument = |a: &(Option<String>, Node<'a>)| {
            let e = bare(a.1);
            dotted(e).as_deref() == Some(argument) || string_content(e).as_deref() == Some(argument)
        };
        self.assignments()
            .into_iter()
            .filter_map(|(variable, target, value)| {
                let call = value.map(bare).filter(|v| v.kind() == "invocation_expression" && arguments(*v).iter().any(names_argument))?;
                Some(Read { call, variable, target })
            })
            .collect()
    }

    fn helper_identity(&self, call: Node<'a>) -> Identity {
        identity(call)
    }

    fn check_read(&self, read: &Read<'a>, _helpers: &[&str]) -> Result<(), Escalation> {
        if let Some((_, again, _)) = self.assignments().iter().find(|(v, n, _)| *v == read.variable && *n != read.target) {
            return Err(self.site.mismatch(*again, format!("`{}` is assigned again at line {}", read.variable, again.line())));
        }
        self.holder_returned(&read.variable, read.target)
    }

    fn argument_default(&self, call: Node<'a>, index: usize, helper: &str) -> Result<(FactValue, String), Escalation> {
        match arguments(call).get(index).and_then(|a| literal(bare(a.1))) {
            Some(v) => Ok((v, "literal".to_owned())),
            None => Err(self.site.mismatch(call, format!("argument {index} of `{helper}` is not a literal default"))),
        }
    }

    fn declared_default(&self, call: Node<'a>) -> Result<Option<(FactValue, String)>, Escalation> {
        match &self.site.spec.kind {
            FactKind::Default { definition: Some(definition), inert, .. } => self.definition_default(definition, inert.as_deref(), call),
            _ => Ok(None),
        }
    }
}

impl<'a> Cx<'_, 'a> {
    /// Assignments and declarations in the region: (target text, target node, value).
    pub(super) fn assignments(&self) -> Vec<(String, Node<'a>, Option<Node<'a>>)> {
        let mut out = Vec::new();
        for n in self.site.region.node.descendants() {
            match n.kind() {
                "assignment_expression" => {
                    if let Some(left) = n.field_child("left") {
                        out.push((left.compact_text(), left, n.field_child("right")));
                    }
                }
                "variable_declarator" => {
                    if let Some(name) = n.field_child("name") {
                        let value = n.named_children().rfind(|c| Some(*c) != n.field_child("name"));
                        out.push((name.text().to_owned(), name, value));
                    }
                }
                "postfix_unary_expression" | "prefix_unary_expression" if n.text().contains("++") || n.text().contains("--") => {
                    if let Some(target) = inner(n) {
                        out.push((target.compact_text(), target, None));
                    }
                }
                _ => {}
            }
        }
        out
    }

    /// The explicit default of an option definition (`DefaultValueFactory = _ => LITERAL`),
    /// which overrides the helper's zero value.
    pub(super) fn definition_default(&self, definition: &str, inert: Option<&[String]>, at: Node<'a>) -> Result<Option<(FactValue, String)>, Escalation> {
        let Some((class, field)) = definition.rsplit_once('.') else {
            return Err(self.site.mismatch(at, format!("definition `{definition}` is not Class.Field")));
        };
        let mut found = Vec::new();
        for (path, syntax) in self.site.region.trees {
            for decl in syntax.root().descendants().filter(|n| n.kind() == "variable_declarator") {
                let named = decl.field_child("name").is_some_and(|n| n.text() == field);
                let in_class = decl.ancestors().find(|a| TYPES.contains(&a.kind())).and_then(|t| t.field_child("name")).is_some_and(|n| n.text() == class);
                let is_field = decl.ancestors().any(|a| matches!(a.kind(), "field_declaration" | "property_declaration"));
                if named && in_class && is_field {
                    found.push((*path, decl));
                }
            }
        }
        let [(path, decl)] = found.as_slice() else {
            return Err(self.site.mismatch(at, format!("option definition `{definition}` is defined {} times in the selected files", found.len())));
        };
        self.definition_shape(definition, path, *decl, inert, at)?;
        let factories: Vec<Node<'_>> = decl
            .descendants()
            .filter(|n| n.kind() == "assignment_expression")
            .filter(|n| n.field_child("left").is_some_and(|l| matches!(l.text(), "DefaultValueFactory" | "DefaultValue")))
            .collect();
        match factories.as_slice() {
            [] => Ok(None),
            [f] => {
                let right = f.field_child("right").map(bare);
                let body = right.and_then(|r| if r.kind() == "lambda_expression" { r.field_child("body") } else { Some(r) });
                match body.and_then(literal) {
                    Some(v) => Ok(Some((v, format!("default of {definition} at {path}:{}", f.line())))),
                    None => Err(self.site.mismatch(at, format!("the default of `{definition}` ({path}:{}) is not a literal", f.line()))),
                }
            }
            _ => Err(self.site.mismatch(at, format!("`{definition}` sets its default {} times", factories.len()))),
        }
    }

    /// When the bound variable is a member of a local (`options.X`), that local
    /// is what the region returns, it holds a plain model type (the region's
    /// return type), and nothing else in the region writes `options.X`.
    pub(super) fn holder_returned(&self, variable: &str, target: Node<'a>) -> Result<(), Escalation> {
        let Some((root, member)) = variable.split_once('.') else { return Ok(()) };
        let node = self.site.region.node;
        let declared: Vec<Node<'a>> = held::occurrences(node, root).into_iter().filter(|o| held::is_declared_name(*o)).collect();
        if declared.len() != 1 {
            return Err(self
                .site
                .mismatch(target, format!("`{root}`, which holds `{variable}`, is not one local of the region ({} declarations)", declared.len())));
        }
        let returns_root = |o: Node<'a>| o.parent().is_some_and(|p| p.kind() == "return_statement");
        let allowed = |o: Node<'a>| target.contains(o) || declared.contains(&o) || returns_root(o);
        if let Some((at, why)) = held::first_write(node, root, Some(member), &allowed) {
            return Err(self.site.mismatch(at, why));
        }
        if let Some(r) =
            node.descendants().find(|r| r.kind() == "return_statement" && r.named_children().find(|c| c.kind() != "comment").is_none_or(|e| e.text() != root))
        {
            return Err(self.site.mismatch(r, format!("the region returns something other than `{root}` at line {}", r.line())));
        }
        if let Some(ty) = node.field_child("returns") {
            plain::check(
                self.site.region.trees,
                &plain::simple_name(ty),
                &format!("holds `{variable}`"),
                &Settings::of(self.site.region.env).inert_attributes,
            )?;
        }
        Ok(())
    }

    /// The option definition itself: created as its declared type, with only
    /// inert members (and the default) in its initializer.
    pub(super) fn definition_shape(&self, definition: &str, path: &str, decl: Node<'_>, inert: Option<&[String]>, at: Node<'a>) -> Result<(), Escalation> {
        let Some(value) = decl.named_children().rfind(|c| Some(*c) != decl.field_child("name")) else {
            return Err(self.site.mismatch(at, format!("`{definition}` ({path}:{}) has no initializer", decl.line())));
        };
        let declared = decl.parent().and_then(|d| d.field_child("type")).map(|t| t.compact_text()).unwrap_or_default();
        let created_as_declared = match value.kind() {
            "implicit_object_creation_expression" => true,
            "object_creation_expression" => value.field_child("type").is_some_and(|t| t.compact_text() == declared),
            _ => false,
        };
        if !created_as_declared {
            return Err(self.site.mismatch(at, format!("`{definition}` ({path}:{}) is not created as its declared type `{declared}`", value.line())));
        }
        let Some(inert) = inert else { return Ok(()) };
        let members = value.named_children().filter(|c| c.kind() == "initializer_expression").flat_map(|i| i.named_children().collect::<Vec<_>>());
        for m in members.filter(|m| m.kind() != "comment") {
            let name = m.field_child("left").filter(|_| m.kind() == "assignment_expression").map(|l| l.text()).unwrap_or("");
            if !(inert.iter().any(|i| i == name) || matches!(name, "DefaultValueFactory" | "DefaultValue")) {
                return Err(self.site.mismatch(
                    at,
                    format!("`{definition}` sets `{}` ({path}:{}), which is not one of the members the profile lists as inert", m.compact_text(), m.line()),
                ));
            }
        }
        Ok(())
    }

    /// Where the default's variable is passed to the sink call: position or name.
    pub(super) fn pass_fact(&self, sink: &Found<'a>, from: &Found<'a>) -> Result<Option<Found<'a>>, Escalation> {
        let Some(FactValue::Text(variable)) = from.fact.values.get("variable") else { return Ok(None) };
        let option = from.fact.kind == "option";
        let args = arguments(sink.node);
        // An option the framework leaves unset is read with a fallback: `options.X ?? LITERAL`.
        let fallback = |e: Node<'a>| -> Option<Node<'a>> {
            let e = bare(e);
            let operator: String = e.children().filter(|x| !x.is_named()).map(|x| x.text()).collect();
            (option && e.kind() == "binary_expression" && operator == "??" && e.field_child("left").is_some_and(|l| bare(l).compact_text() == *variable))
                .then(|| e.field_child("right"))
                .flatten()
        };
        let hits: Vec<(usize, &(Option<String>, Node<'a>))> =
            args.iter().enumerate().filter(|(_, a)| bare(a.1).compact_text() == *variable || fallback(a.1).is_some()).collect();
        let (index, (name, node)) = match hits.as_slice() {
            [] => return Ok(None),
            [one] => *one,
            [_, (_, second), ..] => return Err(self.site.mismatch(second.1, format!("`{variable}` is passed {} times", hits.len()))),
        };
        if name.is_none() && args[..index].iter().any(|a| a.0.is_some()) {
            return Err(self.site.mismatch(*node, "a positional argument after named ones".into()));
        }
        // What an omitted argument is at the sink: the default the binding gave,
        // or the fallback's literal (an unset option is null, which no rule reads).
        let default = match fallback(*node) {
            Some(right) => match literal(bare(right)) {
                Some(v) => Some(v),
                None => return Err(self.site.mismatch(right, format!("`{variable}` falls back to `{}`, not a literal", right.compact_text()))),
            },
            None if option => None,
            None => from.fact.values.get("default").cloned(),
        };
        self.held_until_sink(variable, from)?;
        let mut values = BTreeMap::new();
        values.insert("variable".into(), FactValue::Text(variable.clone()));
        values.insert("index".into(), FactValue::Int(index as i64));
        if let Some(n) = name {
            values.insert("name".into(), FactValue::Text(n.clone()));
        }
        if let Some(d) = default {
            values.insert("default".into(), d);
        }
        Ok(Some(self.site.fact(*node, values)))
    }

    /// In the sink's region, the passed value's holder (`options` of
    /// `options.X`) is bound once from the method that bound the option, and
    /// nothing in the region can change `options.X` (or the variable itself).
    pub(super) fn held_until_sink(&self, variable: &str, from: &Found<'a>) -> Result<(), Escalation> {
        let node = self.site.region.node;
        let (root, member) = match variable.split_once('.') {
            Some((r, m)) => (r, Some(m)),
            None => (variable, None),
        };
        let same_region = node.contains(from.node);
        let mut allowed: Vec<Node<'a>> = Vec::new();
        if from.fact.kind == "option" {
            // The options object is the region's own parameter, which the framework bound.
            let parameter = node
                .field_child("parameters")
                .into_iter()
                .flat_map(|l| l.named_children().filter(|p| p.kind() == "parameter").collect::<Vec<_>>())
                .filter_map(|p| p.field_child("name"))
                .find(|n| n.text() == root);
            match parameter {
                Some(p) => allowed.push(p),
                None => return Err(self.site.mismatch(node, format!("`{root}`, which holds `{variable}`, is not a parameter of this region"))),
            }
        } else if same_region {
            allowed.extend(held::occurrences(node, root).into_iter().filter(|o| held::is_declared_name(*o)));
            allowed.extend(held::occurrences(from.node.parent().unwrap_or(from.node), root));
        } else if member.is_some() {
            let binder = from.node.ancestors().find(|a| a.kind() == "method_declaration").and_then(|m| m.field_child("name")).map(|n| n.text());
            let decls: Vec<Node<'a>> = held::occurrences(node, root).into_iter().filter(|o| held::is_declared_name(*o)).collect();
            let bound_by = |o: &Node<'a>| {
                o.parent()
                    .and_then(|d| d.named_children().rfind(|c| Some(*c) != d.field_child("name")))
                    .map(bare)
                    .filter(|v| v.kind() == "invocation_expression")
                    .map(identity)
            };
            let ok = matches!((decls.as_slice(), binder), ([one], Some(b)) if bound_by(one).is_some_and(|i| i == Identity::Path(b.into()) || i == Identity::Path(format!("this.{b}"))));
            if !ok {
                return Err(self.site.mismatch(
                    node,
                    format!("`{root}` is not bound once in this region from `{}`, the method that binds `{variable}`", binder.unwrap_or("?")),
                ));
            }
            allowed.extend(decls);
        }
        match held::first_write(node, root, member, &|o| allowed.contains(&o)) {
            Some((at, why)) => Err(self.site.mismatch(at, format!("{why}: `{variable}` is not held unchanged until the sink"))),
            None => Ok(()),
        }
    }
}

/// A C# fact extraction: names are read where each fact needs them.
pub(super) struct Cx<'r, 'a> {
    pub site: FactSite<'r, 'a>,
}
