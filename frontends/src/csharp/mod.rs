//! The C# frontend (tree-sitter-c-sharp).
//!
//! Regions are methods, named `Class.Method` (or just `Method`), with a body;
//! partial classes, file-scoped namespaces and attributes need nothing
//! special. Callee identities are dotted tokens as written, generic arguments
//! kept and normalized (`parseResult.GetValueOrDefault<bool>`), `a?.B` read as
//! `a.B`; object creations are not callees, but calls on them are
//! (`new HttpClient().GetAsync`). Facts follow an option's wiring: registered,
//! bound with a default, passed to the service, mapped to literals, placed in
//! the deployment parameters, and the template's own value. String contents
//! (a raw JSON template included) are read as data, never as code.

use std::collections::BTreeMap;

use crate::ir::{Escalation, EscalationCode, FactValue, Identity};
use crate::lang::{FactSite, Found, Frontend, Region};
use crate::spec::{ArgPattern, ArgShape, DefaultRule, FactKind, FactSpec, RegionKind};
use crate::ts::{Node, Syntax};

/// The C# frontend.
pub struct CSharp;

const TYPES: &[&str] = &["class_declaration", "struct_declaration", "record_declaration", "interface_declaration"];

impl Frontend for CSharp {
    fn find_regions<'a>(&self, syntax: &'a Syntax, kind: &RegionKind) -> Vec<Node<'a>> {
        let RegionKind::Function(name) = kind else { return Vec::new() };
        let (class, method) = match name.rsplit_once('.') {
            Some((c, m)) => (Some(c), m),
            None => (None, name.as_str()),
        };
        syntax
            .root()
            .descendants()
            .filter(|n| matches!(n.kind(), "method_declaration" | "local_function_statement"))
            .filter(|n| n.field_child("name").is_some_and(|id| id.text() == method))
            .filter(|n| n.field_child("body").is_some() || n.children().any(|c| c.kind() == "arrow_expression_clause"))
            .filter(|n| {
                class.is_none_or(|c| {
                    n.ancestors()
                        .find(|a| TYPES.contains(&a.kind()))
                        .and_then(|t| t.field_child("name"))
                        .is_some_and(|id| id.text() == c)
                })
            })
            .collect()
    }

    fn calls<'a>(&self, region: &Region<'a>) -> Vec<(Node<'a>, Identity)> {
        region.node.descendants().filter(|n| n.kind() == "invocation_expression").map(|c| (c, identity(c))).collect()
    }

    fn extract<'a>(
        &self,
        region: &Region<'a>,
        spec: &FactSpec,
        found: &BTreeMap<String, Found<'a>>,
    ) -> Result<Option<Found<'a>>, Escalation> {
        let cx = Cx { region, spec };
        match &spec.kind {
            FactKind::Call { callee, args, matching } => cx.call_fact(callee, args.as_deref(), *matching),
            FactKind::Default { argument, helpers, definition } => cx.default_fact(argument, helpers, definition.as_deref()),
            FactKind::Pass { sink, from } => match (found.get(sink), found.get(from)) {
                (Some(sink), Some(from)) => cx.pass_fact(sink, from),
                _ => Ok(None),
            },
            FactKind::Map { from } => match found.get(from) {
                Some(pass) => cx.map_fact(pass),
                None => Ok(None),
            },
            FactKind::Field { field, wrap, from, .. } => cx.field_fact(field, wrap.as_deref(), found.get(from)),
            FactKind::Key { key } => cx.key_fact(key),
            other => Err(Escalation::new(
                EscalationCode::ShapeMismatch,
                format!("fact `{}`: the C# frontend does not extract `{}` facts", spec.name, other.name()),
                Some(region.anchor(region.node)),
            )),
        }
    }
}

