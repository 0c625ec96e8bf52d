//! The Go frontend (tree-sitter-go).
//!
//! Regions are function declarations by name, or the outermost function
//! literal inside one (the handler closure a tool constructor receives).
//! Callee identities are dotted tokens as written (`client.Repositories.Create`),
//! with generic instantiations kept and normalized (`OptionalParam[bool]`).
//! Go's grammar cannot tell `F[T](x)` (an instantiation) from `m[k](x)` (a
//! call of a map value): an index whose text is not type-like is a dynamic callee.

mod bindings;
mod loader;
mod scope;
mod surroundings;

use std::collections::BTreeMap;

use crate::ir::SourceFile;
use crate::ir::{Escalation, EscalationCode, FactValue, Identity};
use crate::lang::{Env, FactSite, Found, Frontend, Region};
use crate::spec::{ArgPattern, ArgShape, DefaultRule, FactKind, FactSpec, RegionKind};
use crate::ts::{Node, Syntax};

use bindings::Bindings;
use scope::Scope;

/// The Go frontend.
pub struct Go;

impl Frontend for Go {
    fn find_regions<'a>(&self, syntax: &'a Syntax, kind: &RegionKind) -> Vec<Node<'a>> {
        let (RegionKind::Function(name) | RegionKind::Literal(name)) = kind else { return Vec::new() };
        let functions = syntax
            .root()
            .descendants()
            .filter(|n| matches!(n.kind(), "function_declaration" | "method_declaration"))
            .filter(|n| n.field_child("name").is_some_and(|id| id.text() == name));
        match kind {
            RegionKind::Function(_) => functions.collect(),
            _ => functions
                .flat_map(|f| {
                    f.descendants().filter(move |n| n.kind() == "func_literal" && n.ancestors().take_while(|a| *a != f).all(|a| a.kind() != "func_literal"))
                })
                .collect(),
        }
    }

    /// Every call, `defer` and `go` statements included (their call is a
    /// call expression), with the identity its head resolves to by declaration.
    fn calls<'a>(&self, region: &Region<'a>) -> Vec<(Node<'a>, Identity)> {
        let scope = Scope::of(region);
        region.node.descendants().filter(|n| is_call(*n)).map(|c| (c, scope.resolve(identity(c)))).collect()
    }

    fn check_package(&self, files: &[SourceFile], trees: &[(&str, &Syntax)], _env: &Env) -> Result<(), Escalation> {
        loader::check(files, trees)
    }

    fn check_region(&self, region: &Region<'_>) -> Result<(), Escalation> {
        surroundings::check(region)
    }

    fn extract<'a>(&self, region: &Region<'a>, spec: &FactSpec, found: &BTreeMap<String, Found<'a>>) -> Result<Option<Found<'a>>, Escalation> {
        let bindings = Bindings::of(region.node);
        let cx = Cx { region, bindings: &bindings, spec };
        match &spec.kind {
            FactKind::Call { callee, args, matching } => cx.call_fact(callee, args.as_deref(), *matching),
            FactKind::Default { argument, helpers, .. } => cx.default_fact(argument, helpers),
            // Without the default fact, only a literal field can be a fact.
            FactKind::Field { sink: Some(sink), arg: Some(arg), field, wrap, from } => match found.get(sink) {
                Some(sink) => cx.field_fact(sink, *arg, field, wrap.as_deref(), found.get(from)),
                None => Ok(None),
            },
            other => Err(Escalation::new(
                EscalationCode::ShapeMismatch,
                format!("fact `{}`: the Go frontend does not extract `{}` facts", spec.name, other.name()),
                Some(region.anchor(region.node)),
            )),
        }
    }
}

fn is_call(n: Node<'_>) -> bool {
    matches!(n.kind(), "call_expression" | "type_conversion_expression")
}

/// Whether a type argument list's text names types, not values.
fn type_like(text: &str) -> bool {
    text.split(',').map(str::trim).all(|part| {
        let part = part.trim_start_matches(['*', '[', ']']);
        let last = part.rsplit('.').next().unwrap_or(part);
        scope::PREDECLARED_TYPES.contains(&part) || last.chars().next().is_some_and(char::is_uppercase) || part.starts_with("map[")
    })
}

