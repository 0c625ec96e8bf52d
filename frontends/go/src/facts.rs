//! Go's facts: `call` through the shared skeleton ([`fcd_frontends::facts`]), and
//! the Go shapes of `default` (an argument read by a reviewed helper, its
//! default a literal or a package constant) and `field` (a struct literal's
//! field reaching a sink). Kept apart from the callee identities in the
//! frontend's root module, which know nothing of facts.

use fcd_frontends::default::{DefaultShape, Read};
use fcd_frontends::facts::{CallShape, FactSite};
use fcd_frontends::field::{FieldShape, Member};
use fcd_frontends::frontend::Found;
use fcd_frontends::ir::{Escalation, Identity};
use fcd_frontends::spec::{ArgPattern, ArgShape};
use fcd_frontends::ts::Node;
use fcd_model::effect::FactValue;

use super::bindings::Bindings;
use super::syntax::{arguments, dotted, enclosing_statement, identity, is_call, literal, string_content};

/// A call's arguments are its nodes; `...` and a followed variable bound
/// twice are outside every shape.
impl<'a> CallShape<'a> for Cx<'_, 'a> {
    type Arg = Node<'a>;

    fn callee(&self, node: Node<'a>) -> Option<Identity> {
        is_call(node).then(|| super::typed(node, identity(node)))
    }

    fn arguments(&self, call: Node<'a>) -> Result<Vec<Node<'a>>, Escalation> {
        Ok(arguments(call))
    }

    fn check_arguments(&self, call: Node<'a>, args: &[Node<'a>], patterns: &[ArgPattern]) -> Result<(), Escalation> {
        if call.field_child("arguments").is_some_and(|l| l.children().any(|c| c.kind() == "...")) {
            return Err(self.site.mismatch(call, "a variadic `...` argument is outside the profile's shape".into()));
        }
        for a in args {
            for p in patterns {
                if let ArgShape::Var(name) | ArgShape::Param(name) = &p.shape
                    && a.kind() == "identifier"
                    && a.text() == name
                {
                    self.check_single_binding(name, *a)?;
                }
            }
        }
        Ok(())
    }

    fn arg_matches(&self, arg: &Node<'a>, pattern: &ArgPattern) -> bool {
        let arg = *arg;
        match &pattern.shape {
            // Tool-argument flow is read by the Python frontend only so far.
            ArgShape::Arg(_) => false,
            ArgShape::Param(name) => arg.kind() == "identifier" && arg.text() == name && self.names.is_param(name),
            ArgShape::Var(name) => arg.kind() == "identifier" && arg.text() == name && !self.names.is_param(name) && self.names.sites(name).len() == 1,
            ArgShape::Any => true,
            ArgShape::Ref(path) => dotted(arg).as_deref() == Some(path.as_str()),
            ArgShape::Str(text) => string_content(arg).as_deref() == Some(text.as_str()),
            ArgShape::Format(_) => false,
            // `str(…)` is read by the Python frontend only.
            ArgShape::Text(_) | ArgShape::State(_) => false,
            // Splat arguments are read by the Python and JavaScript frontends only so far.
            ArgShape::Splat(_) => false,
            // A call's result is followed by the JavaScript frontend only so far.
            ArgShape::Result(_) => false,
        }
    }

    fn arg_text(&self, arg: &Node<'a>) -> String {
        arg.text().to_owned()
    }
}

/// `VAR, err := HELPER(args, "argument", …)`: the helper reads the argument
/// map, a parameter it reaches unchanged; `args["argument"]` bypasses it.
impl<'a> DefaultShape<'a> for Cx<'_, 'a> {
    fn direct_read(&self, argument: &str) -> Option<Node<'a>> {
        self.site
            .region
            .node
            .descendants()
            .find(|n| n.kind() == "index_expression" && n.field_child("index").and_then(string_content).as_deref() == Some(argument))
    }

    fn reads(&self, argument: &str) -> Vec<Read<'a>> {
        self.site
            .region
            .node
            .descendants()
            .filter(|n| is_call(*n) && arguments(*n).iter().any(|a| string_content(*a).as_deref() == Some(argument)))
            .filter_map(|call| self.names.bound_by(call).map(|var| Read { call, variable: var.text().to_owned(), target: var }))
            .collect()
    }

    fn helper_identity(&self, call: Node<'a>) -> Identity {
        identity(call)
    }

    fn check_read(&self, read: &Read<'a>, _helpers: &[&str]) -> Result<(), Escalation> {
        self.check_single_binding(&read.variable, read.target)?;
        self.check_map_untouched(read.call)
    }

    fn argument_default(&self, call: Node<'a>, index: usize, helper: &str) -> Result<(FactValue, String), Escalation> {
        match arguments(call).get(index).copied() {
            Some(arg) => self.resolve_literal(arg),
            None => Err(self.site.mismatch(call, format!("`{helper}` has no argument {index} holding the default"))),
        }
    }
}

