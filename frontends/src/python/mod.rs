//! The Python frontend (tree-sitter-python).
//!
//! Regions are function definitions by name. Callees resolve to dotted paths
//! through imports, annotations and local aliases ([`scope`]). Facts are read
//! from syntax only: comments are separate nodes and string contents are
//! leaves, so neither can ever produce a callee, a guard or a sink.

mod route;
mod scope;
mod surroundings;

use std::collections::BTreeMap;

use crate::ir::{Escalation, EscalationCode, FactValue, Identity};
use crate::lang::{FactSite, Found, Frontend, Region};
use crate::spec::{ArgPattern, ArgShape, FactKind, FactSpec, RegionKind};
use crate::ts::{Node, Syntax};

use scope::{DYNAMIC_BUILTINS, Scope};

/// The Python frontend.
pub struct Python;

impl Frontend for Python {
    fn find_regions<'a>(&self, syntax: &'a Syntax, kind: &RegionKind) -> Vec<Node<'a>> {
        // Python handlers are definitions or routes; a literal region names no Python shape.
        let name = match kind {
            RegionKind::Function(name) => name,
            RegionKind::Route(tool) => return route::find(syntax, tool),
            RegionKind::Literal(_) | RegionKind::Variable(_) => return Vec::new(),
        };
        syntax
            .root()
            .descendants()
            .filter(|n| n.kind() == "function_definition")
            .filter(|n| n.field_child("name").is_some_and(|id| id.text() == name))
            .collect()
    }

    fn calls<'a>(&self, region: &Region<'a>) -> Vec<(Node<'a>, Identity)> {
        let scope = region_scope(region);
        // Decorators of the region's own definition run when the module loads
        // and replace what callers get: they are call sites of the region.
        let own = region.node.parent().filter(|p| p.kind() == "decorated_definition").into_iter();
        let decorators = own.flat_map(|d| d.named_children().filter(|c| c.kind() == "decorator").collect::<Vec<_>>());
        decorators
            .chain(region.node.descendants())
            .chain(route::shared(region.node, &region.env.tool))
            .filter_map(|n| implicit_or_call(&scope, n, region).map(|id| (n, id)))
            .collect()
    }

    fn check_region(&self, region: &Region<'_>) -> Result<(), Escalation> {
        route::check(region)?;
        surroundings::check(region)
    }

    fn extract<'a>(&self, region: &Region<'a>, spec: &FactSpec, found: &BTreeMap<String, Found<'a>>) -> Result<Option<Found<'a>>, Escalation> {
        let scope = region_scope(region);
        let cx = Cx { region, scope: &scope, spec };
        match &spec.kind {
            FactKind::Call { callee, args, matching } => cx.call_fact(callee, args.as_deref(), *matching),
            FactKind::Guard { callee, receiver, args, before, negated, .. } => match found.get(before) {
                Some(sink) => cx.guard_fact(callee, receiver.as_ref(), args, before, *negated, sink.node),
                // Without the node it guards, a guard states nothing.
                None => Ok(None),
            },
            other => Err(Escalation::new(
                EscalationCode::ShapeMismatch,
                format!("fact `{}`: the Python frontend does not extract `{}` facts", spec.name, other.name()),
                Some(region.anchor(region.node)),
            )),
        }
    }
}

fn region_scope<'a>(region: &Region<'a>) -> Scope<'a> {
    let root = region.node.ancestors().last().unwrap_or(region.node);
    Scope::new(root, route::function_of(region.node), region.file)
}

/// The identity of every construct that invokes code: a call, and the
/// implicit invocations Python makes for a decorator (`@path`), a context
/// manager (`with path`, its `__enter__` and `__exit__`) and an import inside
/// a function (`import module`, which runs the module).
fn implicit_or_call(scope: &Scope<'_>, n: Node<'_>, region: &Region<'_>) -> Option<Identity> {
    let named = |prefix: &str, expr: Option<Node<'_>>| match expr.and_then(|e| scope.resolve(e)) {
        Some(path) => Identity::Path(format!("{prefix}{path}")),
        None => Identity::Unresolved(format!("{prefix}{}", expr.map(|e| clip(e.text())).unwrap_or_default())),
    };
    match n.kind() {
        "call" => Some(reviewed_local(scope, n, region).unwrap_or_else(|| identity(scope, n))),
        "decorator" => Some(named("@", n.named_children().find(|c| c.kind() != "comment"))),
        "with_item" => {
            let value = n.field_child("value");
            let expr = match value {
                Some(v) if v.kind() == "as_pattern" => v.named_children().next(),
                other => other,
            };
            Some(named("with ", expr))
        }
        "import_statement" | "import_from_statement" => {
            let module = n.field_child("module_name").or_else(|| n.field_child("name"))?;
            Some(Identity::Path(format!("import {}", scope::compact(module.text()))))
        }
        _ => None,
    }
}

