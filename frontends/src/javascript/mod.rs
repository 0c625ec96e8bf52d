//! The JavaScript/TypeScript frontend (tree-sitter-javascript, tree-sitter-typescript).
//!
//! One frontend reads both an npm package's bundled, non-minified `dist/*.js`
//! and the TypeScript source of a git tag: the node kinds that matter are
//! shared, and TypeScript-only wrappers (`x as T`, `x!`, `satisfies`) are
//! looked through. Regions are function declarations (or functions bound to a
//! `const`) and module-level variables holding data tables. Callee identities
//! are dotted tokens as written, `a?.b` read as `a.b`, `m[k].f` as `m[].f`;
//! calling an indexed value, a call's result or `eval` is dynamic.

mod bindings;

use std::collections::BTreeMap;

use crate::ir::{Escalation, EscalationCode, FactValue, Identity};
use crate::lang::{FactSite, Found, Frontend, Region};
use crate::spec::{ArgPattern, ArgShape, FactKind, FactSpec, RegionKind};
use crate::ts::{Node, Syntax};

use bindings::Bindings;

/// The JavaScript/TypeScript frontend.
pub struct JavaScript;

const FUNCTIONS: &[&str] = &["function_declaration", "generator_function_declaration", "function_expression", "arrow_function", "function", "method_definition"];

impl Frontend for JavaScript {
    fn find_regions<'a>(&self, syntax: &'a Syntax, kind: &RegionKind) -> Vec<Node<'a>> {
        match kind {
            RegionKind::Function(name) => syntax
                .root()
                .descendants()
                .filter(|n| {
                    let named = |f: Node<'_>| f.field_child("name").is_some_and(|id| id.text() == name);
                    match n.kind() {
                        "function_declaration" | "generator_function_declaration" => named(*n),
                        // `const name = function () {…}` or `= () => {…}`
                        "variable_declarator" => named(*n) && n.field_child("value").is_some_and(|v| FUNCTIONS.contains(&v.kind())),
                        _ => false,
                    }
                })
                .collect(),
            RegionKind::Variable(name) => syntax
                .root()
                .descendants()
                .filter(|n| n.kind() == "variable_declarator" && n.field_child("name").is_some_and(|id| id.text() == name))
                .filter(|n| n.ancestors().all(|a| !FUNCTIONS.contains(&a.kind()) && a.kind() != "class_body"))
                .collect(),
            RegionKind::Literal(_) | RegionKind::Route(_) => Vec::new(),
        }
    }

    fn calls<'a>(&self, region: &Region<'a>) -> Vec<(Node<'a>, Identity)> {
        region.node.descendants().filter(|n| n.kind() == "call_expression").map(|c| (c, identity(c))).collect()
    }

    fn extract<'a>(
        &self,
        region: &Region<'a>,
        spec: &FactSpec,
        found: &BTreeMap<String, Found<'a>>,
    ) -> Result<Option<Found<'a>>, Escalation> {
        let bindings = Bindings::of(region.node);
        let cx = Cx { site: FactSite { region, spec }, bindings: &bindings };
        match &spec.kind {
            FactKind::Call { callee, args, matching } => cx.call_fact(callee, args.as_deref(), *matching),
            FactKind::Guard { callee, receiver, args, before, negated, returns } => match found.get(before) {
                Some(sink) => cx.guard_fact(callee, receiver.as_ref(), args, *negated, returns.as_deref(), sink.node),
                None => Ok(None),
            },
            FactKind::Table { row, member } => cx.table_fact(row, member),
            FactKind::Exit { returns, conditions } => cx.exit_fact(returns, conditions),
            other => Err(Escalation::new(
                EscalationCode::ShapeMismatch,
                format!("fact `{}`: the JavaScript frontend does not extract `{}` facts", spec.name, other.name()),
                Some(region.anchor(region.node)),
            )),
        }
    }
}

