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
//!
//! Facts are only as good as what they leave out, so the frontend also
//! checks what the facts assume: the build files decide what compiles
//! (`project`), nothing in the closure runs or rebinds names unseen
//! (`program`), trusted model types are plain data (`plain`), a value is held
//! unchanged from its fact to its sink (`held`), and templates are read as
//! strict JSON (`json`).

mod held;
mod json;
mod plain;
mod program;
mod project;

use std::collections::BTreeMap;

use crate::ir::SourceFile;
use crate::ir::{Escalation, EscalationCode, FactValue, Identity};
use crate::lang::{FactSite, Found, Frontend, Program, Region};
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
                class.is_none_or(|c| n.ancestors().find(|a| TYPES.contains(&a.kind())).and_then(|t| t.field_child("name")).is_some_and(|id| id.text() == c))
            })
            .collect()
    }

    fn calls<'a>(&self, region: &Region<'a>) -> Vec<(Node<'a>, Identity)> {
        region.node.descendants().filter_map(|n| implicit_or_call(n).map(|i| (n, i))).collect()
    }

    fn build_closure(&self, all: &[String], links: &[String], selected: &[String]) -> Result<Vec<String>, Escalation> {
        project::closure(all, links, selected)
    }

    /// A C# file can declare a partial class, an extension method or a type
    /// that changes what any region means: every file must parse.
    fn whole_program(&self) -> bool {
        true
    }

    fn is_build_file(&self, path: &str) -> bool {
        project::is_build_file(path)
    }

    fn check_build_file(&self, file: &SourceFile) -> Result<(), Escalation> {
        project::check(file)
    }

    fn check_program(&self, p: &Program<'_, '_>) -> Result<(), Escalation> {
        program::check(p.regions, p.calls, p.facts)
    }

    fn extract<'a>(&self, region: &Region<'a>, spec: &FactSpec, found: &BTreeMap<String, Found<'a>>) -> Result<Option<Found<'a>>, Escalation> {
        let cx = Cx { region, spec };
        match &spec.kind {
            FactKind::Call { callee, args, matching } => cx.call_fact(callee, args.as_deref(), *matching),
            FactKind::Default { argument, helpers, definition, inert } => cx.default_fact(argument, helpers, definition.as_deref(), inert.as_deref()),
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
            FactKind::Flow { from, sink, into } => match (found.get(from), found.get(sink)) {
                (Some(from), Some(sink)) => cx.flow_fact(from, sink, into.as_deref()),
                _ => Ok(None),
            },
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

/// The identity of anything in a region that runs code: an invocation, an
/// object creation (`new T`; a target-typed `new()` only where its type is
/// fixed by a call's parameter, a member initializer or a `return`), or a
/// `using` that disposes (never accepted: disposal runs code no call shows).
fn implicit_or_call(n: Node<'_>) -> Option<Identity> {
    match n.kind() {
        "invocation_expression" => Some(identity(n)),
        "object_creation_expression" => Some(Identity::Path(format!("new {}", n.field_child("type")?.compact_text()))),
        "implicit_object_creation_expression" => {
            let parent = n.parent()?;
            let fixed = matches!(parent.kind(), "argument" | "return_statement" | "arrow_expression_clause")
                || (parent.kind() == "assignment_expression" && parent.parent().is_some_and(|i| i.kind() == "initializer_expression"));
            Some(if fixed {
                Identity::Path("new()".into())
            } else {
                Identity::Unresolved(format!("`{}`: a target-typed creation whose type fcd cannot see", n.compact_text()))
            })
        }
        "using_statement" => Some(Identity::Unresolved("a `using` statement disposes its resource, running code no call shows".into())),
        "local_declaration_statement" if n.children().any(|c| c.text() == "using") => {
            Some(Identity::Unresolved("a `using` declaration disposes its resource, running code no call shows".into()))
        }
        _ => None,
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

/// The value of a string literal of any form, escapes decoded (`None` for an
/// escape fcd does not know).
fn string_content(n: Node<'_>) -> Option<String> {
    match n.kind() {
        "string_literal" => {
            let mut out = String::new();
            for p in n.named_children() {
                match p.kind() {
                    "string_literal_content" => out.push_str(p.text()),
                    "escape_sequence" => out.push(unescape(p.text())?),
                    _ => return None,
                }
            }
            Some(out)
        }
        "verbatim_string_literal" => Some(n.text().strip_prefix("@\"")?.strip_suffix('"')?.replace("\"\"", "\"")),
        "raw_string_literal" => Some(n.named_children().filter(|c| c.kind() == "raw_string_content").map(|c| c.text()).collect()),
        _ => None,
    }
}

/// One C# escape sequence (`\n`, `\u0041`, `\x41`, …) as the character it stands for.
fn unescape(e: &str) -> Option<char> {
    let body = e.strip_prefix('\\')?;
    let simple = match body {
        "'" => Some('\''),
        "\"" => Some('"'),
        "\\" => Some('\\'),
        "0" => Some('\0'),
        "a" => Some('\u{7}'),
        "b" => Some('\u{8}'),
        "e" => Some('\u{1b}'),
        "f" => Some('\u{c}'),
        "n" => Some('\n'),
        "r" => Some('\r'),
        "t" => Some('\t'),
        "v" => Some('\u{b}'),
        _ => None,
    };
    if simple.is_some() {
        return simple;
    }
    let hex = body.strip_prefix('u').or_else(|| body.strip_prefix('U')).or_else(|| body.strip_prefix('x'))?;
    char::from_u32(u32::from_str_radix(hex, 16).ok()?)
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
        _ => text.parse().ok().map(FactValue::Int).or_else(|| text.strip_prefix('"')?.strip_suffix('"').map(|s| FactValue::Text(s.to_owned()))),
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
        let mut calls: Vec<Node<'a>> = self.region.node.descendants().filter(|n| n.kind() == "invocation_expression" && identity(*n) == want).collect();
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
    fn default_fact(
        &self,
        argument: &str,
        helpers: &[(String, DefaultRule)],
        definition: Option<&str>,
        inert: Option<&[String]>,
    ) -> Result<Option<Found<'a>>, Escalation> {
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
        self.holder_returned(&variable, target)?;
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
            && let Some((v, where_)) = self.definition_default(definition, inert, call)?
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
    fn definition_default(&self, definition: &str, inert: Option<&[String]>, at: Node<'a>) -> Result<Option<(FactValue, String)>, Escalation> {
        let Some((class, field)) = definition.rsplit_once('.') else {
            return Err(self.escalate(at, format!("definition `{definition}` is not Class.Field")));
        };
        let mut found = Vec::new();
        for (path, syntax) in self.region.trees {
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
            return Err(self.escalate(at, format!("option definition `{definition}` is defined {} times in the selected files", found.len())));
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
                    None => Err(self.escalate(at, format!("the default of `{definition}` ({path}:{}) is not a literal", f.line()))),
                }
            }
            _ => Err(self.escalate(at, format!("`{definition}` sets its default {} times", factories.len()))),
        }
    }

    /// When the bound variable is a member of a local (`options.X`), that local
    /// is what the region returns, it holds a plain model type (the region's
    /// return type), and nothing else in the region writes `options.X`.
    fn holder_returned(&self, variable: &str, target: Node<'a>) -> Result<(), Escalation> {
        let Some((root, member)) = variable.split_once('.') else { return Ok(()) };
        let node = self.region.node;
        let declared: Vec<Node<'a>> = held::occurrences(node, root).into_iter().filter(|o| held::is_declared_name(*o)).collect();
        if declared.len() != 1 {
            return Err(self.escalate(target, format!("`{root}`, which holds `{variable}`, is not one local of the region ({} declarations)", declared.len())));
        }
        let returns_root = |o: Node<'a>| o.parent().is_some_and(|p| p.kind() == "return_statement");
        let allowed = |o: Node<'a>| target.contains(o) || declared.contains(&o) || returns_root(o);
        if let Some((at, why)) = held::first_write(node, root, Some(member), &allowed) {
            return Err(self.escalate(at, why));
        }
        if let Some(r) =
            node.descendants().find(|r| r.kind() == "return_statement" && r.named_children().find(|c| c.kind() != "comment").is_none_or(|e| e.text() != root))
        {
            return Err(self.escalate(r, format!("the region returns something other than `{root}` at line {}", r.line())));
        }
        if let Some(ty) = node.field_child("returns") {
            plain::check(self.region.trees, &plain::simple_name(ty), &format!("holds `{variable}`"))?;
        }
        Ok(())
    }

    /// The option definition itself: created as its declared type, with only
    /// inert members (and the default) in its initializer.
    fn definition_shape(&self, definition: &str, path: &str, decl: Node<'_>, inert: Option<&[String]>, at: Node<'a>) -> Result<(), Escalation> {
        let Some(value) = decl.named_children().rfind(|c| Some(*c) != decl.field_child("name")) else {
            return Err(self.escalate(at, format!("`{definition}` ({path}:{}) has no initializer", decl.line())));
        };
        let declared = decl.parent().and_then(|d| d.field_child("type")).map(|t| t.compact_text()).unwrap_or_default();
        let created_as_declared = match value.kind() {
            "implicit_object_creation_expression" => true,
            "object_creation_expression" => value.field_child("type").is_some_and(|t| t.compact_text() == declared),
            _ => false,
        };
        if !created_as_declared {
            return Err(self.escalate(at, format!("`{definition}` ({path}:{}) is not created as its declared type `{declared}`", value.line())));
        }
        let Some(inert) = inert else { return Ok(()) };
        let members = value.named_children().filter(|c| c.kind() == "initializer_expression").flat_map(|i| i.named_children().collect::<Vec<_>>());
        for m in members.filter(|m| m.kind() != "comment") {
            let name = m.field_child("left").filter(|_| m.kind() == "assignment_expression").map(|l| l.text()).unwrap_or("");
            if !(inert.iter().any(|i| i == name) || matches!(name, "DefaultValueFactory" | "DefaultValue")) {
                return Err(self.escalate(
                    at,
                    format!("`{definition}` sets `{}` ({path}:{}), which is not one of the members the profile lists as inert", m.compact_text(), m.line()),
                ));
            }
        }
        Ok(())
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
        self.held_until_sink(variable, from)?;
        let mut values = BTreeMap::new();
        values.insert("variable".into(), FactValue::Text(variable.clone()));
        values.insert("index".into(), FactValue::Int(index as i64));
        if let Some(n) = name {
            values.insert("name".into(), FactValue::Text(n.clone()));
        }
        Ok(Some(self.fact(*node, values)))
    }

    /// In the sink's region, the passed value's holder (`options` of
    /// `options.X`) is bound once from the method that bound the option, and
    /// nothing in the region can change `options.X` (or the variable itself).
    fn held_until_sink(&self, variable: &str, from: &Found<'a>) -> Result<(), Escalation> {
        let node = self.region.node;
        let (root, member) = match variable.split_once('.') {
            Some((r, m)) => (r, Some(m)),
            None => (variable, None),
        };
        let same_region = node.contains(from.node);
        let mut allowed: Vec<Node<'a>> = Vec::new();
        if same_region {
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
                return Err(self.escalate(
                    node,
                    format!("`{root}` is not bound once in this region from `{}`, the method that binds `{variable}`", binder.unwrap_or("?")),
                ));
            }
            allowed.extend(decls);
        }
        match held::first_write(node, root, member, &|o| allowed.contains(&o)) {
            Some((at, why)) => Err(self.escalate(at, format!("{why}: `{variable}` is not held unchanged until the sink"))),
            None => Ok(()),
        }
    }

    /// `var V = P == true ? "A" : "B"` over the parameter the pass fact feeds.
    fn map_fact(&self, pass: &Found<'a>) -> Result<Option<Found<'a>>, Escalation> {
        let params: Vec<Node<'a>> =
            self.region.node.field_child("parameters").map(|l| l.named_children().filter(|p| p.kind() == "parameter").collect()).unwrap_or_default();
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
        let (Some(yes), Some(no)) =
            (conditional.field_child("consequence").and_then(string_content), conditional.field_child("alternative").and_then(string_content))
        else {
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
    /// `FIELD` is never assigned outside an initializer, and the types it is
    /// set on (the created object, the wrapped member's type) are plain data.
    fn field_fact(&self, field: &str, wrap: Option<&str>, from: Option<&Found<'a>>) -> Result<Option<Found<'a>>, Escalation> {
        let inits: Vec<Node<'a>> = self
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
            return Err(self.escalate(*later, format!("`{field}` is assigned at line {} outside its initializer", later.line())));
        }
        let init = match inits.as_slice() {
            [] => return Ok(None),
            [one] => *one,
            [_, second, ..] => return Err(self.escalate(*second, format!("`{field}` is initialized {} times", inits.len()))),
        };
        let Some(mut value) = init.field_child("right").map(bare) else { return Ok(None) };
        let owner = self.created_type(init)?;
        plain::check(self.region.trees, &owner, &format!("`{field}` is set on it"))?;
        if let Some(wrap) = wrap {
            let member_type = self.property_type(&owner, field);
            let explicit = value.field_child("type").filter(|_| value.kind() == "object_creation_expression").map(plain::simple_name);
            for ty in [member_type, explicit].into_iter().flatten() {
                plain::check(self.region.trees, &ty, &format!("`{field}.{wrap}` is set on it"))?;
            }
            let nested = value
                .named_children()
                .find(|c| c.kind() == "initializer_expression")
                .and_then(|i| {
                    i.named_children().filter(|a| a.kind() == "assignment_expression").find(|a| a.field_child("left").is_some_and(|l| l.text() == wrap))
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

    /// The type of the object whose initializer holds `init`: `new T { … }`, or
    /// `T x = new() { … }`; a type fcd cannot see escalates.
    fn created_type(&self, init: Node<'a>) -> Result<String, Escalation> {
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
            None => Err(self.escalate(init, "the object holding the field has a type fcd cannot see".into())),
        }
    }

    /// The declared type of property `name` of the closure type `owner`, if the closure declares it.
    fn property_type(&self, owner: &str, name: &str) -> Option<String> {
        plain::declarations(self.region.trees, owner).into_iter().find_map(|(_, decl)| {
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
    fn key_fact(&self, key: &str) -> Result<Option<Found<'a>>, Escalation> {
        let literal = self.returned_literal()?;
        let Some(text) = string_content(literal) else {
            return Err(self.escalate(literal, "the returned template is not a plain, verbatim or raw string literal (or has an unknown escape)".into()));
        };
        let template = json::parse(&text).map_err(|e| self.escalate(literal, format!("the returned template is not strict JSON: {e}")))?;
        let mut under = Vec::new();
        template.values_of(key, &mut under);
        let scalars: Vec<&json::Json> = under.into_iter().filter(|v| !matches!(v, json::Json::Object(_))).collect();
        match scalars.as_slice() {
            [] => Ok(None),
            [json::Json::Text(value)] => {
                let mut values = BTreeMap::new();
                values.insert("key".into(), FactValue::Text(key.to_owned()));
                values.insert("value".into(), FactValue::Text(value.clone()));
                Ok(Some(self.fact(literal, values)))
            }
            [other] => Err(self.escalate(literal, format!("`\"{key}\"` holds {other:?}, not a string"))),
            many => Err(self.escalate(literal, format!("`\"{key}\"` has {} values in the template", many.len()))),
        }
    }

    /// The string literal a region's body is made of: `=> LIT` or `{ return LIT; }`.
    fn returned_literal(&self) -> Result<Node<'a>, Escalation> {
        let node = self.region.node;
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
            Some(e) => Err(self.escalate(e, format!("the region returns a {} at line {}, not one string literal", e.kind(), e.line()))),
            None => Err(self.escalate(node, "the region is not one `return` of a string literal".into())),
        }
    }

    /// The value behind `from` (the object a field fact initializes, the
    /// result of a call fact) reaches the call fact `sink`, through `into`.
    fn flow_fact(&self, from: &Found<'a>, sink: &Found<'a>, into: Option<&str>) -> Result<Option<Found<'a>>, Escalation> {
        let start = if from.node.kind() == "assignment_expression" { from.node.parent().and_then(|i| i.parent()).unwrap_or(from.node) } else { from.node };
        let node = self.region.node;
        if !node.contains(start) || !node.contains(sink.node) {
            return Err(self.escalate(node, format!("`{}` and `{}` are not both in region `{}`", from.fact.name, sink.fact.name, self.region.name)));
        }
        let path = held::flow(node, start, sink.node, into)
            .map_err(|(at, why)| self.escalate(at, format!("`{}` does not reach `{}`: {why}", from.fact.name, sink.fact.name)))?;
        if let Some(into) = into
            && !path.passed_into
        {
            return Err(self.escalate(start, format!("`{}` reaches `{}` but not through `{into}`", from.fact.name, sink.fact.name)));
        }
        let mut values = BTreeMap::new();
        values.insert("through".into(), FactValue::List(path.locals.into_iter().map(FactValue::Text).collect()));
        if let Some(into) = into {
            values.insert("into".into(), FactValue::Text(into.to_owned()));
        }
        Ok(Some(self.fact(start, values)))
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