/// A call of a function or class the release itself defines is only as
/// reviewed as that definition: unless the profile makes it a region (with its
/// own inventory and facts), its body is unread code, and the call is unresolved.
fn reviewed_local(scope: &Scope<'_>, call: Node<'_>, region: &Region<'_>) -> Option<Identity> {
    let function = call.field_child("function").filter(|f| f.kind() == "identifier")?;
    let name = function.text();
    if !scope.is_module_definition(name) {
        return None;
    }
    let reviewed = region.env.reviewed.iter().any(|f| f == name);
    (!reviewed).then(|| Identity::Unresolved(format!("{name} (defined in the release, but not a region of the profile, so its body is unread)")))
}

/// The identity of a call's callee.
fn identity(scope: &Scope<'_>, call: Node<'_>) -> Identity {
    let Some(function) = call.field_child("function") else {
        return Identity::Dynamic(call.text().chars().take(60).collect());
    };
    match function.kind() {
        "identifier" | "attribute" => match scope.resolve(function) {
            Some(path) if DYNAMIC_BUILTINS.contains(&path.as_str()) => Identity::Dynamic(path),
            Some(path) => Identity::Path(path),
            None => Identity::Unresolved(function.text().split_whitespace().collect()),
        },
        // Calling the result of a call, a subscript, a lambda or anything else:
        // the callee is chosen at run time.
        "call" => Identity::Dynamic(format!("calls the result of `{}`", clip(function.text()))),
        other => Identity::Dynamic(format!("calls a {other} (`{}`)", clip(function.text()))),
    }
}

