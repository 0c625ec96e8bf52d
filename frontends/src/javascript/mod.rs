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
mod integrity;
mod package;

use std::collections::{BTreeMap, BTreeSet};

use crate::ir::{Escalation, EscalationCode, FactValue, Identity};
use crate::lang::{FactSite, Found, Frontend, Program, Region};
use crate::spec::{ArgPattern, ArgShape, Comparison, FactKind, FactSpec, RegionKind};
use crate::ts::{Node, Syntax};

use bindings::Bindings;

/// The JavaScript/TypeScript frontend.
pub struct JavaScript;

const FUNCTIONS: &[&str] =
    &["function_declaration", "generator_function_declaration", "function_expression", "arrow_function", "function", "method_definition"];

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
        let scope = Scope::of(region);
        region
            .node
            .descendants()
            .filter_map(|n| match n.kind() {
                "call_expression" => Some((n, scope.resolve(identity(n)))),
                "new_expression" => Some((n, scope.resolve(constructor(n)))),
                _ => implicit(n).map(|why| (n, Identity::Dynamic(why))),
            })
            .collect()
    }

    fn loaded(&self, entries: &[String], trees: &[(&str, &Syntax)], opaque: &[(&str, &str)]) -> Result<Option<BTreeSet<String>>, Escalation> {
        package::loaded(entries, trees, opaque).map(Some)
    }

    fn check_program(&self, program: &Program<'_, '_>) -> Result<(), Escalation> {
        integrity::check(program.trees, program.opaque, program.regions)
    }

    fn extract<'a>(&self, region: &Region<'a>, spec: &FactSpec, found: &BTreeMap<String, Found<'a>>) -> Result<Option<Found<'a>>, Escalation> {
        let bindings = Bindings::of(region.node);
        let cx = Cx { site: FactSite { region, spec }, bindings: &bindings };
        match &spec.kind {
            FactKind::Call { callee, args, matching } => cx.call_fact(callee, args.as_deref(), *matching),
            FactKind::Guard { callee, receiver, args, before, negated, returns, conjuncts } => match found.get(before) {
                Some(sink) => {
                    cx.guard_fact(&GuardTest { callee, receiver: receiver.as_ref(), args, negated: *negated }, returns.as_deref(), conjuncts, sink.node)
                }
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

/// The identity of `new X(…)`: constructors run code, so they are callees too.
fn constructor(n: Node<'_>) -> Identity {
    match n.field_child("constructor").and_then(dotted) {
        Some(path) if DYNAMIC.contains(&path.as_str()) => Identity::Dynamic(format!("new {path}")),
        Some(path) => Identity::Path(format!("new {path}")),
        None => Identity::Dynamic(format!("constructs `{}`", n.compact_text())),
    }
}

/// The first operand of a wrapper node, through parentheses and TypeScript casts only.
fn operand(n: Node<'_>) -> Option<Node<'_>> {
    let mut e = n.named_children().find(|c| c.kind() != "comment")?;
    while matches!(e.kind(), "parenthesized_expression" | "as_expression" | "non_null_expression" | "satisfies_expression") {
        e = e.named_children().find(|c| c.kind() != "comment")?;
    }
    Some(e)
}

/// An object spread that copies only literal objects (`...(c ? { a } : {})`).
fn literal_object(e: Node<'_>) -> bool {
    let e = bare(e);
    match e.kind() {
        "object" => true,
        "ternary_expression" => e.field_child("consequence").is_some_and(literal_object) && e.field_child("alternative").is_some_and(literal_object),
        "binary_expression" if e.field_child("operator").is_some_and(|o| o.text() == "&&") => e.field_child("right").is_some_and(literal_object),
        _ => false,
    }
}

/// Code a region runs without a call expression: why it needs an identity it cannot have.
fn implicit(n: Node<'_>) -> Option<String> {
    let text = || n.compact_text();
    match n.kind() {
        "await_expression" => match operand(n) {
            Some(e) if e.kind() == "call_expression" => None,
            _ => Some(format!("`{}` awaits a value that is not a reviewed call's result: a thenable's `then` runs code", text())),
        },
        "spread_element" if n.parent().is_some_and(|p| p.kind() == "object") => {
            (!operand(n).is_some_and(literal_object)).then(|| format!("`{}` spreads an object whose getters run code", text()))
        }
        "spread_element" => Some(format!("`{}` iterates a value: its iterator runs code", text())),
        "for_in_statement" if n.children().any(|c| c.kind() == "of") => {
            Some(format!("`for … of` at line {} iterates a value: its iterator runs code", n.line()))
        }
        "array_pattern" => Some(format!("`{}` destructures by iteration: the iterator runs code", text())),
        "yield_expression" if n.children().any(|c| c.kind() == "*") => Some(format!("`{}` delegates to an iterator", text())),
        "method_definition" if n.children().any(|c| matches!(c.kind(), "get" | "set")) => {
            Some(format!("`{}` defines an accessor: reading the property runs code", text()))
        }
        "assignment_expression" | "augmented_assignment_expression"
            if n.field_child("left").map(bare).is_some_and(|l| matches!(l.kind(), "member_expression" | "subscript_expression")) =>
        {
            Some(format!("`{}` writes an object's member: a reviewed region changes no shared state", text()))
        }
        _ => None,
    }
}

/// What names mean where a region's calls are resolved: its own bindings and
/// its file's module-level declarations and imports.
struct Scope<'a> {
    region: Node<'a>,
    locals: Bindings,
    /// Module-level names the file declares.
    declared: BTreeSet<String>,
    /// The values of the file's module-level `const`/`let`/`var name = value`.
    values: BTreeMap<String, Node<'a>>,
    /// Local name -> (specifier, imported name).
    imports: BTreeMap<String, (String, String)>,
}

impl<'a> Scope<'a> {
    fn of(region: &Region<'a>) -> Scope<'a> {
        let root = region.node.ancestors().last().unwrap_or(region.node);
        let mut declared = BTreeSet::new();
        let mut values = BTreeMap::new();
        let mut imports = BTreeMap::new();
        for n in root.named_children() {
            let decl = if n.kind() == "export_statement" { n.field_child("declaration").unwrap_or(n) } else { n };
            match decl.kind() {
                "function_declaration" | "generator_function_declaration" | "class_declaration" => {
                    if let Some(id) = decl.field_child("name") {
                        declared.insert(id.text().to_owned());
                    }
                }
                "lexical_declaration" | "variable_declaration" => {
                    for d in decl.named_children().filter(|d| d.kind() == "variable_declarator") {
                        let mut names = Vec::new();
                        if let Some(p) = d.field_child("name") {
                            bindings::pattern_names(p, &mut names);
                        }
                        declared.extend(names.iter().map(|i| i.text().to_owned()));
                        if let (Some(n), Some(v)) = (d.field_child("name").filter(|n| n.kind() == "identifier"), d.field_child("value")) {
                            values.insert(n.text().to_owned(), v);
                        }
                    }
                }
                "import_statement" => {
                    let Some(spec) = decl.field_child("source").and_then(string_content) else { continue };
                    for i in decl.descendants() {
                        match i.kind() {
                            "import_specifier" => {
                                let Some(orig) = i.field_child("name") else { continue };
                                let local = i.field_child("alias").unwrap_or(orig);
                                imports.insert(local.text().to_owned(), (spec.clone(), orig.text().to_owned()));
                            }
                            "import_clause" | "namespace_import" => {
                                for id in i.named_children().filter(|c| c.kind() == "identifier") {
                                    imports.insert(id.text().to_owned(), (spec.clone(), "*".to_owned()));
                                }
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        Scope { region: region.node, locals: Bindings::of(region.node), declared, values, imports }
    }

    /// A name as spelled is the reviewed one only when nothing nearer or
    /// elsewhere binds it: a local or parameter named like a reviewed
    /// function, a local shadowing a module name, an import under another
    /// name or from a package outside the release does not count.
    fn resolve(&self, id: Identity) -> Identity {
        let Identity::Path(path) = id else { return id };
        let root = path.split(['.', '[', '(']).next().unwrap_or_default();
        let plain = root.len() == path.len();
        let local = self.locals.is_param(root) || self.locals.count(root) > 0;
        if local && plain {
            return Identity::Unresolved(format!("{path}: a local or parameter of the region, not the reviewed function of that name"));
        }
        if local && (self.declared.contains(root) || self.imports.contains_key(root) || integrity::BUILTINS.contains(&root)) {
            return Identity::Unresolved(format!("{path}: `{root}` is bound in the region and shadows the module's `{root}`"));
        }
        if local && !self.origins_ok(root) {
            return Identity::Unresolved(format!("{path}: `{root}` is a local whose value does not come from a reviewed call, a read or a parameter"));
        }
        match self.imports.get(root) {
            Some((_, orig)) if orig != root => Identity::Unresolved(format!("{path}: `{root}` is imported as `{orig}` under another name")),
            Some((spec, _)) if !spec.starts_with("./") && !spec.starts_with("../") => Identity::Path(format!("{spec}:{path}")),
            _ => Identity::Path(path),
        }
    }
}

impl Scope<'_> {
    /// A local receiver means what its spelling says only when its value is
    /// a parameter or comes from a call, a member read or a fallback of one:
    /// `const ConnectorManager = rogue` must not pass for the module object.
    fn origins_ok(&self, root: &str) -> bool {
        bindings::origins(self.region, root).iter().all(|v| match v {
            None => true, // a parameter or a destructuring of one
            Some(value) => self.reviewed_origin(*value),
        })
    }

    /// A call, a member read, or one of them with a fallback (`a[k] ?? b`)
    /// that is a builtin value: a literal, an array, a regex, or a module
    /// constant holding one (`mutatingPattern = new RegExp(…)`).
    fn reviewed_origin(&self, v: Node<'_>) -> bool {
        let v = bare(v);
        match v.kind() {
            "call_expression" | "member_expression" | "subscript_expression" => true,
            "binary_expression" if v.field_child("operator").is_some_and(|o| matches!(o.text(), "||" | "??")) => {
                v.field_child("left").is_some_and(|l| self.reviewed_origin(l)) && v.field_child("right").is_some_and(|r| self.builtin_value(r))
            }
            _ => false,
        }
    }

    fn builtin_value(&self, v: Node<'_>) -> bool {
        let v = bare(v);
        match v.kind() {
            "string" | "template_string" | "number" | "array" | "regex" | "true" | "false" | "null" | "undefined" => true,
            "new_expression" => v.field_child("constructor").is_some_and(|c| matches!(c.text(), "RegExp" | "Set" | "Map")),
            "identifier" => {
                !self.locals.is_param(v.text()) && self.locals.count(v.text()) == 0 && self.values.get(v.text()).is_some_and(|d| self.builtin_value(*d))
            }
            _ => false,
        }
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
        "template_string" if n.named_children().all(|c| c.kind() == "string_fragment") => Some(n.named_children().map(|c| c.text()).collect()),
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
            ArgShape::Var(name) => e.kind() == "identifier" && e.text() == name && self.bindings.count(name) == 1 && self.bound_from_argument(name, e),
            ArgShape::Ref(path) => dotted(e).as_deref() == Some(path.as_str()),
            ArgShape::Str(text) => string_content(e).as_deref() == Some(text.as_str()),
            ArgShape::Format(_) => false,
        }
    }

    /// Whether the one binding of `name` reads it from the argument object of
    /// the function that uses it: `const { name } = P` or `const name = P.name`,
    /// P a parameter of that function bound nowhere else.
    fn bound_from_argument(&self, name: &str, used: Node<'a>) -> bool {
        let Some(at) = self.bindings.only_site(name) else { return false };
        let Some(site) = self.site.region.node.descendants().find(|n| n.byte_range().start == at && n.text() == name) else { return false };
        let Some(declarator) = site.ancestors().find(|a| a.kind() == "variable_declarator") else { return false };
        let Some(value) = declarator.field_child("value").map(bare) else { return false };
        let object = match site.parent().map(|p| p.kind()) {
            Some("object_pattern") => Some(value),
            Some("variable_declarator") if value.kind() == "member_expression" && value.field_child("property").is_some_and(|p| p.text() == name) => {
                value.field_child("object").map(bare)
            }
            _ => None,
        };
        let Some(object) = object.filter(|o| o.kind() == "identifier") else { return false };
        let Some(function) = declarator.ancestors().find(|a| FUNCTIONS.contains(&a.kind())) else { return false };
        let mut params = Vec::new();
        for p in function.field_child("parameters").into_iter().flat_map(|ps| ps.named_children()).chain(function.field_child("parameter")) {
            bindings::pattern_names(p, &mut params);
        }
        let is_param = params.iter().any(|p| p.text() == object.text());
        let bound_once = if function == self.site.region.node { self.bindings.count(object.text()) == 0 } else { self.bindings.count(object.text()) == 1 };
        is_param && bound_once && function.contains(used) && used.ancestors().find(|a| FUNCTIONS.contains(&a.kind())) == Some(function)
    }

    fn call_fact(&self, callee: &str, patterns: Option<&[ArgPattern]>, matching: bool) -> Result<Option<Found<'a>>, Escalation> {
        let want = Identity::Path(callee.to_owned());
        let mut calls: Vec<Node<'a>> = self.site.region.node.descendants().filter(|n| n.kind() == "call_expression" && identity(*n) == want).collect();
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
                    return Err(self
                        .site
                        .mismatch(*a, format!("`{name}` is assigned more than once, so the value reaching the call is not the one the profile follows")));
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
    fn guard_fact(&self, want: &GuardTest<'_>, returns: Option<&str>, conjuncts: &[String], sink: Node<'a>) -> Result<Option<Found<'a>>, Escalation> {
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
                    && let Some(others) = self.test(condition, want)
                {
                    // The reviewed test is there, so its body must stop the call: one
                    // that falls through to the sink is a shape, not a missing guard.
                    let Some(exit) = stmt.field_child("consequence").and_then(|c| exits(c, returns)) else {
                        let what = returns.map(|r| format!(" with {r}")).unwrap_or_default();
                        return Err(self.site.mismatch(*stmt, format!("the guard does not return{what} on every path: the call falls through to the sink")));
                    };
                    self.reviewed_conjuncts(&others, conjuncts)?;
                    let mut values = BTreeMap::new();
                    values.insert("test".into(), FactValue::Text(format!("{}{}", if want.negated { "!" } else { "" }, want.callee)));
                    values.insert("exit".into(), FactValue::Text(exit.into()));
                    let texts = others.iter().map(|o| FactValue::Text(o.compact_text())).collect();
                    values.insert("also_requires".into(), FactValue::List(texts));
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

    /// Every other `&&` conjunct of a guard is a reviewed flag: a bare
    /// identifier the profile lists, bound exactly once in the region. Any
    /// other (`&& false`, a call, a literal) could keep the guard from firing.
    fn reviewed_conjuncts(&self, others: &[Node<'a>], reviewed: &[String]) -> Result<(), Escalation> {
        for o in others {
            let e = bare(*o);
            let ok = e.kind() == "identifier" && reviewed.iter().any(|r| r == e.text()) && self.bindings.count(e.text()) == 1;
            if !ok {
                return Err(self.site.mismatch(
                    *o,
                    format!(
                        "the guard also requires `{}`, which is not a reviewed conjunct (`conjuncts`): it may keep the guard from firing",
                        o.compact_text()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Whether the condition holds the test (alone, or joined by `&&` / `||`);
    /// returns the other `&&` conjuncts the guard also needs.
    fn test(&self, condition: Node<'a>, want: &GuardTest<'_>) -> Option<Vec<Node<'a>>> {
        let c = bare(condition);
        match c.kind() {
            "binary_expression" => {
                let op = c.field_child("operator").map(|o| o.text()).unwrap_or_default();
                let (left, right) = (c.field_child("left")?, c.field_child("right")?);
                match op {
                    "&&" => {
                        if let Some(mut others) = self.test(left, want) {
                            others.push(right);
                            return Some(others);
                        }
                        let mut others = self.test(right, want)?;
                        others.insert(0, left);
                        Some(others)
                    }
                    "||" => self.test(left, want).or_else(|| self.test(right, want)),
                    _ => None,
                }
            }
            "unary_expression" if want.negated && c.field_child("operator").is_some_and(|o| o.text() == "!") => {
                self.test(c.field_child("argument")?, &GuardTest { negated: false, ..*want })
            }
            "call_expression" if !want.negated => {
                if identity(c) != Identity::Path(want.callee.to_owned()) {
                    return None;
                }
                let object = c.field_child("function").map(bare).and_then(|f| f.field_child("object"));
                let receiver_ok = match (want.receiver, object) {
                    (Some(r), Some(o)) => self.arg_matches(o, r),
                    (None, _) => true,
                    (Some(_), None) => false,
                };
                (receiver_ok && crate::lang::align(&arguments(c), want.args, &|a, p| self.arg_matches(*a, p)).is_some()).then(Vec::new)
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

    /// A `return RETURNS` of the region's own function, nested only in
    /// blocks and `if` consequences whose conditions, split at `&&`, are
    /// exactly the reviewed comparisons (each used once, nothing else), with
    /// every earlier `return` of the function returning the same value.
    fn exit_fact(&self, returns: &str, conditions: &[Comparison]) -> Result<Option<Found<'a>>, Escalation> {
        let region = self.site.region.node;
        let function = if region.kind() == "variable_declarator" { region.field_child("value").unwrap_or(region) } else { region };
        let own = |n: Node<'a>| n.ancestors().find(|a| FUNCTIONS.contains(&a.kind())) == Some(function);
        let returns_of = |r: Node<'a>| r.named_children().find(|c| c.kind() != "comment").map(|v| v.compact_text());
        for ret in function.descendants().filter(|n| n.kind() == "return_statement" && own(*n)) {
            if returns_of(ret).as_deref() != Some(returns) {
                continue;
            }
            let Some(conjuncts) = self.path_conditions(ret, function) else { continue };
            if !self.exactly(&conjuncts, conditions) {
                continue;
            }
            let earlier_differs = function
                .descendants()
                .filter(|n| n.kind() == "return_statement" && own(*n) && n.precedes(ret))
                .any(|r| returns_of(r).as_deref() != Some(returns));
            if earlier_differs {
                continue;
            }
            let mut values = BTreeMap::new();
            values.insert("returns".into(), FactValue::Text(returns.to_owned()));
            values.insert("conditions".into(), FactValue::List(conditions.iter().map(|c| FactValue::Text(c.to_string())).collect()));
            return Ok(Some(self.site.fact(ret, values)));
        }
        Ok(None)
    }

    /// The `&&` conjuncts of every `if` whose consequence holds `ret`, when
    /// only blocks and such consequences stand between it and `function`.
    fn path_conditions(&self, ret: Node<'a>, function: Node<'a>) -> Option<Vec<Node<'a>>> {
        let mut conjuncts = Vec::new();
        let mut node = ret;
        for a in ret.ancestors() {
            if a == function {
                return Some(conjuncts);
            }
            match a.kind() {
                "statement_block" if a.parent() == Some(function) || a.parent().is_some_and(|p| p.kind() == "if_statement") => {}
                "if_statement" if a.field_child("consequence").is_some_and(|c| c.contains(node)) => {
                    split_and(a.field_child("condition")?, &mut conjuncts);
                }
                _ => return None,
            }
            node = a;
        }
        None
    }

    /// Whether the conjuncts are the comparisons, one to one.
    fn exactly(&self, conjuncts: &[Node<'a>], conditions: &[Comparison]) -> bool {
        if conjuncts.len() != conditions.len() {
            return false;
        }
        let mut used = vec![false; conditions.len()];
        conjuncts.iter().all(|c| {
            let hit = conditions.iter().enumerate().find(|(i, want)| !used[*i] && self.compares(*c, want));
            hit.map(|(i, _)| used[i] = true).is_some()
        })
    }

    /// `OPERAND === "TEXT"` (either side) or `OPERAND.METHOD("TEXT")`, the
    /// operand a parameter of the region or a local bound exactly once.
    fn compares(&self, c: Node<'a>, want: &Comparison) -> bool {
        let c = bare(c);
        let operand = |e: Node<'a>| {
            let e = bare(e);
            e.kind() == "identifier" && ((self.bindings.is_param(e.text()) && self.bindings.count(e.text()) == 0) || self.bindings.count(e.text()) == 1)
        };
        match want {
            Comparison::Equals(text) => {
                let strict = c.kind() == "binary_expression" && c.field_child("operator").is_some_and(|o| o.text() == "===");
                let (Some(l), Some(r)) = (c.field_child("left"), c.field_child("right")) else { return false };
                let lit = |e: Node<'a>| string_content(e).as_deref() == Some(text.as_str());
                strict && ((operand(l) && lit(r)) || (lit(l) && operand(r)))
            }
            Comparison::Method { method, text } => {
                if c.kind() != "call_expression" {
                    return false;
                }
                let Some(f) = c.field_child("function").map(bare).filter(|f| f.kind() == "member_expression") else { return false };
                let args = arguments(c);
                f.field_child("property").is_some_and(|p| p.text() == method)
                    && f.field_child("object").is_some_and(operand)
                    && args.len() == 1
                    && string_content(args[0]).as_deref() == Some(text.as_str())
            }
        }
    }
}

/// The reviewed test a guard looks for.
#[derive(Clone, Copy)]
struct GuardTest<'s> {
    callee: &'s str,
    receiver: Option<&'s ArgPattern>,
    args: &'s [ArgPattern],
    negated: bool,
}

/// A condition split at top-level `&&`.
fn split_and<'a>(c: Node<'a>, out: &mut Vec<Node<'a>>) {
    let b = bare(c);
    if b.kind() == "binary_expression"
        && b.field_child("operator").is_some_and(|o| o.text() == "&&")
        && let (Some(l), Some(r)) = (b.field_child("left"), b.field_child("right"))
    {
        split_and(l, out);
        split_and(r, out);
        return;
    }
    out.push(c);
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
