//! JavaScript's statements and conditions as the shared guard reads them
//! ([`fcd_frontends::guard`]): `if`/`else`, blocks and `case` bodies, `return` and
//! `throw`, `!`/`&&`/`||`/`===`, and a local declared once before the `if`.

use fcd_frontends::guard::{Cond, Control, If, binary, if_else, named, operator};
use fcd_frontends::ts::Node;

use super::FUNCTIONS;
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

/// How a statement leaves its function on every path, if it does; with
/// `returns`, a return must carry that string literal ([`fcd_frontends::guard::exits`]).
pub(super) fn exits(stmt: Node<'_>, returns: Option<&str>) -> Option<std::collections::BTreeSet<&'static str>> {
    fcd_frontends::guard::exits(&JsControl, stmt, returns)
}