impl<'a> Cx<'_, 'a> {
    /// A variable the profile follows must be bound once: a second binding
    /// means the value reaching the sink may not be the one the facts describe.
    pub(super) fn check_single_binding(&self, name: &str, at: Node<'a>) -> Result<(), Escalation> {
        let sites = self.names.sites(name);
        let expected = if self.names.is_param(name) { 0 } else { 1 };
        if let Some(extra) = sites.get(expected) {
            return Err(self.site.mismatch(
                *extra,
                format!("`{name}` is assigned again at line {}, so the value at line {} is not the one the profile follows", extra.line(), at.line()),
            ));
        }
        // `&name` hands out a pointer: a write through it (`*p = …`) changes the
        // variable where no binding of its name shows.
        let addressed = self
            .uses(name)
            .into_iter()
            .find(|u| u.parent().is_some_and(|p| p.kind() == "unary_expression" && p.field_child("operator").is_some_and(|o| o.text() == "&")));
        match addressed {
            Some(u) => Err(self.site.mismatch(
                u,
                format!("the address of `{name}` is taken at line {}: a write through that pointer changes the value at line {}", u.line(), at.line()),
            )),
            None => Ok(()),
        }
    }

    /// Every identifier of the region spelled `name`, binding sites included.
    pub(super) fn uses(&self, name: &str) -> Vec<Node<'a>> {
        self.site.region.node.descendants().filter(|n| n.kind() == "identifier" && n.text() == name).collect()
    }

    /// The argument map a helper reads must reach it unchanged: it may appear
    /// only as the first argument of calls to functions the profile reviews as
    /// regions (pinned helpers), never written (`args[k] = v`), aliased or
    /// handed to anything else, and it must be a parameter never rebound.
    pub(super) fn check_map_untouched(&self, call: Node<'a>) -> Result<(), Escalation> {
        let Some(map) = arguments(call).first().copied() else { return Ok(()) };
        if map.kind() != "identifier" || !self.names.is_param(map.text()) {
            return Err(self.site.mismatch(map, format!("the helper reads `{}`, not a parameter of the region", map.compact_text())));
        }
        let name = map.text();
        self.check_single_binding(name, map)?;
        for u in self.uses(name) {
            let call = u.parent().filter(|l| l.kind() == "argument_list").and_then(|l| l.parent());
            let reviewed = call.is_some_and(|c| {
                arguments(c).first() == Some(&u)
                    && matches!(identity(c), Identity::Path(p) if self.site.region.env.reviewed.iter().any(|r| *r == p.split('[').next().unwrap_or(&p)))
            });
            if !reviewed && !self.names.is_binding_site(u) && u.parent().is_some_and(|p| p.kind() != "parameter_declaration") {
                return Err(self.site.mismatch(u, format!("the argument map `{name}` is used at line {} (`{}`) other than as the first argument of a reviewed helper: it may be changed before the read", u.line(), enclosing_statement(u).compact_text())));
            }
        }
        Ok(())
    }

    /// A literal, or a constant of the region's package whose value is one.
    pub(super) fn resolve_literal(&self, arg: Node<'a>) -> Result<(FactValue, String), Escalation> {
        if let Some(v) = literal(arg) {
            return Ok((v, "literal".into()));
        }
        if arg.kind() != "identifier" {
            return Err(self.site.mismatch(arg, format!("the default `{}` is neither a literal nor a constant", arg.text())));
        }
        let dir = |p: &str| p.rsplit_once('/').map_or("", |(d, _)| d).to_owned();
        let here = dir(self.site.region.file);
        let mut found = Vec::new();
        for (path, syntax) in self.site.region.trees.iter().filter(|(p, _)| dir(p) == here) {
            for spec in syntax.root().descendants().filter(|n| n.kind() == "const_spec") {
                let package_level = spec.ancestors().all(|a| !matches!(a.kind(), "function_declaration" | "method_declaration" | "func_literal"));
                let local = self.site.region.node.contains(spec);
                if (package_level || local) && spec.field_children("name").any(|n| n.text() == arg.text()) {
                    found.push((*path, spec));
                }
            }
        }
        // A declaration of the name in the enclosing function (a parameter,
        // `:=`, `var`, a range variable, a const outside the region) may be
        // the one the read sees: the package constant's value is not taken.
        if let Some(top) = arg.ancestors().filter(|a| matches!(a.kind(), "function_declaration" | "method_declaration" | "func_literal")).last() {
            let bindings = super::bindings::Bindings::of(top);
            let known = |site: Node<'_>| found.iter().any(|(_, spec)| site.parent() == Some(*spec));
            let other = bindings.sites(arg.text()).into_iter().find(|s| !known(*s));
            if bindings.is_param(arg.text()) || other.is_some() {
                let line = other.map_or(top.line(), |s| s.line());
                return Err(self.site.mismatch(
                    arg,
                    format!(
                        "the default `{}` is also declared in the function (line {line}): which value the read sees depends on scope, not the package constant",
                        arg.text()
                    ),
                ));
            }
        }
        match found.as_slice() {
            [(path, spec)] => {
                let names: Vec<Node<'_>> = spec.field_children("name").collect();
                let values: Vec<Node<'_>> = spec.field_child("value").map(|v| v.named_children().collect()).unwrap_or_default();
                let index = names.iter().position(|n| n.text() == arg.text()).unwrap_or(0);
                match values.get(index).and_then(|v| literal(*v)) {
                    Some(v) => Ok((v, format!("constant {} at {path}:{}", arg.text(), spec.line()))),
                    None => Err(self.site.mismatch(arg, format!("constant `{}` ({path}:{}) is not a plain literal", arg.text(), spec.line()))),
                }
            }
            [] => Err(self.site.mismatch(arg, format!("the default `{}` does not resolve to a constant of the package", arg.text()))),
            _ => Err(self.site.mismatch(arg, format!("the default `{}` resolves to {} constants", arg.text(), found.len()))),
        }
    }
}

