//! JavaScript's facts: `call` through the shared skeleton ([`fcd_frontends::facts`]),
//! `table` (a row of a data table) and `exit` (the conditions under which a
//! region returns). Kept apart from callee identities and name resolution.

use std::collections::BTreeMap;

use fcd_frontends::facts::{CallShape, FactSite};
use fcd_frontends::frontend::Found;
use fcd_frontends::guard::{Control, GuardShape, declared_async, earlier_in_block, last_segment};
use fcd_frontends::ir::{Escalation, Identity};
use fcd_frontends::spec::{ArgPattern, ArgShape, Comparison};
use fcd_frontends::ts::Node;
use fcd_model::effect::FactValue;

use super::FUNCTIONS;
use super::bindings;
use super::control::JsControl;
use super::scope::Scope;
use super::syntax::{arguments, bare, dotted, identity, string_content};

/// A call's arguments are its nodes; a spread argument, and a followed
/// variable assigned more than once, are outside every shape.
impl<'a> CallShape<'a> for Cx<'_, 'a> {
    type Arg = Node<'a>;

    fn callee(&self, node: Node<'a>) -> Option<Identity> {
        (node.kind() == "call_expression").then(|| self.names.resolve(identity(node)))
    }

    fn arguments(&self, call: Node<'a>) -> Result<Vec<Node<'a>>, Escalation> {
        Ok(arguments(call))
    }

    fn check_arguments(&self, _call: Node<'a>, args: &[Node<'a>], patterns: &[ArgPattern]) -> Result<(), Escalation> {
        let splats = patterns.iter().any(|p| matches!(p.shape, ArgShape::Splat(_)));
        if let Some(spread) = args.iter().find(|a| a.kind() == "spread_element")
            && !splats
        {
            return Err(self.site.mismatch(*spread, "a spread argument is outside the profile's shape".into()));
        }
        for a in args {
            // A spread value is followed like the value itself.
            let (e, spread) = match spread_value(*a) {
                Some(v) => (v, true),
                None => (bare(*a), false),
            };
            let name = e.text();
            let followed = patterns.iter().any(|p| {
                let shape = match (&p.shape, spread) {
                    (ArgShape::Splat(inner), true) => inner.as_ref(),
                    (shape, false) => shape,
                    _ => return false,
                };
                matches!(shape, ArgShape::Var(n) | ArgShape::Param(n) if n == name)
            });
            if followed && e.kind() == "identifier" && self.names.count(name) > 1 {
                return Err(self
                    .site
                    .mismatch(*a, format!("`{name}` is assigned more than once, so the value reaching the call is not the one the profile follows")));
            }
        }
        Ok(())
    }

    fn arg_matches(&self, arg: &Node<'a>, pattern: &ArgPattern) -> bool {
        self.shape_matches(*arg, &pattern.shape)
    }

    fn arg_text(&self, arg: &Node<'a>) -> String {
        arg.compact_text()
    }
}

