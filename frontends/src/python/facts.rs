//! Python's facts: `call` through the shared skeleton ([`crate::facts`]),
//! with Python's argument forms and parameter flow, and `guard` (an `if`
//! that tests a reviewed call and exits before the sink). Kept apart from the
//! callee identities in the frontend's root module, which know nothing of facts.

use std::collections::BTreeMap;

use crate::facts::{self, CallShape};
use crate::ir::{Escalation, FactValue, Identity};
use crate::lang::Found;
use crate::spec::{ArgPattern, ArgShape};
use crate::ts::Node;

use super::scope::Scope;
use super::{format_template, identity, plain_string, route, surroundings};

/// A Python fact extraction: names are the region's scope.
pub(super) type Cx<'r, 'a> = facts::Cx<'r, 'a, Scope<'a>>;

/// A call's arguments are the nodes of its argument list: a generator,
/// keyword or `**` argument is outside every shape, a `*` argument matches
/// only a splat pattern (`*param:files`), and a parameter the profile
/// follows must not be rebound. A `matching` fact leaves such
/// calls out rather than escalating on them.
impl<'a> CallShape<'a> for Cx<'_, 'a> {
    type Arg = Node<'a>;

    fn callee(&self, node: Node<'a>) -> Option<Identity> {
        (node.kind() == "call").then(|| identity(self.names, node))
    }

    fn arguments(&self, call: Node<'a>) -> Result<Vec<Node<'a>>, Escalation> {
        let Some(list) = call.field_child("arguments") else {
            return Err(self.site.mismatch(call, "the call has no argument list".into()));
        };
        if list.kind() != "argument_list" {
            return Err(self.site.mismatch(list, "a generator argument is outside the profile's shape".into()));
        }
        let args: Vec<Node<'a>> = list.named_children().filter(|a| a.kind() != "comment").collect();
        for a in &args {
            let what = match a.kind() {
                "keyword_argument" => "a keyword argument",
                "dictionary_splat" => "a `**` argument",
                _ => continue,
            };
            return Err(self.site.mismatch(*a, format!("{what} (`{}`) is outside the profile's shape", a.text())));
        }
        Ok(args)
    }

    fn check_arguments(&self, _call: Node<'a>, args: &[Node<'a>], patterns: &[ArgPattern]) -> Result<(), Escalation> {
        for a in args {
            self.check_param_flow(*a, patterns)?;
        }
        Ok(())
    }

    fn arg_matches(&self, arg: &Node<'a>, pattern: &ArgPattern) -> bool {
        self.shape_matches(*arg, &pattern.shape)
    }

    fn arg_text(&self, arg: &Node<'a>) -> String {
        arg.text().to_owned()
    }

    fn strict_matching(&self) -> bool {
        true
    }
}

