//! JavaScript's statements and conditions as the shared guard reads them
//! ([`crate::guard`]): `if`/`else`, blocks and `case` bodies, `return` and
//! `throw`, `!`/`&&`/`||`/`===`, and a local declared once before the `if`.

use crate::facts::CallShape;
use crate::guard::{Cond, Control, GuardShape, If, binary, declared_async, earlier_in_block, if_else, last_segment, named, operator};
use crate::ts::Node;

use super::FUNCTIONS;
use super::facts::Cx;
use super::syntax::{bare, string_content};

/// JavaScript's (and TypeScript's) control syntax.
pub(super) struct JsControl;

impl Control for JsControl {
    fn condition<'a>(&self, n: Node<'a>) -> Cond<'a> {
        let c = bare(n);
        match (c.kind(), operator(c)) {
            ("unary_expression", "!") => c.field_child("argument").map_or(Cond::Other, Cond::Not),
            ("binary_expression", _) => binary(c, ["&&", "||", "==="]),
            ("call_expression", _) => Cond::Call(c),
            ("identifier", _) => Cond::Name(c),
            _ => Cond::Other,
        }
    }

    fn if_statement<'a>(&self, stmt: Node<'a>) -> Option<If<'a>> {
        if_else(stmt, stmt.field_child("alternative").and_then(|e| named(e).next()))
    }

    fn block<'a>(&self, n: Node<'a>) -> Option<Vec<Node<'a>>> {
        match n.kind() {
            "statement_block" => Some(named(n).collect()),
            // A `case` runs its statements in order (a case falling into it ran its own first).
            "switch_case" | "switch_default" => Some(n.field_children("body").filter(|c| c.kind() != "comment").collect()),
            _ => None,
        }
    }

    fn leaves(&self, stmt: Node<'_>) -> Option<&'static str> {
        match stmt.kind() {
            "return_statement" => Some("return"),
            "throw_statement" => Some("throw"),
            _ => None,
        }
    }

    fn string(&self, n: Node<'_>) -> Option<String> {
        string_content(n)
    }

    fn is_function(&self, n: Node<'_>) -> bool {
        FUNCTIONS.contains(&n.kind())
    }
}

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
