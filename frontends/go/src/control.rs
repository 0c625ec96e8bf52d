//! Go's statements and conditions as the shared guard reads them
//! ([`fcd_frontends::guard`]): `if`/`else`, blocks, `return`, `!`/`&&`/`||`/`==`,
//! labels a `goto` may reach, and a local bound once by `ok := f(x)`, before
//! the `if` or in its own initializer (`if ok := f(x); !ok {`). The error
//! idiom reads the same way: `if err := check(x); err != nil {` holds the call
//! (it failed), `== nil` its negation, and `v, err := check(x)` binds `err` to
//! the call's last result, its error.

use fcd_frontends::guard::{Cond, Control, GuardShape, If, binary, earlier_in_block, if_else, named, operator, parenthesized};
use fcd_frontends::ts::Node;

use super::facts::Cx;
use super::syntax::string_content;

/// The side of `X != nil` / `X == nil` that is not `nil`, when it is a call or a name.
fn nil_compared(n: Node<'_>) -> Option<Node<'_>> {
    let (l, r) = (n.field_child("left")?, n.field_child("right")?);
    let other = match (l.kind(), r.kind()) {
        (_, "nil") => l,
        ("nil", _) => r,
        _ => return None,
    };
    matches!(other.kind(), "call_expression" | "identifier").then_some(other)
}

/// Go's control syntax.
pub(super) struct GoControl;

impl Control for GoControl {
    fn condition<'a>(&self, n: Node<'a>) -> Cond<'a> {
        match (n.kind(), operator(n)) {
            ("parenthesized_expression", _) => parenthesized(self, n),
            ("unary_expression", "!") => n.field_child("operand").map_or(Cond::Other, Cond::Not),
            // The error idiom: a result compared with `nil` is the call failing (`!= nil`) or not (`== nil`).
            ("binary_expression", op @ ("!=" | "==")) if nil_compared(n).is_some() => match (op, nil_compared(n)) {
                ("!=", Some(v)) => Cond::Fails(v),
                (_, Some(v)) => Cond::Succeeds(v),
                _ => Cond::Other,
            },
            ("binary_expression", _) => binary(n, ["&&", "||", "=="]),
            ("call_expression", _) => Cond::Call(n),
            ("identifier", _) => Cond::Name(n),
            _ => Cond::Other,
        }
    }

    fn if_statement<'a>(&self, stmt: Node<'a>) -> Option<If<'a>> {
        if_else(stmt, stmt.field_child("alternative"))
    }

    /// A block's statements are its statement list's; the list is the block
    /// the guard walks through.
    fn block<'a>(&self, n: Node<'a>) -> Option<Vec<Node<'a>>> {
        match n.kind() {
            "statement_list" => Some(named(n).collect()),
            "block" => Some(named(n).find(|c| c.kind() == "statement_list").map(|l| named(l).collect()).unwrap_or_default()),
            _ => None,
        }
    }

    fn leaves(&self, stmt: Node<'_>) -> Option<&'static str> {
        // `panic(…)` is a call like any other: the name may be shadowed, and a deferred `recover` resumes.
        (stmt.kind() == "return_statement").then_some("return")
    }

    fn string(&self, n: Node<'_>) -> Option<String> {
        string_content(n)
    }

    fn is_function(&self, n: Node<'_>) -> bool {
        matches!(n.kind(), "function_declaration" | "method_declaration" | "func_literal")
    }

    fn is_jump_target(&self, stmt: Node<'_>) -> bool {
        stmt.kind() == "labeled_statement"
    }
}

impl<'a> GuardShape<'a> for Cx<'_, 'a> {
    fn control(&self) -> &dyn Control {
        &GoControl
    }

    /// The local's one binding in the region is `name := VALUE` (one name,
    /// one value), an earlier statement of the block holding the `if` or the
    /// `if`'s own initializer; and its address is never taken (`&name`
    /// would let a pointer change it).
    fn bound_once(&self, name: Node<'a>, guard: Node<'a>) -> Option<Node<'a>> {
        let text = name.text();
        if self.names.is_param(text) {
            return None;
        }
        let [site] = self.names.sites(text)[..] else { return None };
        let left = site.parent().filter(|l| l.kind() == "expression_list" && named(*l).count() == 1)?;
        let declaration = left.parent().filter(|d| d.kind() == "short_var_declaration" && d.field_child("left") == Some(left))?;
        if declaration.field_child("right").is_none_or(|r| named(r).count() != 1) {
            return None;
        }
        let addressed = self.addressed(text);
        let before = earlier_in_block(declaration, guard) || guard.field_child("initializer") == Some(declaration);
        (before && !addressed).then(|| self.names.value(site)).flatten()
    }

    fn receiver(&self, call: Node<'a>) -> Option<Node<'a>> {
        call.field_child("function").filter(|f| f.kind() == "selector_expression").and_then(|f| f.field_child("operand"))
    }

    /// `v, err := f(x)`: `err` the last of the names, bound nowhere else and
    /// never address-taken, the one value a call, the declaration before the
    /// `if` in its block or the `if`'s initializer. Go puts the error last.
    fn bound_to_last_result(&self, name: Node<'a>, guard: Node<'a>) -> Option<Node<'a>> {
        let text = name.text();
        if self.names.is_param(text) || self.addressed(text) {
            return None;
        }
        let [site] = self.names.sites(text)[..] else { return None };
        let left = site.parent().filter(|l| l.kind() == "expression_list" && named(*l).last() == Some(site))?;
        let declaration = left.parent().filter(|d| d.kind() == "short_var_declaration" && d.field_child("left") == Some(left))?;
        let [call] = declaration.field_child("right").map(|r| named(r).collect::<Vec<_>>())?[..] else { return None };
        let before = earlier_in_block(declaration, guard) || guard.field_child("initializer") == Some(declaration);
        (before && call.kind() == "call_expression").then_some(call)
    }
}

impl Cx<'_, '_> {
    /// Whether the region takes the address of `name` (`&name`): a pointer could change it.
    fn addressed(&self, name: &str) -> bool {
        self.site.region.node.descendants().any(|n| {
            n.kind() == "unary_expression" && operator(n) == "&" && n.field_child("operand").is_some_and(|o| o.kind() == "identifier" && o.text() == name)
        })
    }
}