/// An expression without parentheses, `await`, and TypeScript's `as`, `!` and `satisfies`.
fn bare(mut n: Node<'_>) -> Node<'_> {
    while matches!(n.kind(), "parenthesized_expression" | "await_expression" | "as_expression" | "non_null_expression" | "satisfies_expression") {
        match n.named_children().find(|c| c.kind() != "comment") {
            Some(i) => n = i,
            None => break,
        }
    }
    n
}

/// A dotted token for an expression, or `None` when it does not name something.
fn dotted(n: Node<'_>) -> Option<String> {
    let n = bare(n);
    match n.kind() {
        "identifier" | "property_identifier" | "this" | "super" | "private_property_identifier" => Some(n.text().to_owned()),
        "member_expression" => Some(format!("{}.{}", dotted(n.field_child("object")?)?, n.field_child("property")?.text())),
        "subscript_expression" => Some(format!("{}[]", dotted(n.field_child("object")?)?)),
        "call_expression" => Some(format!("{}()", dotted(n.field_child("function")?)?)),
        _ => None,
    }
}

/// Builtins whose call reaches code chosen at run time.
const DYNAMIC: &[&str] = &["eval", "Function", "setTimeout", "setInterval"];

/// The identity of a call's callee.
fn identity(call: Node<'_>) -> Identity {
    let Some(function) = call.field_child("function") else { return Identity::Dynamic("a call without a callee".into()) };
    let f = bare(function);
    match f.kind() {
        "subscript_expression" => Identity::Dynamic(format!("calls an indexed value (`{}`)", f.compact_text())),
        "call_expression" => Identity::Dynamic(format!("calls the result of `{}`", f.compact_text())),
        "function_expression" | "arrow_function" | "function" => Identity::Path("function()".into()),
        "identifier" | "member_expression" => match dotted(f) {
            Some(path) if DYNAMIC.contains(&path.as_str()) => Identity::Dynamic(path),
            Some(path) => Identity::Path(path),
            None => Identity::Unresolved(f.compact_text()),
        },
        other => Identity::Dynamic(format!("calls a {other} (`{}`)", f.compact_text())),
    }
}

/// A call's arguments, comments left out.
fn arguments(call: Node<'_>) -> Vec<Node<'_>> {
    call.items("arguments")
}

/// The content of a plain string literal (no substitutions, no escapes).
fn string_content(n: Node<'_>) -> Option<String> {
    let n = bare(n);
    match n.kind() {
        "string" => {
            let parts: Vec<Node<'_>> = n.named_children().collect();
            if parts.iter().any(|p| p.kind() != "string_fragment") {
                return None;
            }
            Some(parts.iter().map(|p| p.text()).collect())
        }
        "template_string" if n.named_children().all(|c| c.kind() == "string_fragment") => {
            Some(n.named_children().map(|c| c.text()).collect())
        }
        _ => None,
    }
}

struct Cx<'r, 'a> {
    site: FactSite<'r, 'a>,
    bindings: &'r Bindings,
}

impl<'a> Cx<'_, 'a> {
    fn arg_matches(&self, arg: Node<'a>, pattern: &ArgPattern) -> bool {
        let e = bare(arg);
        match &pattern.shape {
            // Tool-argument flow is read by the Python frontend only so far.
            ArgShape::Arg(_) => false,
            ArgShape::Any => arg.kind() != "spread_element",
            ArgShape::Param(name) => e.kind() == "identifier" && e.text() == name && self.bindings.is_param(name) && self.bindings.count(name) == 0,
            ArgShape::Var(name) => e.kind() == "identifier" && e.text() == name && self.bindings.count(name) == 1,
            ArgShape::Ref(path) => dotted(e).as_deref() == Some(path.as_str()),
            ArgShape::Str(text) => string_content(e).as_deref() == Some(text.as_str()),
            ArgShape::Format(_) => false,
        }
    }

    fn call_fact(&self, callee: &str, patterns: Option<&[ArgPattern]>, matching: bool) -> Result<Option<Found<'a>>, Escalation> {
        let want = Identity::Path(callee.to_owned());
        let mut calls: Vec<Node<'a>> =
            self.site.region.node.descendants().filter(|n| n.kind() == "call_expression" && identity(*n) == want).collect();
        if let (true, Some(p)) = (matching, patterns) {
            calls.retain(|c| crate::lang::align(&arguments(*c), p, &|a, q| self.arg_matches(*a, q)).is_some());
        }
        let Some(call) = self.site.one_call(&calls, callee)? else { return Ok(None) };
        let mut values = BTreeMap::new();
        values.insert("callee".into(), FactValue::Text(callee.to_owned()));
        if let Some(patterns) = patterns {
            let args = arguments(call);
            if let Some(spread) = args.iter().find(|a| a.kind() == "spread_element") {
                return Err(self.site.mismatch(*spread, "a spread argument is outside the profile's shape".into()));
            }
            for a in &args {
                let name = bare(*a).text();
                let followed = patterns.iter().any(|p| matches!(&p.shape, ArgShape::Var(n) | ArgShape::Param(n) if n == name));
                if followed && bare(*a).kind() == "identifier" && self.bindings.count(name) > 1 {
                    return Err(self.site.mismatch(*a, format!("`{name}` is assigned more than once, so the value reaching the call is not the one the profile follows")));
                }
            }
            let Some(matched) = crate::lang::align(&args, patterns, &|a, p| self.arg_matches(*a, p)) else {
                let got: Vec<String> = args.iter().map(|a| a.compact_text()).collect();
                let want: Vec<String> = patterns.iter().map(ToString::to_string).collect();
                return Err(self.site.mismatch(call, format!("arguments ({}) do not match the profile's shape [{}]", got.join(", "), want.join(", "))));
            };
            values.insert("args".into(), FactValue::List(matched.into_iter().map(FactValue::Text).collect()));
        }
        Ok(Some(self.site.fact(call, values)))
    }

    /// An `if` that runs before the sink on every path to it (an earlier
    /// statement of the sink's block or of a block around it, in the same
    /// function), tests the callee (negated when asked), and exits on every path.
    fn guard_fact(
        &self,
        callee: &str,
        receiver: Option<&ArgPattern>,
        args: &[ArgPattern],
        negated: bool,
        returns: Option<&str>,
        sink: Node<'a>,
    ) -> Result<Option<Found<'a>>, Escalation> {
        let function = sink.ancestors().find(|a| FUNCTIONS.contains(&a.kind()));
        let mut inner = sink;
        for block in sink.ancestors() {
            if Some(block) == function || block == self.site.region.node {
                break;
            }
            if block.kind() != "statement_block" {
                inner = block;
                continue;
            }
            let statements: Vec<Node<'a>> = block.named_children().filter(|s| s.kind() != "comment").collect();
            let Some(at) = statements.iter().position(|s| s.contains(inner)) else { break };
            for stmt in statements[..at].iter().rev() {
                if stmt.kind() == "if_statement"
                    && let Some(condition) = stmt.field_child("condition")
                    && let Some(others) = self.test(condition, callee, receiver, args, negated)
                {
                    // The reviewed test is there, so its body must stop the call: one
                    // that falls through to the sink is a shape, not a missing guard.
                    let Some(exit) = stmt.field_child("consequence").and_then(|c| exits(c, returns)) else {
                        let what = returns.map(|r| format!(" with {r}")).unwrap_or_default();
                        return Err(self.site.mismatch(*stmt, format!("the guard does not return{what} on every path: the call falls through to the sink")));
                    };
                    let mut values = BTreeMap::new();
                    values.insert("test".into(), FactValue::Text(format!("{}{callee}", if negated { "!" } else { "" })));
                    values.insert("exit".into(), FactValue::Text(exit.into()));
                    values.insert("also_requires".into(), FactValue::List(others.into_iter().map(FactValue::Text).collect()));
                    if let Some(r) = returns {
                        values.insert("returns".into(), FactValue::Text(r.into()));
                    }
                    return Ok(Some(self.site.fact(*stmt, values)));
                }
            }
            // A statement that always exits before the sink would make the sink dead: no guard then.
            if statements[..at].iter().any(|s| exits(*s, None).is_some()) {
                return Ok(None);
            }
            inner = block;
        }
        Ok(None)
    }

    /// Whether the condition holds the test (alone, or joined by `&&` / `||`);
    /// returns the texts of the other `&&` conjuncts the guard also needs.
    fn test(&self, condition: Node<'a>, callee: &str, receiver: Option<&ArgPattern>, args: &[ArgPattern], negated: bool) -> Option<Vec<String>> {
        let c = bare(condition);
        match c.kind() {
            "binary_expression" => {
                let op = c.field_child("operator").map(|o| o.text()).unwrap_or_default();
                let (left, right) = (c.field_child("left")?, c.field_child("right")?);
                match op {
                    "&&" => {
                        if let Some(mut others) = self.test(left, callee, receiver, args, negated) {
                            others.push(right.compact_text());
                            return Some(others);
                        }
                        let mut others = self.test(right, callee, receiver, args, negated)?;
                        others.insert(0, left.compact_text());
                        Some(others)
                    }
                    "||" => self.test(left, callee, receiver, args, negated).or_else(|| self.test(right, callee, receiver, args, negated)),
                    _ => None,
                }
            }
            "unary_expression" if negated && c.field_child("operator").is_some_and(|o| o.text() == "!") => {
                self.test(c.field_child("argument")?, callee, receiver, args, false)
            }
            "call_expression" if !negated => {
                if identity(c) != Identity::Path(callee.to_owned()) {
                    return None;
                }
                let object = c.field_child("function").map(bare).and_then(|f| f.field_child("object"));
                let receiver_ok = match (receiver, object) {
                    (Some(r), Some(o)) => self.arg_matches(o, r),
                    (None, _) => true,
                    (Some(_), None) => false,
                };
                (receiver_ok && crate::lang::align(&arguments(c), args, &|a, p| self.arg_matches(*a, p)).is_some()).then(Vec::new)
            }
            _ => None,
        }
    }

    /// The array of strings under `row` in the region's object literal.
    fn table_fact(&self, row: &str, member: &str) -> Result<Option<Found<'a>>, Escalation> {
        let Some(value) = self.site.region.node.field_child("value").map(bare) else {
            return Err(self.site.mismatch(self.site.region.node, "the table has no value".into()));
        };
        if value.kind() != "object" {
            return Err(self.site.mismatch(value, format!("the table is `{}`, not an object literal", value.kind())));
        }
        let pairs: Vec<Node<'a>> = value
            .named_children()
            .filter(|p| p.kind() == "pair")
            .filter(|p| p.field_child("key").is_some_and(|k| k.text().trim_matches(['"', '\'']) == row))
            .collect();
        let pair = match pairs.as_slice() {
            [] => return Ok(None),
            [one] => *one,
            [_, second, ..] => return Err(self.site.mismatch(*second, format!("row `{row}` appears {} times", pairs.len()))),
        };
        if value.named_children().any(|p| p.kind() == "spread_element") {
            return Err(self.site.mismatch(value, "a spread in the table makes its rows unknowable".into()));
        }
        let Some(array) = pair.field_child("value").map(bare).filter(|a| a.kind() == "array") else {
            return Err(self.site.mismatch(pair, format!("row `{row}` is not an array literal")));
        };
        let mut members = Vec::new();
        for element in array.named_children().filter(|e| e.kind() != "comment") {
            match string_content(element) {
                Some(s) => members.push(s),
                None => return Err(self.site.mismatch(element, format!("row `{row}` holds `{}`, not a string literal", element.compact_text()))),
            }
        }
        let mut values = BTreeMap::new();
        values.insert("row".into(), FactValue::Text(row.to_owned()));
        values.insert("member".into(), FactValue::Text(member.to_owned()));
        values.insert("present".into(), FactValue::Bool(members.iter().any(|m| m == member)));
        values.insert("members".into(), FactValue::List(members.into_iter().map(FactValue::Text).collect()));
        Ok(Some(self.site.fact(pair, values)))
    }

    /// A `return RETURNS` nested only in `if` consequences whose conditions
    /// name every one of `conditions` as string literals.
    fn exit_fact(&self, returns: &str, conditions: &[String]) -> Result<Option<Found<'a>>, Escalation> {
        for ret in self.site.region.node.descendants().filter(|n| n.kind() == "return_statement") {
            let Some(value) = ret.named_children().find(|c| c.kind() != "comment") else { continue };
            if value.compact_text() != returns {
                continue;
            }
            let mut strings = Vec::new();
            let mut reachable = true;
            let mut node = ret;
            for a in ret.ancestors() {
                if a == self.site.region.node || FUNCTIONS.contains(&a.kind()) {
                    break;
                }
                if a.kind() == "if_statement" {
                    let Some(consequence) = a.field_child("consequence") else { break };
                    if !consequence.contains(node) {
                        // In an `else` branch the conditions are negated: not the shape.
                        reachable = false;
                        break;
                    }
                    let Some(cond) = a.field_child("condition") else { break };
                    let literal_false = matches!(bare(cond).kind(), "false" | "null" | "undefined") || bare(cond).text() == "0";
                    if literal_false {
                        reachable = false;
                        break;
                    }
                    strings.extend(cond.descendants().filter_map(string_content));
                }
                node = a;
            }
            if reachable && conditions.iter().all(|c| strings.contains(c)) {
                let mut values = BTreeMap::new();
                values.insert("returns".into(), FactValue::Text(returns.to_owned()));
                values.insert("conditions".into(), FactValue::List(conditions.iter().cloned().map(FactValue::Text).collect()));
                return Ok(Some(self.site.fact(ret, values)));
            }
        }
        Ok(None)
    }
}

/// How a statement leaves its function on every path ("return" or "throw"),
/// if it does; with `returns`, a return must carry that string literal.
fn exits(stmt: Node<'_>, returns: Option<&str>) -> Option<&'static str> {
    match stmt.kind() {
        "return_statement" => match returns {
            Some(r) if !stmt.descendants().any(|d| string_content(d).as_deref() == Some(r)) => None,
            _ => Some("return"),
        },
        "throw_statement" => returns.is_none().then_some("throw"),
        "statement_block" => stmt.named_children().filter(|s| s.kind() != "comment").find_map(|s| exits(s, returns)),
        "if_statement" => {
            let yes = exits(stmt.field_child("consequence")?, returns)?;
            let alternative = stmt.field_child("alternative")?;
            let no = alternative.named_children().find(|c| c.kind() != "comment").and_then(|b| exits(b, returns))?;
            Some(if yes == no { yes } else { "return or throw" })
        }
        _ => None,
    }
}