impl<'a> Cx<'_, 'a> {
    /// Whether one argument node has the shape: a `*` argument only a splat's,
    /// whose inner shape its expression must have.
    fn shape_matches(&self, arg: Node<'a>, shape: &ArgShape) -> bool {
        if arg.kind() == "list_splat" {
            let ArgShape::Splat(inner) = shape else { return false };
            let mut exprs = arg.named_children().filter(|c| c.kind() != "comment");
            return match (exprs.next(), exprs.next()) {
                (Some(e), None) => self.shape_matches(e, inner),
                _ => false,
            };
        }
        match shape {
            ArgShape::Splat(_) => false,
            ArgShape::Param(name) => arg.kind() == "identifier" && arg.text() == name && self.names.is_param(name) && self.names.rebinding(name).is_none(),
            ArgShape::Var(name) => arg.kind() == "identifier" && arg.text() == name && !self.names.is_param(name) && self.names.bindings(name).len() == 1,
            ArgShape::Arg(name) => self.tool_argument(arg, name),
            ArgShape::Any => true,
            ArgShape::Ref(path) => matches!(arg.kind(), "identifier" | "attribute") && arg.text().split_whitespace().collect::<String>() == *path,
            ArgShape::Str(text) => plain_string(arg).as_deref() == Some(text.as_str()),
            ArgShape::Format(template) => format_template(arg).as_deref() == Some(template.as_str()),
            // A call's result is followed by the JavaScript frontend only so far.
            ArgShape::Result(_) => false,
        }
    }

    /// A parameter the profile expects to arrive unchanged must not be rebound
    /// anywhere in the region.
    pub(super) fn check_param_flow(&self, arg: Node<'a>, patterns: &[ArgPattern]) -> Result<(), Escalation> {
        // A splatted parameter is followed like the parameter itself.
        let (arg, splat) = match arg.kind() {
            "list_splat" => match arg.named_children().find(|c| c.kind() != "comment") {
                Some(inner) => (inner, true),
                None => return Ok(()),
            },
            _ => (arg, false),
        };
        if arg.kind() != "identifier" {
            return Ok(());
        }
        let expected = patterns.iter().any(|p| match (&p.shape, splat) {
            (ArgShape::Param(n), false) => n == arg.text(),
            (ArgShape::Splat(inner), true) => matches!(inner.as_ref(), ArgShape::Param(n) if n == arg.text()),
            _ => false,
        });
        if !expected {
            return Ok(());
        }
        match self.names.rebinding(arg.text()) {
            Some(at) => Err(self
                .site
                .mismatch(at, format!("parameter `{}` is rebound at line {}, so the value reaching the sink is not the caller's", arg.text(), at.line()))),
            None => Ok(()),
        }
    }

    pub(super) fn align(&self, args: &[Node<'a>], patterns: &[ArgPattern]) -> Option<Vec<String>> {
        facts::align(args, patterns, &|a, p| self.arg_matches(a, p))
    }

    /// The tool's argument `name`, unchanged: `P["name"]` for a parameter `P`
    /// of the region's function that nothing rebinds or writes into, or the
    /// region function's own unchanged parameter `name`.
    pub(super) fn tool_argument(&self, arg: Node<'a>, name: &str) -> bool {
        if arg.kind() == "identifier" {
            return arg.text() == name && self.names.is_param(name) && self.names.rebinding(name).is_none();
        }
        if arg.kind() != "subscript" {
            return false;
        }
        let (Some(map), Some(key)) = (arg.field_child("value"), arg.field_child("subscript")) else { return false };
        let func = route::function_of(self.site.region.node);
        map.kind() == "identifier"
            && self.names.is_param(map.text())
            && self.names.rebinding(map.text()).is_none()
            && plain_string(key).as_deref() == Some(name)
            && !surroundings::writes_into(func, map.text())
    }

    /// A top-level `if` whose test is `receiver.callee(args)` (alone or as one
    /// side of an `or`) and whose body exits on every path, before the sink's
    /// statement and not after any statement that always exits.
    pub(super) fn guard_fact(
        &self,
        callee: &str,
        receiver: Option<&ArgPattern>,
        args: &[ArgPattern],
        before: &str,
        negated: bool,
        sink: Node<'a>,
    ) -> Result<Option<Found<'a>>, Escalation> {
        let Some(body) = self.site.region.node.field_child("body") else { return Ok(None) };
        let statements: Vec<Node<'a>> = body.named_children().filter(|s| s.kind() != "comment").collect();
        let Some(sink_index) = statements.iter().position(|s| s.contains(sink)) else { return Ok(None) };
        for (index, stmt) in statements[..sink_index].iter().enumerate() {
            if stmt.kind() == "if_statement" {
                let test_ok = stmt.field_child("condition").is_some_and(|c| {
                    self.test_matches(c, callee, receiver, args, negated) || self.bound_test_matches(c, &statements[..index], callee, receiver, args, negated)
                });
                let exit = stmt.field_child("consequence").and_then(block_exit);
                if let (true, Some(exit)) = (test_ok, exit) {
                    let mut values = BTreeMap::new();
                    let shown: Vec<String> = args.iter().map(ToString::to_string).collect();
                    let on = receiver.map(|r| format!("{r}; ")).unwrap_or_default();
                    values.insert("test".into(), FactValue::Text(format!("{}{callee}({on}{})", if negated { "not " } else { "" }, shown.join(", "))));
                    values.insert("exit".into(), FactValue::Text(exit.into()));
                    values.insert("before".into(), FactValue::Text(before.into()));
                    return Ok(Some(self.site.fact(*stmt, values)));
                }
            }
            // Statements after one that always exits are dead code: a guard there guards nothing.
            if statement_exit(*stmt).is_some() {
                return Ok(None);
            }
        }
        Ok(None)
    }

    /// A guard whose test is a local bound once to the reviewed call
    /// (`ok = target.startswith("-")` then `if ok:`, or `if not ok:` for a
    /// negated guard): the local is bound exactly once in the function, by a
    /// plain assignment that is one of the statements `earlier` at the top
    /// of the body (so it runs before the test on every path), and its value
    /// is a call the guard's test would accept.
    fn bound_test_matches(
        &self,
        test: Node<'a>,
        earlier: &[Node<'a>],
        callee: &str,
        receiver: Option<&ArgPattern>,
        args: &[ArgPattern],
        negated: bool,
    ) -> bool {
        let mut test = test;
        while test.kind() == "parenthesized_expression" {
            match test.named_children().find(|c| c.kind() != "comment") {
                Some(inner) => test = inner,
                None => return false,
            }
        }
        let local = match (test.kind(), negated) {
            ("identifier", false) => test,
            ("not_operator", true) => match test.field_child("argument") {
                Some(inner) if inner.kind() == "identifier" => inner,
                _ => return false,
            },
            _ => return false,
        };
        let name = local.text();
        if self.names.is_param(name) {
            return false;
        }
        let [super::binding::Binding { node, kind: super::binding::BindingKind::Value(value) }] = self.names.bindings(name) else { return false };
        let assigned_at_top = earlier.iter().any(|stmt| {
            stmt.kind() == "expression_statement"
                && stmt.named_children().filter(|c| c.kind() != "comment").collect::<Vec<_>>().as_slice().first().is_some_and(|a| {
                    a.kind() == "assignment" && a.field_child("left").is_some_and(|l| l.kind() == "identifier" && l.text() == name && *node == l)
                })
        });
        assigned_at_top && value.kind() == "call" && self.test_matches(*value, callee, receiver, args, false)
    }

    pub(super) fn test_matches(&self, test: Node<'a>, callee: &str, receiver: Option<&ArgPattern>, args: &[ArgPattern], negated: bool) -> bool {
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
                if identity(self.names, test) != Identity::Path(callee.to_owned()) {
                    return false;
                }
                let object = test.field_child("function").and_then(|f| f.field_child("object"));
                let receiver_ok = self.receiver_matches(receiver, object);
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