/// A dotted token for an operand chain, or `None` when its root is not a name.
fn dotted(n: Node<'_>) -> Option<String> {
    match n.kind() {
        "identifier" | "package_identifier" | "type_identifier" | "field_identifier" => Some(n.text().to_owned()),
        "selector_expression" => Some(format!("{}.{}", dotted(n.field_child("operand")?)?, n.field_child("field")?.text())),
        "qualified_type" => Some(n.compact_text()),
        "call_expression" => Some(format!("{}()", dotted(n.field_child("function")?)?)),
        "parenthesized_expression" => dotted(n.named_children().find(|c| c.kind() != "comment")?),
        "index_expression" => {
            let index = n.field_child("index")?;
            type_like(index.text()).then(|| Some(format!("{}[{}]", dotted(n.field_child("operand")?)?, index.compact_text())))?
        }
        _ => None,
    }
}

/// The identity of a call site's callee.
pub(crate) fn identity(call: Node<'_>) -> Identity {
    if call.kind() == "type_conversion_expression" {
        let Some(ty) = call.field_child("type") else { return Identity::Dynamic("a conversion without a type".into()) };
        let args = ty.field_child("type_arguments").map(|a| a.text().trim_matches(['[', ']']).to_owned());
        return match args {
            Some(a) if !type_like(&a) => Identity::Dynamic(format!("calls an indexed value (`{}`)", ty.compact_text())),
            _ => Identity::Path(ty.compact_text()),
        };
    }
    let Some(function) = call.field_child("function") else { return Identity::Dynamic("a call without a callee".into()) };
    match function.kind() {
        "func_literal" => Identity::Path("func()".into()),
        "call_expression" => Identity::Dynamic(format!("calls the result of `{}`", function.compact_text())),
        "index_expression" if !function.field_child("index").is_some_and(|i| type_like(i.text())) => {
            Identity::Dynamic(format!("calls an indexed value (`{}`)", function.compact_text()))
        }
        "identifier" | "selector_expression" | "index_expression" | "parenthesized_expression" => match dotted(function) {
            Some(path) => Identity::Path(path),
            None => Identity::Unresolved(function.compact_text()),
        },
        other => Identity::Dynamic(format!("calls a {other} (`{}`)", function.compact_text())),
    }
}