/// The first line of a text, at most 60 characters, for messages.
fn clip(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    let mut out: String = line.chars().take(60).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

/// Context of one fact extraction.
struct Cx<'r, 'a> {
    region: &'r Region<'a>,
    scope: &'r Scope<'a>,
    spec: &'r FactSpec,
}

impl<'a> Cx<'_, 'a> {
    fn site(&self) -> FactSite<'_, 'a> {
        FactSite { region: self.region, spec: self.spec }
    }

    fn escalate(&self, code: EscalationCode, node: Node<'_>, detail: String) -> Escalation {
        self.site().escalate(code, node, detail)
    }

    fn fact(&self, node: Node<'a>, values: BTreeMap<String, FactValue>) -> Found<'a> {
        self.site().fact(node, values)
    }

    /// Exactly one call to `callee`, with arguments of the profile's shape.
    fn call_fact(&self, callee: &str, patterns: Option<&[ArgPattern]>, matching: bool) -> Result<Option<Found<'a>>, Escalation> {
        let want = Identity::Path(callee.to_owned());
        let calls: Vec<Node<'a>> = self
            .region
            .node
            .descendants()
            .filter(|n| n.kind() == "call" && identity(self.scope, *n) == want)
            .filter(|n| !matching || patterns.is_none_or(|p| self.match_args(*n, p).is_ok()))
            .collect();
        let Some(call) = self.site().one_call(&calls, callee)? else { return Ok(None) };
        let mut values = BTreeMap::new();
        values.insert("callee".into(), FactValue::Text(callee.to_owned()));
        if let Some(patterns) = patterns {
            let args = self.match_args(call, patterns)?;
            values.insert("args".into(), FactValue::List(args.into_iter().map(FactValue::Text).collect()));
        }
        Ok(Some(self.fact(call, values)))
    }

    /// Matches a call's arguments against the patterns; returns the patterns
    /// that matched, or escalates naming the argument outside the shape.
    fn match_args(&self, call: Node<'a>, patterns: &[ArgPattern]) -> Result<Vec<String>, Escalation> {
        let Some(list) = call.field_child("arguments") else {
            return Err(self.escalate(EscalationCode::ShapeMismatch, call, "the call has no argument list".into()));
        };
        if list.kind() != "argument_list" {
            return Err(self.escalate(EscalationCode::ShapeMismatch, list, "a generator argument is outside the profile's shape".into()));
        }
        let args: Vec<Node<'a>> = list.named_children().filter(|a| a.kind() != "comment").collect();
        for a in &args {
            let what = match a.kind() {
                "keyword_argument" => "a keyword argument",
                "list_splat" => "a `*` argument",
                "dictionary_splat" => "a `**` argument",
                _ => continue,
            };
            return Err(self.escalate(EscalationCode::ShapeMismatch, *a, format!("{what} (`{}`) is outside the profile's shape", a.text())));
        }
        for a in &args {
            self.check_param_flow(*a, patterns)?;
        }
        match self.align(&args, patterns) {
            Some(matched) => Ok(matched),
            None => {
                let got: Vec<&str> = args.iter().map(|a| a.text()).collect();
                let want: Vec<String> = patterns.iter().map(ToString::to_string).collect();
                Err(self.escalate(
                    EscalationCode::ShapeMismatch,
                    call,
                    format!("arguments ({}) do not match the profile's shape [{}]", got.join(", "), want.join(", ")),
                ))
            }
        }
    }

    /// A parameter the profile expects to arrive unchanged must not be rebound
    /// anywhere in the region.
    fn check_param_flow(&self, arg: Node<'a>, patterns: &[ArgPattern]) -> Result<(), Escalation> {
        if arg.kind() != "identifier" {
            return Ok(());
        }
        let expected = patterns.iter().any(|p| matches!(&p.shape, ArgShape::Param(n) if n == arg.text()));
        if !expected {
            return Ok(());
        }
        match self.scope.rebinding(arg.text()) {
            Some(at) => Err(self.escalate(
                EscalationCode::ShapeMismatch,
                at,
                format!("parameter `{}` is rebound at line {}, so the value reaching the sink is not the caller's", arg.text(), at.line()),
            )),
            None => Ok(()),
        }
    }

    fn align(&self, args: &[Node<'a>], patterns: &[ArgPattern]) -> Option<Vec<String>> {
        crate::lang::align(args, patterns, &|a, p| self.arg_matches(*a, p))
    }

    fn arg_matches(&self, arg: Node<'a>, pattern: &ArgPattern) -> bool {
        match &pattern.shape {
            ArgShape::Param(name) => arg.kind() == "identifier" && arg.text() == name && self.scope.is_param(name) && self.scope.rebinding(name).is_none(),
            ArgShape::Var(name) => arg.kind() == "identifier" && arg.text() == name && !self.scope.is_param(name) && self.scope.bindings(name).len() == 1,
            ArgShape::Arg(name) => self.tool_argument(arg, name),
            ArgShape::Any => true,
            ArgShape::Ref(path) => matches!(arg.kind(), "identifier" | "attribute") && arg.text().split_whitespace().collect::<String>() == *path,
            ArgShape::Str(text) => plain_string(arg).as_deref() == Some(text.as_str()),
            ArgShape::Format(template) => format_template(arg).as_deref() == Some(template.as_str()),
        }
    }

    /// The tool's argument `name`, unchanged: `P["name"]` for a parameter `P`
    /// of the region's function that nothing rebinds or writes into, or the
    /// region function's own unchanged parameter `name`.
    fn tool_argument(&self, arg: Node<'a>, name: &str) -> bool {
        if arg.kind() == "identifier" {
            return arg.text() == name && self.scope.is_param(name) && self.scope.rebinding(name).is_none();
        }
        if arg.kind() != "subscript" {
            return false;
        }
        let (Some(map), Some(key)) = (arg.field_child("value"), arg.field_child("subscript")) else { return false };
        let func = route::function_of(self.region.node);
        map.kind() == "identifier"
            && self.scope.is_param(map.text())
            && self.scope.rebinding(map.text()).is_none()
            && plain_string(key).as_deref() == Some(name)
            && !surroundings::writes_into(func, map.text())
    }

    /// A top-level `if` whose test is `receiver.callee(args)` (alone or as one
    /// side of an `or`) and whose body exits on every path, before the sink's
    /// statement and not after any statement that always exits.
    fn guard_fact(
        &self,
        callee: &str,
        receiver: Option<&ArgPattern>,
        args: &[ArgPattern],
        before: &str,
        negated: bool,
        sink: Node<'a>,
    ) -> Result<Option<Found<'a>>, Escalation> {
        let Some(body) = self.region.node.field_child("body") else { return Ok(None) };
        let statements: Vec<Node<'a>> = body.named_children().filter(|s| s.kind() != "comment").collect();
        let Some(sink_index) = statements.iter().position(|s| s.contains(sink)) else { return Ok(None) };
        for stmt in &statements[..sink_index] {
            if stmt.kind() == "if_statement" {
                let test_ok = stmt.field_child("condition").is_some_and(|c| self.test_matches(c, callee, receiver, args, negated));
                let exit = stmt.field_child("consequence").and_then(block_exit);
                if let (true, Some(exit)) = (test_ok, exit) {
                    let mut values = BTreeMap::new();
                    let shown: Vec<String> = args.iter().map(ToString::to_string).collect();
                    let on = receiver.map(|r| format!("{r}; ")).unwrap_or_default();
                    values.insert("test".into(), FactValue::Text(format!("{}{callee}({on}{})", if negated { "not " } else { "" }, shown.join(", "))));
                    values.insert("exit".into(), FactValue::Text(exit.into()));
                    values.insert("before".into(), FactValue::Text(before.into()));
                    return Ok(Some(self.fact(*stmt, values)));
                }
            }
            // Statements after one that always exits are dead code: a guard there guards nothing.
            if statement_exit(*stmt).is_some() {
                return Ok(None);
            }
        }
        Ok(None)
    }

    fn test_matches(&self, test: Node<'a>, callee: &str, receiver: Option<&ArgPattern>, args: &[ArgPattern], negated: bool) -> bool {
        match test.kind() {
            "parenthesized_expression" => {
                test.named_children().filter(|c| c.kind() != "comment").any(|inner| self.test_matches(inner, callee, receiver, args, negated))
            }
            // `not f(…)` holds exactly when the negated test asks for `f(…)` false.
            "not_operator" if negated => test.field_child("argument").is_some_and(|inner| self.test_matches(inner, callee, receiver, args, false)),
            // `a or b` exits whenever `a` holds.
            "boolean_operator" => {
                test.field_child("operator").is_some_and(|o| o.text() == "or")
                    && [test.field_child("left"), test.field_child("right")]
                        .into_iter()
                        .flatten()
                        .any(|side| self.test_matches(side, callee, receiver, args, negated))
            }
            "call" if !negated => {
                if identity(self.scope, test) != Identity::Path(callee.to_owned()) {
                    return false;
                }
                let object = test.field_child("function").and_then(|f| f.field_child("object"));
                let receiver_ok = match (receiver, object) {
                    (Some(r), Some(o)) => self.arg_matches(o, r),
                    (None, _) => true,
                    (Some(_), None) => false,
                };
                let Some(list) = test.field_child("arguments").filter(|l| l.kind() == "argument_list") else {
                    return false;
                };
                let actual: Vec<Node<'a>> = list.named_children().filter(|a| a.kind() != "comment").collect();
                receiver_ok && self.align(&actual, args).is_some()
            }
            _ => false,
        }
    }
}

