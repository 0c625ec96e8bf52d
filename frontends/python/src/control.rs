//! Python's statements and conditions as the shared guard reads them
//! ([`fcd_frontends::guard`]): `if`/`elif`/`else`, blocks, `raise` and `return`,
//! `not`/`and`/`or`/`==`, and a local bound once by a plain assignment.

use fcd_frontends::facts::CallShape;
use fcd_frontends::guard::{Cond, Control, GuardShape, If, declared_async, earlier_in_block, last_segment, named, operator, parenthesized};
use fcd_frontends::ts::Node;

use super::bindings::{BindingKind, is_function};
use super::facts::Cx;
use super::syntax::plain_string;

/// Python's control syntax.
pub(super) struct PythonControl;

impl Control for PythonControl {
    fn condition<'a>(&self, n: Node<'a>) -> Cond<'a> {
        match n.kind() {
            "parenthesized_expression" => parenthesized(self, n),
            "not_operator" => n.field_child("argument").map_or(Cond::Other, Cond::Not),
            "boolean_operator" => match (n.field_child("left"), n.field_child("right"), operator(n)) {
                (Some(l), Some(r), "and") => Cond::And(l, r),
                (Some(l), Some(r), "or") => Cond::Or(l, r),
                _ => Cond::Other,
            },
            // One `==` between two operands (a chain `a == b == c` is no equality).
            "comparison_operator" => {
                let operators: Vec<&str> = n.children().filter(|c| !c.is_named()).map(|c| c.text()).collect();
                let operands: Vec<Node<'a>> = named(n).collect();
                match (operators.as_slice(), operands.as_slice()) {
                    (["=="], [l, r]) => Cond::Equals(*l, *r),
                    _ => Cond::Other,
                }
            }
            "call" => Cond::Call(n),
            "identifier" => Cond::Name(n),
            _ => Cond::Other,
        }
    }

    fn if_statement<'a>(&self, stmt: Node<'a>) -> Option<If<'a>> {
        if stmt.kind() != "if_statement" {
            return None;
        }
        let mut alternatives = Vec::new();
        let mut otherwise = false;
        for alt in stmt.field_children("alternative") {
            otherwise |= alt.kind() == "else_clause";
            alternatives.push(alt.field_child("consequence").or_else(|| alt.field_child("body"))?);
        }
        Some(If { condition: stmt.field_child("condition")?, consequence: stmt.field_child("consequence")?, alternatives, otherwise })
    }

    fn block<'a>(&self, n: Node<'a>) -> Option<Vec<Node<'a>>> {
        (n.kind() == "block").then(|| named(n).collect())
    }

    fn leaves(&self, stmt: Node<'_>) -> Option<&'static str> {
        match stmt.kind() {
            "raise_statement" => Some("raise"),
            "return_statement" => Some("return"),
            // A `with` body that raises does not leave the function: the context
            // manager's `__exit__` may swallow the exception (the `with` is no block here).
            _ => None,
        }
    }

    fn string(&self, n: Node<'_>) -> Option<String> {
        plain_string(n)
    }

    fn is_function(&self, n: Node<'_>) -> bool {
        is_function(n)
    }
}

impl<'a> GuardShape<'a> for Cx<'_, 'a> {
    fn control(&self) -> &dyn Control {
        &PythonControl
    }

    /// The local's one binding in the function is `name = VALUE`, a plain
    /// assignment that is a whole statement of the block holding the `if`,
    /// before it.
    fn bound_once(&self, name: Node<'a>, guard: Node<'a>) -> Option<Node<'a>> {
        if self.names.is_param(name.text()) {
            return None;
        }
        let [super::bindings::Binding { node, kind: BindingKind::Value(value) }] = self.names.bindings(name.text()) else { return None };
        let assignment = node.parent().filter(|a| a.kind() == "assignment" && a.field_child("left") == Some(*node) && node.kind() == "identifier")?;
        let statement = assignment.parent().filter(|s| s.kind() == "expression_statement" && named(*s).count() == 1)?;
        earlier_in_block(statement, guard).then_some(*value)
    }

    fn receiver(&self, call: Node<'a>) -> Option<Node<'a>> {
        call.field_child("function").filter(|f| f.kind() == "attribute").and_then(|f| f.field_child("object"))
    }

    /// A call of an `async def` is a coroutine, always true; an awaited one
    /// never reaches here (`await` is no condition this reads).
    fn unawaited_async(&self, call: Node<'a>) -> bool {
        let names = call.field_child("function").map(|f| f.text().rsplit('.').next().unwrap_or_default().to_owned());
        let id = self.callee(call);
        [names, id.as_ref().and_then(last_segment).map(str::to_owned)]
            .into_iter()
            .flatten()
            .any(|n| declared_async(self.site.region.trees, &n, &["function_definition"]))
    }
}