/// The first named child that is not a comment.
fn inner(n: Node<'_>) -> Option<Node<'_>> {
    n.named_children().find(|c| c.kind() != "comment")
}

/// A dotted token for an expression, or `None` when it does not name something.
fn dotted(n: Node<'_>) -> Option<String> {
    match n.kind() {
        "identifier" | "predefined_type" | "this_expression" | "base_expression" | "this" | "base" => Some(n.text().to_owned()),
        "generic_name" | "qualified_name" => Some(n.compact_text()),
        "member_access_expression" => {
            let name = n.field_child("name")?;
            // `base.X` and `this.X`: the receiver is a keyword, not a named node.
            let left = match n.field_child("expression") {
                Some(e) => dotted(e)?,
                None => n.children().next().filter(|c| matches!(c.text(), "base" | "this"))?.text().to_owned(),
            };
            Some(format!("{left}.{}", dotted(name)?))
        }
        "conditional_access_expression" => {
            let left = dotted(n.field_child("condition")?)?;
            let binding = n.named_children().find(|c| c.kind() == "member_binding_expression")?;
            Some(format!("{left}.{}", dotted(binding.field_child("name")?)?))
        }
        "invocation_expression" => Some(format!("{}()", dotted(n.field_child("function")?)?)),
        "object_creation_expression" => Some(format!("new {}()", n.field_child("type")?.compact_text())),
        "implicit_object_creation_expression" => Some("new()".into()),
        "postfix_unary_expression" | "parenthesized_expression" | "await_expression" => dotted(inner(n)?),
        _ => None,
    }
}

/// The identity of an invocation's callee.
fn identity(call: Node<'_>) -> Identity {
    let Some(function) = call.field_child("function") else { return Identity::Dynamic("an invocation without a callee".into()) };
    match function.kind() {
        "element_access_expression" => Identity::Dynamic(format!("calls an indexed value (`{}`)", function.compact_text())),
        "invocation_expression" => Identity::Dynamic(format!("calls the result of `{}`", function.compact_text())),
        "identifier" | "generic_name" | "member_access_expression" | "conditional_access_expression" | "qualified_name" | "parenthesized_expression" => {
            match dotted(function) {
                Some(path) => Identity::Path(path),
                None if function.kind() == "parenthesized_expression" => Identity::Dynamic(format!("calls `{}`", function.compact_text())),
                None => Identity::Unresolved(function.compact_text()),
            }
        }
        other => Identity::Dynamic(format!("calls a {other} (`{}`)", function.compact_text())),
    }
}

/// An invocation's arguments: (name for a named argument, expression).
fn arguments(call: Node<'_>) -> Vec<(Option<String>, Node<'_>)> {
    call.field_child("arguments")
        .map(|list| {
            list.named_children()
                .filter(|a| a.kind() == "argument")
                .filter_map(|a| {
                    let name = a.field_child("name").map(|n| n.text().to_owned());
                    let expr = a.named_children().rfind(|c| c.kind() != "comment" && Some(*c) != a.field_child("name"))?;
                    Some((name, expr))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The content of a string literal of any form, without decoding escapes (`None` if it has any).
fn string_content(n: Node<'_>) -> Option<String> {
    match n.kind() {
        "string_literal" => {
            let parts: Vec<Node<'_>> = n.named_children().collect();
            if parts.iter().any(|p| p.kind() != "string_literal_content") {
                return None;
            }
            Some(parts.iter().map(|p| p.text()).collect())
        }
        "verbatim_string_literal" => Some(n.text().strip_prefix("@\"")?.strip_suffix('"')?.replace("\"\"", "\"")),
        "raw_string_literal" => Some(n.named_children().filter(|c| c.kind() == "raw_string_content").map(|c| c.text()).collect()),
        _ => None,
    }
}

fn literal(n: Node<'_>) -> Option<FactValue> {
    match n.kind() {
        "boolean_literal" => Some(FactValue::Bool(n.text() == "true")),
        "integer_literal" => n.text().replace('_', "").parse().ok().map(FactValue::Int),
        _ => string_content(n).map(FactValue::Text),
    }
}

fn literal_text(text: &str) -> Option<FactValue> {
    match text {
        "true" => Some(FactValue::Bool(true)),
        "false" => Some(FactValue::Bool(false)),
        _ => text
            .parse()
            .ok()
            .map(FactValue::Int)
            .or_else(|| text.strip_prefix('"')?.strip_suffix('"').map(|s| FactValue::Text(s.to_owned()))),
    }
}

/// An expression without `!`, parentheses and `await`.
fn bare(mut n: Node<'_>) -> Node<'_> {
    while matches!(n.kind(), "postfix_unary_expression" | "parenthesized_expression" | "await_expression") {
        match inner(n) {
            Some(i) => n = i,
            None => break,
        }
    }
    n
}

struct Cx<'r, 'a> {
    region: &'r Region<'a>,
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
        }
    }

    fn call_fact(&self, callee: &str, patterns: Option<&[ArgPattern]>, matching: bool) -> Result<Option<Found<'a>>, Escalation> {
        let want = Identity::Path(callee.to_owned());
        let mut calls: Vec<Node<'a>> =
            self.region.node.descendants().filter(|n| n.kind() == "invocation_expression" && identity(*n) == want).collect();
        if let (true, Some(p)) = (matching, patterns) {
            calls.retain(|c| crate::lang::align(&arguments(*c), p, &|a, q| self.arg_matches(a, q)).is_some());
        }
        let Some(call) = self.site().one_call(&calls, callee)? else { return Ok(None) };
        let mut values = BTreeMap::new();
        values.insert("callee".into(), FactValue::Text(callee.to_owned()));
        if let Some(patterns) = patterns {
            let args = arguments(call);
            let Some(matched) = crate::lang::align(&args, patterns, &|a, p| self.arg_matches(a, p)) else {
                let got: Vec<String> = args.iter().map(|a| a.1.compact_text()).collect();
                let want: Vec<String> = patterns.iter().map(ToString::to_string).collect();
                return Err(self.escalate(call, format!("arguments ({}) do not match the profile's shape [{}]", got.join(", "), want.join(", "))));
            };
            values.insert("args".into(), FactValue::List(matched.into_iter().map(FactValue::Text).collect()));
        }
        Ok(Some(self.fact(call, values)))
    }

    /// Assignments and declarations in the region: (target text, target node, value).
    fn assignments(&self) -> Vec<(String, Node<'a>, Option<Node<'a>>)> {
        let mut out = Vec::new();
        for n in self.region.node.descendants() {
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

    /// `TARGET = HELPER(…, ARGUMENT, …)`: the helper that binds the option and its default.
    fn default_fact(&self, argument: &str, helpers: &[(String, DefaultRule)], definition: Option<&str>) -> Result<Option<Found<'a>>, Escalation> {
        let names_argument = |a: &(Option<String>, Node<'a>)| {
            let e = bare(a.1);
            dotted(e).as_deref() == Some(argument) || string_content(e).as_deref() == Some(argument)
        };
        let assignments = self.assignments();
        let binds: Vec<&(String, Node<'a>, Option<Node<'a>>)> = assignments
            .iter()
            .filter(|(_, _, v)| v.map(bare).is_some_and(|v| v.kind() == "invocation_expression" && arguments(v).iter().any(names_argument)))
            .collect();
        let (variable, target, call) = match binds.as_slice() {
            [] => return Ok(None),
            [(var, target, Some(value))] => (var.clone(), *target, bare(*value)),
            [_, second, ..] => return Err(self.escalate(second.1, format!("`{argument}` is bound {} times; the profile accepts one binding", binds.len()))),
            [(_, target, None)] => return Err(self.escalate(*target, "a binding without a value".into())),
        };
        if let Some((_, again, _)) = assignments.iter().find(|(v, n, _)| *v == variable && *n != target) {
            return Err(self.escalate(*again, format!("`{variable}` is assigned again at line {}", again.line())));
        }
        let helper = match identity(call) {
            Identity::Path(p) => p,
            other => return Err(self.escalate(call, format!("`{argument}` is bound by `{other}`"))),
        };
        let Some((_, rule)) = helpers.iter().find(|(h, _)| *h == helper) else {
            let known: Vec<&str> = helpers.iter().map(|(h, _)| h.as_str()).collect();
            return Err(self.escalate(call, format!("`{argument}` is bound by `{helper}`, not a reviewed helper ({})", known.join(", "))));
        };
        let (mut value, mut source) = match rule {
            DefaultRule::Zero(text) => match literal_text(text) {
                Some(v) => (v, "zero value of the helper".to_owned()),
                None => return Err(self.escalate(call, format!("the profile's zero value `{text}` is not a literal"))),
            },
            DefaultRule::Arg(i) => match arguments(call).get(*i).and_then(|a| literal(bare(a.1))) {
                Some(v) => (v, "literal".to_owned()),
                None => return Err(self.escalate(call, format!("argument {i} of `{helper}` is not a literal default"))),
            },
        };
        if let Some(definition) = definition
            && let Some((v, where_)) = self.definition_default(definition, call)?
        {
            value = v;
            source = where_;
        }
        let mut values = BTreeMap::new();
        values.insert("argument".into(), FactValue::Text(argument.to_owned()));
        values.insert("variable".into(), FactValue::Text(variable));
        values.insert("helper".into(), FactValue::Text(helper));
        values.insert("default".into(), value);
        values.insert("source".into(), FactValue::Text(source));
        Ok(Some(self.fact(call, values)))
    }

    /// The explicit default of an option definition (`DefaultValueFactory = _ => LITERAL`),
    /// which overrides the helper's zero value.
    fn definition_default(&self, definition: &str, at: Node<'a>) -> Result<Option<(FactValue, String)>, Escalation> {
        let Some((class, field)) = definition.rsplit_once('.') else {
            return Err(self.escalate(at, format!("definition `{definition}` is not Class.Field")));
        };
        let mut found = Vec::new();
        for (path, syntax) in self.region.trees {
            for decl in syntax.root().descendants().filter(|n| n.kind() == "variable_declarator") {
                let named = decl.field_child("name").is_some_and(|n| n.text() == field);
                let in_class = decl
                    .ancestors()
                    .find(|a| TYPES.contains(&a.kind()))
                    .and_then(|t| t.field_child("name"))
                    .is_some_and(|n| n.text() == class);
                let is_field = decl.ancestors().any(|a| matches!(a.kind(), "field_declaration" | "property_declaration"));
                if named && in_class && is_field {
                    found.push((*path, decl));
                }
            }
        }
        let [(path, decl)] = found.as_slice() else {
            return Err(self.escalate(at, format!("option definition `{definition}` is defined {} times in the selected files", found.len())));
        };
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
                    None => Err(self.escalate(at, format!("the default of `{definition}` ({path}:{}) is not a literal", f.line()))),
                }
            }
            _ => Err(self.escalate(at, format!("`{definition}` sets its default {} times", factories.len()))),
        }
    }

    /// Where the default's variable is passed to the sink call: position or name.
    fn pass_fact(&self, sink: &Found<'a>, from: &Found<'a>) -> Result<Option<Found<'a>>, Escalation> {
        let Some(FactValue::Text(variable)) = from.fact.values.get("variable") else { return Ok(None) };
        let args = arguments(sink.node);
        let hits: Vec<(usize, &(Option<String>, Node<'a>))> = args.iter().enumerate().filter(|(_, a)| bare(a.1).compact_text() == *variable).collect();
        let (index, (name, node)) = match hits.as_slice() {
            [] => return Ok(None),
            [one] => *one,
            [_, (_, second), ..] => return Err(self.escalate(second.1, format!("`{variable}` is passed {} times", hits.len()))),
        };
        if name.is_none() && args[..index].iter().any(|a| a.0.is_some()) {
            return Err(self.escalate(*node, "a positional argument after named ones".into()));
        }
        let mut values = BTreeMap::new();
        values.insert("variable".into(), FactValue::Text(variable.clone()));
        values.insert("index".into(), FactValue::Int(index as i64));
        if let Some(n) = name {
            values.insert("name".into(), FactValue::Text(n.clone()));
        }
        Ok(Some(self.fact(*node, values)))
    }

    /// `var V = P == true ? "A" : "B"` over the parameter the pass fact feeds.
    fn map_fact(&self, pass: &Found<'a>) -> Result<Option<Found<'a>>, Escalation> {
        let params: Vec<Node<'a>> = self
            .region
            .node
            .field_child("parameters")
            .map(|l| l.named_children().filter(|p| p.kind() == "parameter").collect())
            .unwrap_or_default();
        let by_name = match pass.fact.values.get("name") {
            Some(FactValue::Text(n)) => params.iter().find(|p| p.field_child("name").is_some_and(|x| x.text() == n)).copied(),
            _ => match pass.fact.values.get("index") {
                Some(FactValue::Int(i)) => params.get(*i as usize).copied(),
                _ => None,
            },
        };
        let Some(param) = by_name.and_then(|p| p.field_child("name")) else {
            return Err(self.escalate(self.region.node, "the service has no parameter where the value is passed".into()));
        };
        let p = param.text();
        let maps: Vec<(Node<'a>, Node<'a>, bool)> = self
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
            [_, (second, _, _), ..] => return Err(self.escalate(*second, format!("`{p}` is mapped {} times", maps.len()))),
        };
        // The parameter must have no other use: any would be another flow.
        if let Some(other) = self
            .region
            .node
            .descendants()
            .filter(|n| n.kind() == "identifier" && n.text() == p && *n != param && !condition.contains(*n))
            .find(|n| n.parent().is_none_or(|x| x.kind() != "name_colon"))
        {
            return Err(self.escalate(other, format!("`{p}` is also used at line {} (another flow)", other.line())));
        }
        let (Some(yes), Some(no)) = (
            conditional.field_child("consequence").and_then(string_content),
            conditional.field_child("alternative").and_then(string_content),
        ) else {
            return Err(self.escalate(conditional, format!("`{p}` is mapped to something other than two string literals")));
        };
        let (when_true, when_false) = if positive { (yes, no) } else { (no, yes) };
        let Some(holder) = conditional.parent().filter(|h| h.kind() == "variable_declarator").and_then(|h| h.field_child("name")) else {
            return Err(self.escalate(conditional, "the mapped value is not held by a local variable".into()));
        };
        let variable = holder.text().to_owned();
        if let Some((_, again, _)) = self.assignments().iter().find(|(v, n, _)| *v == variable && *n != holder) {
            return Err(self.escalate(*again, format!("`{variable}` is assigned again at line {}", again.line())));
        }
        let mut values = BTreeMap::new();
        values.insert("parameter".into(), FactValue::Text(p.to_owned()));
        values.insert("variable".into(), FactValue::Text(variable));
        values.insert("when_true".into(), FactValue::Text(when_true));
        values.insert("when_false".into(), FactValue::Text(when_false));
        Ok(Some(self.fact(conditional, values)))
    }

    /// The one member initializer `FIELD = …` of the region and what it receives.
    fn field_fact(&self, field: &str, wrap: Option<&str>, from: Option<&Found<'a>>) -> Result<Option<Found<'a>>, Escalation> {
        let inits: Vec<Node<'a>> = self
            .region
            .node
            .descendants()
            .filter(|n| n.kind() == "assignment_expression" && n.parent().is_some_and(|p| p.kind() == "initializer_expression"))
            .filter(|n| n.field_child("left").is_some_and(|l| l.text() == field))
            .collect();
        let init = match inits.as_slice() {
            [] => return Ok(None),
            [one] => *one,
            [_, second, ..] => return Err(self.escalate(*second, format!("`{field}` is initialized {} times", inits.len()))),
        };
        let Some(mut value) = init.field_child("right").map(bare) else { return Ok(None) };
        if let Some(wrap) = wrap {
            let nested = value
                .named_children()
                .find(|c| c.kind() == "initializer_expression")
                .and_then(|i| {
                    i.named_children()
                        .filter(|a| a.kind() == "assignment_expression")
                        .find(|a| a.field_child("left").is_some_and(|l| l.text() == wrap))
                })
                .and_then(|a| a.field_child("right"));
            match nested {
                Some(v) => value = bare(v),
                None => return Err(self.escalate(init, format!("`{field}` is not initialized through `{wrap}`"))),
            }
        }
        let variable = match from.and_then(|f| f.fact.values.get("variable")) {
            Some(FactValue::Text(v)) => v.clone(),
            _ => String::new(),
        };
        let mut values = BTreeMap::new();
        values.insert("field".into(), FactValue::Text(field.to_owned()));
        if !variable.is_empty() && value.compact_text() == variable {
            values.insert("source".into(), FactValue::Text("argument".into()));
            values.insert("variable".into(), FactValue::Text(variable));
        } else if let Some(lit) = literal(value) {
            values.insert("source".into(), FactValue::Text("literal".into()));
            values.insert("literal".into(), lit);
        } else if from.is_none() {
            // Nothing upstream was found: the field states nothing the rules could use,
            // and the missing wiring is reported by the facts that imply it.
            return Ok(None);
        } else {
            return Err(self.escalate(value, format!("`{field}` receives `{}`, neither the mapped value nor a literal", value.compact_text())));
        }
        Ok(Some(self.fact(init, values)))
    }

    /// The one `"key": "value"` pair inside the region's string literals.
    fn key_fact(&self, key: &str) -> Result<Option<Found<'a>>, Escalation> {
        let mut hits = Vec::new();
        for node in self.region.node.descendants() {
            let Some(content) = string_content(node) else { continue };
            for value in key_values(&content, key) {
                hits.push((node, value));
            }
        }
        match hits.as_slice() {
            [] => Ok(None),
            [(node, value)] => {
                let mut values = BTreeMap::new();
                values.insert("key".into(), FactValue::Text(key.to_owned()));
                values.insert("value".into(), FactValue::Text(value.clone()));
                Ok(Some(self.fact(*node, values)))
            }
            [_, (second, _), ..] => Err(self.escalate(*second, format!("`\"{key}\"` has {} string values in the region's literals", hits.len()))),
        }
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

/// The string values of `"key": "value"` pairs in a text.
fn key_values(text: &str, key: &str) -> Vec<String> {
    let needle = format!("\"{key}\"");
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(&needle) {
        rest = &rest[i + needle.len()..];
        let after = rest.trim_start();
        let Some(after) = after.strip_prefix(':') else { continue };
        let after = after.trim_start();
        if let Some(value) = after.strip_prefix('"').and_then(|v| v.find('"').map(|end| &v[..end])) {
            out.push(value.to_owned());
        }
    }
    out
}