/// How a block leaves the function on every path: "raise" or "return".
fn block_exit(block: Node<'_>) -> Option<&'static str> {
    block.named_children().filter(|s| s.kind() != "comment").find_map(statement_exit)
}

/// How a statement leaves the function on every path, if it does.
fn statement_exit(stmt: Node<'_>) -> Option<&'static str> {
    match stmt.kind() {
        "raise_statement" => Some("raise"),
        "return_statement" => Some("return"),
        "if_statement" => {
            let mut exit = stmt.field_child("consequence").and_then(block_exit)?;
            let mut has_else = false;
            for alt in stmt.field_children("alternative") {
                has_else |= alt.kind() == "else_clause";
                let e = alt.field_child("consequence").or_else(|| alt.field_child("body")).and_then(block_exit)?;
                if e != exit {
                    exit = "raise or return";
                }
            }
            has_else.then_some(exit)
        }
        // A `with` body that raises does not leave the function: the context
        // manager's `__exit__` may swallow the exception.
        _ => None,
    }
}

/// The content of a plain string literal (no interpolation, no escapes), if it is one.
pub(super) fn plain_string(node: Node<'_>) -> Option<String> {
    if node.kind() != "string" {
        return None;
    }
    let mut out = String::new();
    for part in node.named_children() {
        match part.kind() {
            "string_start" | "string_end" => {}
            "string_content" if !part.text().contains('\\') => out.push_str(part.text()),
            _ => return None,
        }
    }
    Some(out)
}

/// The template of an f-string whose holes are bare identifiers: `f"--u={n}"` -> `--u={n}`.
fn format_template(node: Node<'_>) -> Option<String> {
    if node.kind() != "string" {
        return None;
    }
    let prefix = node.named_children().next().filter(|s| s.kind() == "string_start")?.text();
    if !prefix.to_ascii_lowercase().contains('f') {
        return None;
    }
    let mut out = String::new();
    for part in node.named_children() {
        match part.kind() {
            "string_start" | "string_end" => {}
            "string_content" if !part.text().contains('\\') => out.push_str(part.text()),
            "interpolation" => {
                let inner: Vec<Node<'_>> = part.named_children().collect();
                match inner.as_slice() {
                    [id] if id.kind() == "identifier" => {
                        out.push('{');
                        out.push_str(id.text());
                        out.push('}');
                    }
                    _ => return None,
                }
            }
            _ => return None,
        }
    }
    Some(out)
}
