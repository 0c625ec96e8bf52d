//! A module-level constant as a region (`[regions.R] variable = "NAME"`): a
//! table a reviewed function reads (an address list, a set of schemes).
//!
//! A `body` fact pins the function that reads the table, but not the table:
//! the release could change the list and keep the function. So the table is
//! a region of its own, its assignment pinned by a `body` fact, and it must
//! stay what that assignment made it. The checks are narrow on purpose: the
//! name is bound once, at module level, by a plain assignment; and every
//! other use of it in the loaded files only reads it as a whole, as what a
//! `for … in` iterates or the right side of `in` / `not in`. Anything else
//! (a method call that could mutate it, an item or attribute write, passing
//! it to a function, `global`, `del`, importing it into another module)
//! escalates, naming the use.

use fcd_frontends::frontend::Region;
use fcd_frontends::ir::{Escalation, EscalationCode};
use fcd_frontends::ts::{Node, Syntax};

use super::bindings;

/// The module-level assignments `NAME = …` (annotated or not) of a file.
pub fn find<'a>(syntax: &'a Syntax, name: &str) -> Vec<Node<'a>> {
    syntax
        .root()
        .named_children()
        .filter(|st| st.kind() == "expression_statement")
        .filter_map(|st| st.named_children().next())
        .filter(|a| a.kind() == "assignment" && a.field_child("right").is_some())
        .filter(|a| a.field_child("left").is_some_and(|l| l.kind() == "identifier" && l.text() == name))
        .collect()
}

/// The constant region's name is bound once and only read as a whole.
pub fn check(region: &Region<'_>) -> Result<(), Escalation> {
    let Some(left) = region.node.field_child("left") else { return Ok(()) };
    let name = left.text();
    let escalate = |file: &str, node: Node<'_>, why: &str| {
        Escalation::new(
            EscalationCode::ShapeMismatch,
            format!("region `{}`: the constant `{name}` {why} at line {}, so the reviewed table may not be what the release reads", region.name, node.line()),
            Some(fcd_model::effect::Anchor::new(file, node.line(), node.end_line(), node.text())),
        )
    };
    let root = region.node.ancestors().last().unwrap_or(region.node);
    let bindings = bindings::bindings_at(root, Some(name)).remove(name).unwrap_or_default();
    if let Some(other) = bindings.iter().find(|b| b.node != left) {
        return Err(escalate(region.file, other.node, "is bound again"));
    }
    for (file, syntax) in region.trees.iter().filter(|(p, _)| p.ends_with(".py")) {
        for use_ in syntax.root().descendants().filter(|n| n.kind() == "identifier" && n.text() == name && *n != left) {
            if let Some(why) = not_a_read(use_) {
                return Err(escalate(file, use_, why));
            }
        }
    }
    Ok(())
}

/// Why one occurrence of the name is not a read of the whole table, if it is not.
fn not_a_read(use_: Node<'_>) -> Option<&'static str> {
    let parent = use_.parent()?;
    match parent.kind() {
        // `for x in NAME`, `[… for x in NAME]`.
        "for_statement" | "for_in_clause" if parent.field_child("right") == Some(use_) => None,
        // `x in NAME`, `x not in NAME`.
        "comparison_operator" => {
            let operands: Vec<Node<'_>> = parent.named_children().filter(|c| c.kind() != "comment").collect();
            let operators: Vec<&str> = parent.children().filter(|c| !c.is_named()).map(|c| c.kind()).collect();
            let membership = operands.len() == 2 && operands[1] == use_ && matches!(operators.as_slice(), ["in"] | ["not in"]);
            (!membership).then_some("is used other than as a whole (`for … in`, `in`)")
        }
        // `obj.NAME` is another name's attribute, `f(NAME=…)` a keyword.
        "attribute" if parent.field_child("attribute") == Some(use_) => None,
        "keyword_argument" if parent.field_child("name") == Some(use_) => None,
        "import_from_statement" | "dotted_name" | "aliased_import" => Some("is imported"),
        "global_statement" | "nonlocal_statement" => Some("is declared global"),
        _ => Some("is used other than as a whole (`for … in`, `in`)"),
    }
}