/// The statement holding a node, for messages.
fn enclosing_statement(n: Node<'_>) -> Node<'_> {
    std::iter::once(n).chain(n.ancestors()).find(|a| a.kind().ends_with("_statement") || a.kind() == "short_var_declaration").unwrap_or(n)
}

/// A call's arguments, comments left out.
fn arguments(call: Node<'_>) -> Vec<Node<'_>> {
    call.items("arguments")
}

/// The content of a string literal (interpreted without escapes, or raw).
pub(crate) fn string_content(n: Node<'_>) -> Option<String> {
    match n.kind() {
        "interpreted_string_literal" => {
            let inner = n.text().strip_prefix('"')?.strip_suffix('"')?;
            (!inner.contains('\\')).then(|| inner.to_owned())
        }
        "raw_string_literal" => Some(n.text().strip_prefix('`')?.strip_suffix('`')?.to_owned()),
        _ => None,
    }
}

/// A literal's value: booleans, integers and strings.
fn literal(n: Node<'_>) -> Option<FactValue> {
    match n.kind() {
        "true" => Some(FactValue::Bool(true)),
        "false" => Some(FactValue::Bool(false)),
        "int_literal" => n.text().replace('_', "").parse().ok().map(FactValue::Int),
        _ => string_content(n).map(FactValue::Text),
    }
}

/// A profile's spelling of a literal (`false`, `3`, `"x"`).
fn literal_text(text: &str) -> Option<FactValue> {
    match text {
        "true" => Some(FactValue::Bool(true)),
        "false" => Some(FactValue::Bool(false)),
        _ => text.parse().ok().map(FactValue::Int).or_else(|| text.strip_prefix('"')?.strip_suffix('"').map(|s| FactValue::Text(s.to_owned()))),
    }
}

struct Cx<'r, 'a> {
    region: &'r Region<'a>,
    bindings: &'r Bindings<'a>,
    spec: &'r FactSpec,
}

impl<'a> Cx<'_, 'a> {
    fn site(&self) -> FactSite<'_, 'a> {
        FactSite { region: self.region, spec: self.spec }
    }

    fn escalate(&self, node: Node<'_>, detail: String) -> Escalation {
        self.site().mismatch(node, detail)
    }

    fn fact(&self, node: Node<'a>, values: BTreeMap<String, FactValue>) -> Found<'a> {
        self.site().fact(node, values)
    }

    fn calls_to(&self, callee: &str) -> Vec<Node<'a>> {
        let want = Identity::Path(callee.to_owned());
        self.region.node.descendants().filter(|n| is_call(*n) && identity(*n) == want).collect()
    }

    /// Exactly one call to `callee` whose arguments match the patterns.
    fn call_fact(&self, callee: &str, patterns: Option<&[ArgPattern]>, matching: bool) -> Result<Option<Found<'a>>, Escalation> {
        let mut calls = self.calls_to(callee);
        if let (true, Some(p)) = (matching, patterns) {
            calls.retain(|c| crate::lang::align(&arguments(*c), p, &|a, q| self.arg_matches(*a, q)).is_some());
        }
        let Some(call) = self.site().one_call(&calls, callee)? else { return Ok(None) };
        let mut values = BTreeMap::new();
        values.insert("callee".into(), FactValue::Text(callee.to_owned()));
        let Some(patterns) = patterns else { return Ok(Some(self.fact(call, values))) };
        let args = arguments(call);
        if call.field_child("arguments").is_some_and(|l| l.children().any(|c| c.kind() == "...")) {
            return Err(self.escalate(call, "a variadic `...` argument is outside the profile's shape".into()));
        }
        for a in &args {
            for p in patterns {
                if let ArgShape::Var(name) | ArgShape::Param(name) = &p.shape
                    && a.kind() == "identifier"
                    && a.text() == name
                {
                    self.check_single_binding(name, *a)?;
                }
            }
        }
        let Some(matched) = crate::lang::align(&args, patterns, &|a, p| self.arg_matches(*a, p)) else {
            let got: Vec<&str> = args.iter().map(|a| a.text()).collect();
            let want: Vec<String> = patterns.iter().map(ToString::to_string).collect();
            return Err(self.escalate(call, format!("arguments ({}) do not match the profile's shape [{}]", got.join(", "), want.join(", "))));
        };
        values.insert("args".into(), FactValue::List(matched.into_iter().map(FactValue::Text).collect()));
        Ok(Some(self.fact(call, values)))
    }

    /// A variable the profile follows must be bound once: a second binding
    /// means the value reaching the sink may not be the one the facts describe.
    fn check_single_binding(&self, name: &str, at: Node<'a>) -> Result<(), Escalation> {
        let sites = self.bindings.sites(name);
        let expected = if self.bindings.is_param(name) { 0 } else { 1 };
        match sites.get(expected) {
            Some(extra) => Err(self.escalate(
                *extra,
                format!("`{name}` is assigned again at line {}, so the value at line {} is not the one the profile follows", extra.line(), at.line()),
            )),
            None => Ok(()),
        }
    }

    fn arg_matches(&self, arg: Node<'a>, pattern: &ArgPattern) -> bool {
        match &pattern.shape {
            // Tool-argument flow is read by the Python frontend only so far.
            ArgShape::Arg(_) => false,
            ArgShape::Param(name) => arg.kind() == "identifier" && arg.text() == name && self.bindings.is_param(name),
            ArgShape::Var(name) => arg.kind() == "identifier" && arg.text() == name && !self.bindings.is_param(name) && self.bindings.sites(name).len() == 1,
            ArgShape::Any => true,
            ArgShape::Ref(path) => dotted(arg).as_deref() == Some(path.as_str()),
            ArgShape::Str(text) => string_content(arg).as_deref() == Some(text.as_str()),
            ArgShape::Format(_) => false,
        }
    }

    /// `VAR, err := HELPER(args, "argument", …)`: which helper reads the
    /// argument and what VAR holds when the caller omits it.
    fn default_fact(&self, argument: &str, helpers: &[(String, DefaultRule)]) -> Result<Option<Found<'a>>, Escalation> {
        // Reading the argument map directly bypasses every reviewed helper.
        if let Some(direct) = self
            .region
            .node
            .descendants()
            .find(|n| n.kind() == "index_expression" && n.field_child("index").and_then(string_content).as_deref() == Some(argument))
        {
            return Err(self.escalate(direct, format!("argument `{argument}` is read directly (`{}`), not through a reviewed helper", direct.compact_text())));
        }
        let reads: Vec<(Node<'a>, Node<'a>)> = self
            .region
            .node
            .descendants()
            .filter(|n| is_call(*n) && arguments(*n).iter().any(|a| string_content(*a).as_deref() == Some(argument)))
            .filter_map(|call| self.bindings.bound_by(call).map(|var| (call, var)))
            .collect();
        let (call, var) = match reads.as_slice() {
            [] => return Ok(None),
            [one] => *one,
            [_, (second, _), ..] => {
                return Err(self.escalate(*second, format!("argument `{argument}` is read {} times; the profile accepts one read", reads.len())));
            }
        };
        let helper = match identity(call) {
            Identity::Path(p) => p,
            other => return Err(self.escalate(call, format!("argument `{argument}` is read by `{other}`"))),
        };
        let Some((_, rule)) = helpers.iter().find(|(h, _)| *h == helper) else {
            let known: Vec<&str> = helpers.iter().map(|(h, _)| h.as_str()).collect();
            return Err(self.escalate(call, format!("argument `{argument}` is read by `{helper}`, not a reviewed helper ({})", known.join(", "))));
        };
        self.check_single_binding(var.text(), var)?;
        self.check_map_untouched(call)?;
        let (value, source) = match rule {
            DefaultRule::Zero(text) => match literal_text(text) {
                Some(v) => (v, "zero value of the helper".to_owned()),
                None => return Err(self.escalate(call, format!("the profile's zero value `{text}` is not a literal"))),
            },
            DefaultRule::Arg(i) => {
                let Some(arg) = arguments(call).get(*i).copied() else {
                    return Err(self.escalate(call, format!("`{helper}` has no argument {i} holding the default")));
                };
                self.resolve_literal(arg)?
            }
        };
        let mut values = BTreeMap::new();
        values.insert("argument".into(), FactValue::Text(argument.to_owned()));
        values.insert("variable".into(), FactValue::Text(var.text().to_owned()));
        values.insert("helper".into(), FactValue::Text(helper));
        values.insert("default".into(), value);
        values.insert("source".into(), FactValue::Text(source));
        Ok(Some(self.fact(call, values)))
    }

    /// Every identifier of the region spelled `name`, binding sites included.
    fn uses(&self, name: &str) -> Vec<Node<'a>> {
        self.region.node.descendants().filter(|n| n.kind() == "identifier" && n.text() == name).collect()
    }

    /// The argument map a helper reads must reach it unchanged: it may appear
    /// only as the first argument of calls to functions the profile reviews as
    /// regions (pinned helpers), never written (`args[k] = v`), aliased or
    /// handed to anything else, and it must be a parameter never rebound.
    fn check_map_untouched(&self, call: Node<'a>) -> Result<(), Escalation> {
        let Some(map) = arguments(call).first().copied() else { return Ok(()) };
        if map.kind() != "identifier" || !self.bindings.is_param(map.text()) {
            return Err(self.escalate(map, format!("the helper reads `{}`, not a parameter of the region", map.compact_text())));
        }
        let name = map.text();
        self.check_single_binding(name, map)?;
        for u in self.uses(name) {
            let call = u.parent().filter(|l| l.kind() == "argument_list").and_then(|l| l.parent());
            let reviewed = call.is_some_and(|c| {
                arguments(c).first() == Some(&u)
                    && matches!(identity(c), Identity::Path(p) if self.region.env.reviewed.iter().any(|r| *r == p.split('[').next().unwrap_or(&p)))
            });
            if !reviewed && !self.bindings.is_binding_site(u) && u.parent().is_some_and(|p| p.kind() != "parameter_declaration") {
                return Err(self.escalate(u, format!("the argument map `{name}` is used at line {} (`{}`) other than as the first argument of a reviewed helper: it may be changed before the read", u.line(), enclosing_statement(u).compact_text())));
            }
        }
        Ok(())
    }

    /// A literal, or a constant of the region's package whose value is one.
    fn resolve_literal(&self, arg: Node<'a>) -> Result<(FactValue, String), Escalation> {
        if let Some(v) = literal(arg) {
            return Ok((v, "literal".into()));
        }
        if arg.kind() != "identifier" {
            return Err(self.escalate(arg, format!("the default `{}` is neither a literal nor a constant", arg.text())));
        }
        let dir = |p: &str| p.rsplit_once('/').map_or("", |(d, _)| d).to_owned();
        let here = dir(self.region.file);
        let mut found = Vec::new();
        for (path, syntax) in self.region.trees.iter().filter(|(p, _)| dir(p) == here) {
            for spec in syntax.root().descendants().filter(|n| n.kind() == "const_spec") {
                let package_level = spec.ancestors().all(|a| !matches!(a.kind(), "function_declaration" | "method_declaration" | "func_literal"));
                let local = self.region.node.contains(spec);
                if (package_level || local) && spec.field_children("name").any(|n| n.text() == arg.text()) {
                    found.push((*path, spec));
                }
            }
        }
        match found.as_slice() {
            [(path, spec)] => {
                let names: Vec<Node<'_>> = spec.field_children("name").collect();
                let values: Vec<Node<'_>> = spec.field_child("value").map(|v| v.named_children().collect()).unwrap_or_default();
                let index = names.iter().position(|n| n.text() == arg.text()).unwrap_or(0);
                match values.get(index).and_then(|v| literal(*v)) {
                    Some(v) => Ok((v, format!("constant {} at {path}:{}", arg.text(), spec.line()))),
                    None => Err(self.escalate(arg, format!("constant `{}` ({path}:{}) is not a plain literal", arg.text(), spec.line()))),
                }
            }
            [] => Err(self.escalate(arg, format!("the default `{}` does not resolve to a constant of the package", arg.text()))),
            _ => Err(self.escalate(arg, format!("the default `{}` resolves to {} constants", arg.text(), found.len()))),
        }
    }

    /// The field `field` of the struct passed as argument `index` of the sink.
    fn field_fact(&self, sink: &Found<'a>, index: usize, field: &str, wrap: Option<&str>, from: Option<&Found<'a>>) -> Result<Option<Found<'a>>, Escalation> {
        let Some(arg) = arguments(sink.node).get(index).copied() else {
            return Err(self.escalate(sink.node, format!("the sink has no argument {index}")));
        };
        if arg.kind() != "identifier" {
            return Err(self.escalate(arg, format!("argument {index} of the sink is `{}`, not a struct variable", arg.compact_text())));
        }
        let name = arg.text();
        let sites = self.bindings.sites(name);
        let [site] = sites.as_slice() else {
            return Err(self.escalate(arg, format!("`{name}` is bound {} times; the profile follows one struct literal", sites.len())));
        };
        // The struct is followed from its literal to the sink only when nothing
        // else can reach it: any other use (a field write, `(*repo).F = …`, an
        // alias, `&repo`, passing it on) could change the field before the sink.
        if let Some(other) = self.uses(name).into_iter().find(|u| *u != arg && *u != *site) {
            return Err(self.escalate(
                other,
                format!(
                    "`{name}` is also used at line {} (`{}`): the struct may change between its literal and the sink",
                    other.line(),
                    enclosing_statement(other).compact_text()
                ),
            ));
        }
        let Some(composite) = self.bindings.value(*site).and_then(|v| {
            let v = if v.kind() == "unary_expression" { v.field_child("operand")? } else { v };
            (v.kind() == "composite_literal").then_some(v)
        }) else {
            return Err(self.escalate(*site, format!("`{name}` is not bound to a struct literal")));
        };
        let elements: Vec<Node<'a>> =
            composite.field_child("body").map(|b| b.named_children().filter(|e| e.kind() == "keyed_element").collect()).unwrap_or_default();
        let Some(element) = elements.into_iter().find(|e| e.field_child("key").is_some_and(|k| k.text().trim() == field)) else {
            return Ok(None);
        };
        let Some(mut value) = element.field_child("value").and_then(|v| v.named_children().next()) else { return Ok(None) };
        if let Some(wrap) = wrap
            && is_call(value)
            && identity(value) == Identity::Path(wrap.to_owned())
        {
            match arguments(value).as_slice() {
                [inner] => value = *inner,
                _ => return Err(self.escalate(value, format!("`{wrap}` takes one argument here"))),
            }
        }
        let variable = match from.and_then(|f| f.fact.values.get("variable")) {
            Some(FactValue::Text(v)) => v.clone(),
            _ => String::new(),
        };
        let mut values = BTreeMap::new();
        values.insert("field".into(), FactValue::Text(field.to_owned()));
        if value.kind() == "identifier" && !variable.is_empty() && value.text() == variable {
            let uses: Vec<Node<'a>> =
                self.region.node.descendants().filter(|n| n.kind() == "identifier" && n.text() == variable && !self.bindings.is_binding_site(*n)).collect();
            if let Some(other) = uses.iter().find(|u| **u != value) {
                return Err(self.escalate(*other, format!("`{variable}` is also used at line {} (a conditional or another flow)", other.line())));
            }
            values.insert("source".into(), FactValue::Text("argument".into()));
            values.insert("variable".into(), FactValue::Text(variable));
        } else if let Some(lit) = literal(value) {
            values.insert("source".into(), FactValue::Text("literal".into()));
            values.insert("literal".into(), lit);
        } else {
            return Err(self.escalate(value, format!("field `{field}` receives `{}`, neither `{variable}` nor a literal", value.compact_text())));
        }
        Ok(Some(self.fact(element, values)))
    }
}