/// A struct literal's keyed field: the struct is argument `arg` of the sink,
/// a variable bound once to the literal (or `&` of it) and used nowhere else.
impl<'a> FieldShape<'a> for Cx<'_, 'a> {
    fn member(&self, sink: Option<&Found<'a>>, index: Option<usize>, field: &str) -> Result<Option<Member<'a>>, Escalation> {
        let (Some(sink), Some(index)) = (sink, index) else {
            return Err(self.site.mismatch(self.site.region.node, "a Go field fact names its `sink` and `arg`".into()));
        };
        let Some(arg) = arguments(sink.node).get(index).copied() else {
            return Err(self.site.mismatch(sink.node, format!("the sink has no argument {index}")));
        };
        if arg.kind() != "identifier" {
            return Err(self.site.mismatch(arg, format!("argument {index} of the sink is `{}`, not a struct variable", arg.compact_text())));
        }
        let name = arg.text();
        let sites = self.names.sites(name);
        let [site] = sites.as_slice() else {
            return Err(self.site.mismatch(arg, format!("`{name}` is bound {} times; the profile follows one struct literal", sites.len())));
        };
        // The struct is followed from its literal to the sink only when nothing
        // else can reach it: any other use (a field write, `(*repo).F = …`, an
        // alias, `&repo`, passing it on) could change the field before the sink.
        if let Some(other) = self.uses(name).into_iter().find(|u| *u != arg && *u != *site) {
            return Err(self.site.mismatch(
                other,
                format!(
                    "`{name}` is also used at line {} (`{}`): the struct may change between its literal and the sink",
                    other.line(),
                    enclosing_statement(other).compact_text()
                ),
            ));
        }
        let Some(composite) = self.names.value(*site).and_then(|v| {
            let v = if v.kind() == "unary_expression" { v.field_child("operand")? } else { v };
            (v.kind() == "composite_literal").then_some(v)
        }) else {
            return Err(self.site.mismatch(*site, format!("`{name}` is not bound to a struct literal")));
        };
        let elements: Vec<Node<'a>> =
            composite.field_child("body").map(|b| b.named_children().filter(|e| e.kind() == "keyed_element").collect()).unwrap_or_default();
        let Some(element) = elements.into_iter().find(|e| e.field_child("key").is_some_and(|k| k.text().trim() == field)) else {
            return Ok(None);
        };
        Ok(element.field_child("value").and_then(|v| v.named_children().next()).map(|value| Member { element, value }))
    }

    fn unwrap(&self, member: &Member<'a>, _field: &str, wrap: &str) -> Result<Node<'a>, Escalation> {
        let value = member.value;
        if !(is_call(value) && identity(value) == Identity::Path(wrap.to_owned())) {
            return Ok(value);
        }
        match arguments(value).as_slice() {
            [inner] => Ok(*inner),
            _ => Err(self.site.mismatch(value, format!("`{wrap}` takes one argument here"))),
        }
    }

    fn is_variable(&self, value: Node<'a>, variable: &str) -> Result<bool, Escalation> {
        if value.kind() != "identifier" || value.text() != variable {
            return Ok(false);
        }
        let uses: Vec<Node<'a>> = self.uses(variable).into_iter().filter(|n| !self.names.is_binding_site(*n)).collect();
        match uses.iter().find(|u| **u != value) {
            Some(other) => Err(self.site.mismatch(*other, format!("`{variable}` is also used at line {} (a conditional or another flow)", other.line()))),
            None => Ok(true),
        }
    }

    fn literal(&self, value: Node<'a>) -> Option<FactValue> {
        literal(value)
    }
}

/// A Go fact extraction: names are the region's bindings.
pub(super) struct Cx<'r, 'a> {
    pub site: FactSite<'r, 'a>,
    pub names: &'r Bindings<'a>,
}
