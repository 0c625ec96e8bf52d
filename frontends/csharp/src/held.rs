//! Values held until the sink: what may happen to a local between the fact
//! that reads it and the call that consumes it.
//!
//! Both checks are flow-insensitive on purpose: a write anywhere in the
//! region is a write that may come between the fact and the sink.
//! [`first_write`] finds any use of a local that could change a member it
//! holds (assignment, `++`/`--`, `ref`/`out`/`in`, a method called through
//! it, or the local itself aliased, passed or returned). [`flow`] follows a
//! value to a sink call along one path of single-use locals, call arguments
//! and member initializers, and refuses any other step.

use fcd_frontends::ts::Node;

/// Occurrences of the identifier `name` in `scope` that refer to a local or
/// parameter (not the member name in `x.name`, not a named argument).
pub fn occurrences<'a>(scope: Node<'a>, name: &str) -> Vec<Node<'a>> {
    scope
        .descendants()
        .filter(|n| n.kind() == "identifier" && n.text() == name)
        .filter(|n| {
            n.parent().is_none_or(|p| {
                let member_name = matches!(p.kind(), "member_access_expression" | "member_binding_expression") && p.field_child("name") == Some(*n);
                !member_name && !super::syntax::is_argument_label(*n)
            })
        })
        .collect()
}

/// Whether an occurrence is the name a declaration introduces (not a value in it).
pub fn is_declared_name(occ: Node<'_>) -> bool {
    occ.parent().is_some_and(|p| {
        matches!(p.kind(), "variable_declarator" | "parameter" | "foreach_statement" | "catch_declaration" | "declaration_expression")
            && p.field_child("name") == Some(occ)
    })
}

/// The member chain an occurrence heads: `root.A.B` gives the outermost member access.
fn chain_top(occ: Node<'_>) -> Node<'_> {
    let mut top = occ;
    while let Some(p) = top.parent() {
        let heads = match p.kind() {
            "member_access_expression" => p.field_child("expression") == Some(top),
            "conditional_access_expression" => p.field_child("condition") == Some(top),
            "postfix_unary_expression" => p.text().ends_with('!'),
            _ => false,
        };
        if !heads {
            break;
        }
        top = p;
    }
    top
}

/// Whether `node` is written by an enclosing expression inside `scope`.
fn written(scope: Node<'_>, node: Node<'_>) -> Option<&'static str> {
    for a in node.ancestors() {
        if a == scope {
            break;
        }
        match a.kind() {
            "assignment_expression" if a.field_child("left").is_some_and(|l| l.contains(node)) => return Some("assigned"),
            "prefix_unary_expression" | "postfix_unary_expression"
                if a.text().starts_with("++") || a.text().starts_with("--") || a.text().ends_with("++") || a.text().ends_with("--") =>
            {
                return Some("incremented or decremented");
            }
            "argument" if ["ref ", "out ", "in "].iter().any(|m| a.text().starts_with(m)) => return Some("passed by reference"),
            "declaration_expression" | "tuple_pattern" => return Some("deconstructed into"),
            _ => {}
        }
    }
    None
}

/// The first use of the local `root` in `scope` that could change `root.member`
/// (or, with `member` `None`, anything `root` holds), other than the uses `allowed` accepts.
pub fn first_write<'a>(scope: Node<'a>, root: &str, member: Option<&str>, allowed: &dyn Fn(Node<'a>) -> bool) -> Option<(Node<'a>, String)> {
    for occ in occurrences(scope, root) {
        if allowed(occ) {
            continue;
        }
        if is_declared_name(occ) {
            return Some((occ, format!("`{root}` is declared again at line {}", occ.line())));
        }
        let top = chain_top(occ);
        if top == occ {
            return Some((
                occ,
                format!("`{root}` itself is used at line {} (assigned, aliased, passed or returned): the value it holds may change", occ.line()),
            ));
        }
        if let Some(how) = written(scope, top) {
            let first = top.text().split(['.', '?', '!']).nth(1).unwrap_or("");
            if member.is_none_or(|m| first.trim() == m) {
                return Some((top, format!("`{}` is {how} at line {}", top.compact_text(), top.line())));
            }
        }
        if top.parent().is_some_and(|p| p.kind() == "invocation_expression" && p.field_child("function") == Some(top)) {
            return Some((top, format!("a method is called through `{root}` at line {}", top.line())));
        }
    }
    None
}

/// The path of a flow: the locals it went through and whether it passed the member `into`.
pub struct Path {
    pub locals: Vec<String>,
    pub passed_into: bool,
}

/// Follows the value of `start` to an argument of the call `sink`, inside `scope`.
pub fn flow<'a>(scope: Node<'a>, start: Node<'a>, sink: Node<'a>, into: Option<&str>) -> Result<Path, (Node<'a>, String)> {
    let mut cur = start;
    let mut path = Path { locals: Vec::new(), passed_into: false };
    for _ in 0..10_000 {
        let Some(p) = cur.parent() else { return Err((cur, "the value leaves the region".into())) };
        if p == sink {
            return if cur.kind() == "argument_list" { Ok(path) } else { Err((cur, "the value is the sink's receiver, not its argument".into())) };
        }
        if p == scope {
            return Err((cur, "the value never reaches the sink".into()));
        }
        cur = match p.kind() {
            "argument" | "argument_list" | "parenthesized_expression" | "await_expression" | "initializer_expression" => p,
            "postfix_unary_expression" if p.text().ends_with('!') => p,
            "invocation_expression" if p.field_child("arguments") == Some(cur) => p,
            "object_creation_expression" | "implicit_object_creation_expression" if matches!(cur.kind(), "argument_list" | "initializer_expression") => p,
            "assignment_expression" if p.parent().is_some_and(|i| i.kind() == "initializer_expression") && p.field_child("right") == Some(cur) => {
                if p.field_child("left").is_some_and(|l| Some(l.text()) == into) {
                    path.passed_into = true;
                }
                p
            }
            "variable_declarator" if p.field_child("name") != Some(cur) => {
                let Some(local) = p.field_child("name").map(|n| n.text()) else { return Err((p, "a declaration without a name".into())) };
                let uses: Vec<Node<'a>> = occurrences(scope, local).into_iter().filter(|o| p.field_child("name") != Some(*o)).collect();
                match uses.as_slice() {
                    [one] if chain_top(*one) == *one => {
                        path.locals.push(local.to_owned());
                        *one
                    }
                    [one] => return Err((*one, format!("`{local}` is used through a member at line {}", one.line()))),
                    _ => return Err((p, format!("`{local}` is used {} times; a value held until the sink is used once", uses.len()))),
                }
            }
            other => {
                return Err((p, format!("the value goes into a {other} at line {} (`{}`)", p.line(), p.compact_text().chars().take(60).collect::<String>())));
            }
        };
    }
    Err((cur, "the flow is too long".into()))
}