/// The expression a spread argument (`...files`) spreads.
fn spread_value(arg: Node<'_>) -> Option<Node<'_>> {
    if arg.kind() != "spread_element" {
        return None;
    }
    let mut inner = arg.named_children().filter(|c| c.kind() != "comment");
    match (inner.next(), inner.next()) {
        (Some(v), None) => Some(bare(v)),
        _ => None,
    }
}

impl<'a> Cx<'_, 'a> {
    /// Whether one argument has the shape: a spread argument only a splat's,
    /// whose inner shape the spread value must have.
    fn shape_matches(&self, arg: Node<'a>, shape: &ArgShape) -> bool {
        if arg.kind() == "spread_element" {
            let ArgShape::Splat(inner) = shape else { return false };
            return spread_value(arg).is_some_and(|v| self.shape_matches(v, inner));
        }
        let e = bare(arg);
        match shape {
            ArgShape::Splat(_) => false,
            ArgShape::Arg(name) => self.tool_argument(e, name),
            ArgShape::Any => arg.kind() != "spread_element",
            // `param:#N` is the region's parameter at position N, whatever its name.
            ArgShape::Param(name) => {
                let name = match name.strip_prefix('#') {
                    Some(i) => match i.parse().ok().and_then(|i| self.names.param_at(i)) {
                        Some(n) => n,
                        None => return false,
                    },
                    None => name.as_str(),
                };
                e.kind() == "identifier" && e.text() == name && self.names.is_param(name) && self.names.count(name) == 0
            }
            // The local's own name is free (a bundler renames `sql` to `sql2`): what
            // counts is the argument object's property it is read from.
            ArgShape::Var(name) => {
                e.kind() == "identifier"
                    && ((self.names.count(e.text()) == 1 && self.bound_from_argument(e.text(), name, e))
                        || (self.names.count(e.text()) == 0 && self.names.is_param(e.text()) && self.region_destructures(e.text(), name, e)))
            }
            ArgShape::Ref(path) => dotted(e).as_deref() == Some(path.as_str()),
            ArgShape::Str(text) => string_content(e).as_deref() == Some(text.as_str()),
            ArgShape::Format(_) => false,
            // `str(…)` is read by the Python frontend only.
            ArgShape::Text(_) => false,
            // A local of a function around the region, which [`super::state`] checks.
            ArgShape::State(name) => e.kind() == "identifier" && e.text() == name && self.names.count(name) == 0 && !self.names.is_param(name),
            ArgShape::Result(callee) => e.kind() == "identifier" && self.bound_to_call(e.text(), callee, e),
        }
    }

    /// Whether the one binding of `name` is its declaration `name = CALLEE(…)`
    /// (a plain identifier, not a pattern), a call of exactly that callee;
    /// `CALLEE(WHAT)` also asks for exactly one argument that is `WHAT`
    /// (spelled as [`Scope::derive`] spells what a value is).
    pub(super) fn bound_to_call(&self, name: &str, callee: &str, at: Node<'a>) -> bool {
        let (callee, argument) = match callee.split_once('(') {
            Some((c, rest)) => (c, rest.strip_suffix(')')),
            None => (callee, None),
        };
        let Some((_, value)) = self.declared_at(name, at) else { return false };
        if value.kind() != "call_expression" || self.names.resolve(identity(value)) != Identity::Path(callee.to_owned()) {
            return false;
        }
        match argument {
            None => true,
            Some(what) => matches!(arguments(value).as_slice(), [one] if self.names.derive(*one, 0).as_deref() == Some(what)),
        }
    }

    /// The declarator and value of `name = VALUE` when that declaration (a
    /// plain identifier, not a pattern) is the local's one binding in the region.
    pub(super) fn declared_once(&self, name: &str) -> Option<(Node<'a>, Node<'a>)> {
        let at = self.names.only_site(name)?;
        let site = self.site.region.node.descendants().find(|n| n.byte_range().start == at && n.text() == name)?;
        let declarator = site.parent().filter(|p| p.kind() == "variable_declarator" && p.field_child("name") == Some(site))?;
        Some((declarator, declarator.field_child("value").map(bare)?))
    }

    /// The declarator and value of `name = VALUE` that `at` sees: the
    /// local's one binding in the region ([`Self::declared_once`]), or, when
    /// the region's code binds the name several times (a dispatcher's
    /// clauses each declaring `const parsed`), the one lexical declaration
    /// whose scope holds `at` when every binding of the name is a lexical
    /// declaration (an assignment or a `var` anywhere gives `None`).
    fn declared_at(&self, name: &str, at: Node<'a>) -> Option<(Node<'a>, Node<'a>)> {
        if self.names.count(name) <= 1 {
            return self.declared_once(name);
        }
        let site = self.names.visible_declaration(name, at)?;
        let declarator = site.parent().filter(|p| p.kind() == "variable_declarator" && p.field_child("name") == Some(site))?;
        Some((declarator, declarator.field_child("value").map(bare)?))
    }

    /// The tool's argument `name`, unchanged: `P.name` where the region is a
    /// registered callback (the registration API hands it the call's
    /// arguments as its first parameter) and `P`, that parameter, is a plain
    /// identifier nothing in the region binds again; in a dispatcher case,
    /// `A.name` for the request's arguments `A` ([`super::route::request_field`]).
    ///
    /// Also `R.data.name` where `R` is a local declared once as
    /// `const R = S.safeParse(A)`, `A` the tool's arguments as above: a zod
    /// schema's parse result (its `data`, the arguments as the schema passes
    /// them; the envelope's assumptions must say they are unchanged).
    fn tool_argument(&self, e: Node<'a>, name: &str) -> bool {
        if e.kind() != "member_expression" || e.field_child("property").is_none_or(|p| p.text() != name) {
            return false;
        }
        let Some(object) = e.field_child("object").map(bare) else { return false };
        self.arguments_object(object) || self.parsed_arguments(object)
    }

    /// Whether `object` is the tool's arguments object: the request's
    /// `arguments` in a dispatcher case, the first parameter of a registered
    /// callback nothing in the region binds again.
    fn arguments_object(&self, object: Node<'a>) -> bool {
        let region = self.site.region.node;
        if region.kind() == "switch_case" {
            // A dispatcher case: the request's `arguments`, read as `P.params.arguments` or a local destructured from `P.params`.
            return super::route::case_registration(region).is_some()
                && super::route::request_field(object, "arguments", super::route::owner(region), self.names);
        }
        if super::route::registration_of(region).is_none() {
            return false;
        }
        let first = self.names.param_at(0);
        object.kind() == "identifier" && first == Some(object.text()) && self.names.count(object.text()) == 0
    }

    /// Whether `object` is `R.data` of a local `R` declared once, by its own
    /// declaration, as `S.safeParse(A)` with `A` the tool's arguments object.
    fn parsed_arguments(&self, object: Node<'a>) -> bool {
        if object.kind() != "member_expression" || object.field_child("property").is_none_or(|p| p.text() != "data") {
            return false;
        }
        let Some(result) = object.field_child("object").map(bare).filter(|r| r.kind() == "identifier") else { return false };
        let Some((_, value)) = self.declared_at(result.text(), result) else { return false };
        let parses = value.kind() == "call_expression"
            && value
                .field_child("function")
                .map(bare)
                .is_some_and(|f| f.kind() == "member_expression" && f.field_child("property").is_some_and(|p| p.text() == "safeParse"));
        parses && matches!(arguments(value).as_slice(), [one] if self.arguments_object(bare(*one)))
    }

    /// Whether the one binding of the local `name` reads the property
    /// `property` of the argument object of the function that uses it:
    /// `const { property } = P`, `const { property: name } = P` or
    /// `const name = P.property`, P a parameter of that function bound nowhere
    /// else; or the function's parameter is the pattern `{ property }` itself.
    pub(super) fn bound_from_argument(&self, name: &str, property: &str, used: Node<'a>) -> bool {
        let Some(at) = self.names.only_site(name) else { return false };
        let Some(site) = self.site.region.node.descendants().find(|n| n.byte_range().start == at && n.text() == name) else { return false };
        if let Some(function) = destructured_parameter(site, name, property) {
            return function.contains(used) && used.ancestors().find(|a| FUNCTIONS.contains(&a.kind())) == Some(function);
        }
        let Some(declarator) = site.ancestors().find(|a| a.kind() == "variable_declarator") else { return false };
        let Some(value) = declarator.field_child("value").map(bare) else { return false };
        let parent = site.parent();
        let object = match parent.map(|p| p.kind()) {
            // Only the declarator's own pattern: `{ a: { sql } } = P` reads P.a.sql.
            Some("object_pattern") if name == property && parent.and_then(|o| o.parent()) == Some(declarator) => Some(value),
            Some("pair_pattern")
                if parent.and_then(|p| p.field_child("value")) == Some(site)
                    && parent.and_then(|p| p.field_child("key")).is_some_and(|k| k.kind() == "property_identifier" && k.text() == property)
                    && parent.and_then(|p| p.parent()).is_some_and(|o| o.kind() == "object_pattern" && o.parent() == Some(declarator)) =>
            {
                Some(value)
            }
            Some("variable_declarator") if value.kind() == "member_expression" && value.field_child("property").is_some_and(|p| p.text() == property) => {
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
        let bound_once = if function == self.site.region.node { self.names.count(object.text()) == 0 } else { self.names.count(object.text()) == 1 };
        is_param && bound_once && function.contains(used) && used.ancestors().find(|a| FUNCTIONS.contains(&a.kind())) == Some(function)
    }

    /// Whether the region's own parameter list binds `name` only as the
    /// shorthand `{ property }` of one parameter (`function f({ sql }, …)`),
    /// never rebound inside, and `used` is in the region's own body.
    fn region_destructures(&self, name: &str, property: &str, used: Node<'a>) -> bool {
        let region = self.site.region.node;
        let Some(params) = region.field_child("parameters") else { return false };
        let sites: Vec<Node<'a>> =
            params.descendants().filter(|n| n.text() == name && matches!(n.kind(), "identifier" | "shorthand_property_identifier_pattern")).collect();
        let [site] = sites.as_slice() else { return false };
        destructured_parameter(*site, name, property) == Some(region) && used.ancestors().find(|a| FUNCTIONS.contains(&a.kind())) == Some(region)
    }

    /// The array of strings under `row` in the region's object literal.
    pub(super) fn table_fact(&self, row: &str, member: &str) -> Result<Option<Found<'a>>, Escalation> {
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
    pub(super) fn exit_fact(&self, returns: &str, conditions: &[Comparison]) -> Result<Option<Found<'a>>, Escalation> {
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
    pub(super) fn path_conditions(&self, ret: Node<'a>, function: Node<'a>) -> Option<Vec<Node<'a>>> {
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
    pub(super) fn exactly(&self, conjuncts: &[Node<'a>], conditions: &[Comparison]) -> bool {
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
    pub(super) fn compares(&self, c: Node<'a>, want: &Comparison) -> bool {
        let c = bare(c);
        let operand = |e: Node<'a>| {
            let e = bare(e);
            e.kind() == "identifier" && ((self.names.is_param(e.text()) && self.names.count(e.text()) == 0) || self.names.count(e.text()) == 1)
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

/// The function whose parameter is the object pattern `{ property }` binding
/// `site` (shorthand, not nested: `function f({ sql }, …)`), when it is one.
fn destructured_parameter<'a>(site: Node<'a>, name: &str, property: &str) -> Option<Node<'a>> {
    let pattern = site.parent().filter(|p| p.kind() == "object_pattern" && name == property)?;
    let mut up = pattern.parent()?;
    // TypeScript wraps a parameter (`{ sql }: T`) in a required or optional parameter.
    if matches!(up.kind(), "required_parameter" | "optional_parameter") && up.field_child("pattern") == Some(pattern) {
        up = up.parent()?;
    }
    let function = up.parent().filter(|f| up.kind() == "formal_parameters" && FUNCTIONS.contains(&f.kind()))?;
    Some(function)
}

/// The shared guard reads JavaScript's control syntax ([`JsControl`]) on a
/// region's names.
impl<'a> GuardShape<'a> for Cx<'_, 'a> {
    fn control(&self) -> &dyn Control {
        &JsControl
    }

    /// The local is declared once (`const ok = f(p)`), by a declaration that
    /// is an earlier statement of the block holding the `if`.
    fn bound_once(&self, name: Node<'a>, guard: Node<'a>) -> Option<Node<'a>> {
        if self.names.is_param(name.text()) {
            return None;
        }
        let (declarator, value) = self.declared_once(name.text())?;
        let declaration = declarator.parent().filter(|d| matches!(d.kind(), "lexical_declaration" | "variable_declaration"))?;
        earlier_in_block(declaration, guard).then_some(value)
    }

    fn receiver(&self, call: Node<'a>) -> Option<Node<'a>> {
        call.field_child("function").map(bare).filter(|f| f.kind() == "member_expression").and_then(|f| f.field_child("object"))
    }

    fn spell(&self, n: Node<'a>) -> Option<String> {
        self.names.derive(n, 0)
    }

    /// A call of an `async` function is a promise, always truthy, unless awaited.
    fn unawaited_async(&self, call: Node<'a>) -> bool {
        let awaited = call
            .ancestors()
            .find(|a| !matches!(a.kind(), "parenthesized_expression" | "as_expression" | "non_null_expression" | "satisfies_expression"))
            .is_some_and(|a| a.kind() == "await_expression");
        if awaited {
            return false;
        }
        let written = call.field_child("function").map(|f| f.text().rsplit('.').next().unwrap_or_default().trim().to_owned());
        let id = self.callee(call);
        let kinds = ["function_declaration", "function_expression", "function", "arrow_function", "method_definition", "generator_function_declaration"];
        [written, id.as_ref().and_then(last_segment).map(str::to_owned)].into_iter().flatten().any(|n| declared_async(self.site.region.trees, &n, &kinds))
    }
}

/// A JavaScript fact extraction: names are the region's scope (its bindings,
/// and what a once-bound local or typed parameter is), so a callee's identity
/// is the one the inventory checks.
pub(super) struct Cx<'r, 'a> {
    pub site: FactSite<'r, 'a>,
    pub names: &'r Scope<'a>,
}
