//! C#'s statements and conditions as the shared guard reads them
//! ([`fcd_frontends::guard`]): `if`/`else`, blocks, `return` and `throw`,
//! `!`/`&&`/`||`/`==`, labels a `goto` may reach, and a local declared once
//! (`var ok = F(x);`) before the `if` and only read after.

use fcd_frontends::guard::{Cond, Control, GuardShape, If, binary, earlier_in_block, if_else, named, operator};
use fcd_frontends::ts::Node;

use super::facts::Cx;
use super::syntax::{inner, string_content};

/// C#'s control syntax.
pub(super) struct CsControl;

impl Control for CsControl {
    fn condition<'a>(&self, n: Node<'a>) -> Cond<'a> {
        match (n.kind(), operator(n)) {
            ("parenthesized_expression" | "await_expression", _) => inner(n).map_or(Cond::Other, |i| self.condition(i)),
            ("prefix_unary_expression", "!") => inner(n).map_or(Cond::Other, Cond::Not),
            ("binary_expression", _) => binary(n, ["&&", "||", "=="]),
            ("invocation_expression", _) => Cond::Call(n),
            ("identifier", _) => Cond::Name(n),
            _ => Cond::Other,
        }
    }

    fn if_statement<'a>(&self, stmt: Node<'a>) -> Option<If<'a>> {
        if_else(stmt, stmt.field_child("alternative"))
    }

    fn block<'a>(&self, n: Node<'a>) -> Option<Vec<Node<'a>>> {
        (n.kind() == "block").then(|| named(n).collect())
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
        matches!(
            n.kind(),
            "method_declaration"
                | "constructor_declaration"
                | "destructor_declaration"
                | "operator_declaration"
                | "conversion_operator_declaration"
                | "accessor_declaration"
                | "local_function_statement"
                | "lambda_expression"
                | "anonymous_method_expression"
        )
    }

    fn is_jump_target(&self, stmt: Node<'_>) -> bool {
        stmt.kind() == "labeled_statement"
    }
}

/// Where a use of a local only reads it: every other place (an assignment,
/// `ref`/`out`, `++`, a pattern, a second declaration, a parameter) may bind it.
fn only_read(use_: Node<'_>) -> bool {
    let Some(parent) = use_.parent() else { return false };
    match parent.kind() {
        "binary_expression" | "parenthesized_expression" | "if_statement" | "return_statement" | "conditional_expression" | "interpolation" => true,
        "prefix_unary_expression" => operator(parent) == "!",
        "argument" => parent.children().all(|c| c.is_named() || !matches!(c.text(), "ref" | "out" | "in")),
        _ => false,
    }
}

impl<'a> GuardShape<'a> for Cx<'_, 'a> {
    fn control(&self) -> &dyn Control {
        &CsControl
    }

    /// The local is declared once, alone, with a value (`var ok = F(x);`), by
    /// an earlier statement of the block holding the `if`; every other use of
    /// the name in the region only reads it.
    fn bound_once(&self, name: Node<'a>, guard: Node<'a>) -> Option<Node<'a>> {
        let text = name.text();
        let uses: Vec<Node<'a>> = self.site.region.node.descendants().filter(|n| n.kind() == "identifier" && n.text() == text).collect();
        let mut declarators = uses.iter().filter_map(|u| u.parent().filter(|p| p.kind() == "variable_declarator" && p.field_child("name") == Some(*u)));
        let (Some(declarator), None) = (declarators.next(), declarators.next()) else { return None };
        let name_node = declarator.field_child("name")?;
        let value = declarator.named_children().filter(|c| c.kind() != "comment").rfind(|c| *c != name_node)?;
        let declaration =
            declarator.parent().filter(|d| d.kind() == "variable_declaration" && named(*d).filter(|c| c.kind() == "variable_declarator").count() == 1)?;
        let statement = declaration.parent().filter(|s| s.kind() == "local_declaration_statement")?;
        let reads = uses.iter().all(|u| *u == name_node || only_read(*u));
        (reads && earlier_in_block(statement, guard)).then_some(value)
    }

    fn receiver(&self, call: Node<'a>) -> Option<(Option<String>, Node<'a>)> {
        let function = call.field_child("function").filter(|f| f.kind() == "member_access_expression")?;
        Some((None, function.field_child("expression")?))
    }
}
