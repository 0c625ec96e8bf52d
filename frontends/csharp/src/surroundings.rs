//! Checks over the whole closure, before any fact: what could run, or change
//! what a name means, where no region shows it.
//!
//! - Conditional compilation (`#if`, `#define`, …): fcd reads one text and
//!   does not know the build's symbols, so any branch could be the one compiled.
//! - Code that runs implicitly: static constructors, finalizers, user-defined
//!   operators and conversions.
//! - Names as spelled: a callee identity is a spelling, and the closure can
//!   make a reviewed spelling bind to unreviewed code: a method (or extension
//!   method) of that name declared in the closure that is not a region, a
//!   `using` alias or a type of the closure named like a callee's receiver,
//!   a local or member named like a bare callee, a base class in the closure.
//! - Option definitions a `default` fact reads: used only as `X.Name` reads or
//!   as arguments inside regions (whose calls are reviewed), never written,
//!   never aliased, of a type the closure does not shadow.

use fcd_frontends::frontend::Region;
use fcd_frontends::ir::{Escalation, EscalationCode, Identity};
use fcd_frontends::spec::{FactKind, FactSpec};
use fcd_frontends::ts::{Node, Syntax};
use fcd_model::effect::Anchor;

use super::settings::Settings;
use super::{TYPES, plain};

fn at(path: &str, n: Node<'_>, detail: String) -> Escalation {
    Escalation::new(EscalationCode::ShapeMismatch, detail, Some(Anchor::new(path, n.line(), n.end_line(), n.text())))
}

const CONDITIONAL: &[&str] = &["preproc_if", "preproc_elif", "preproc_else", "preproc_define", "preproc_undef", "preproc_if_in_attribute_list"];

/// Constructs that escalate wherever they are in the closure.
fn forbidden(n: Node<'_>) -> Option<&'static str> {
    match n.kind() {
        k if CONDITIONAL.contains(&k) => Some("conditional compilation: fcd reads one text and does not know which branch the build compiles"),
        "constructor_declaration" if n.children().any(|c| c.kind() == "modifier" && c.text() == "static") => {
            Some("a static constructor runs code no region shows")
        }
        "destructor_declaration" => Some("a finalizer runs code no region shows"),
        "operator_declaration" | "conversion_operator_declaration" => Some("a user-defined operator or conversion runs code where no call is written"),
        "using_directive" if n.children().any(|c| c.text() == "static") => Some("`using static` makes members callable by a bare name"),
        _ => None,
    }
}

/// Runs every closure-wide check.
pub fn check(regions: &[Region<'_>], calls: &[Vec<(Node<'_>, Identity)>], facts: &[FactSpec]) -> Result<(), Escalation> {
    let Some(first) = regions.first() else { return Ok(()) };
    let trees = first.trees;
    for (path, syntax) in trees {
        if let Some((n, why)) = syntax.root().descendants().find_map(|n| forbidden(n).map(|w| (n, w))) {
            return Err(at(path, n, why.to_owned()));
        }
    }
    // Methods with a body that no region reads, by name, read once for every region's method groups.
    let mut unread: std::collections::BTreeMap<&str, (&str, Node<'_>)> = std::collections::BTreeMap::new();
    for (path, syntax) in trees {
        for m in syntax.root().descendants().filter(|n| matches!(n.kind(), "method_declaration" | "local_function_statement")) {
            if let Some(name) = name_of(m).filter(|_| has_body(m) && !is_region(regions, m)) {
                unread.entry(name).or_insert((*path, m));
            }
        }
    }
    for (region, region_calls) in regions.iter().zip(calls) {
        for (node, identity) in region_calls {
            if let Identity::Path(p) = identity {
                spelled(region, regions, *node, p)?;
            }
        }
        method_groups(region, &unread)?;
    }
    for spec in facts {
        if let FactKind::Default { definition: Some(definition), .. } = &spec.kind {
            definition_uses(trees, regions, definition)?;
        }
    }
    Ok(())
}

/// A method of the closure handed on as a value (a method group: `items.
/// Select(Transform)`, `Func<int> f = Helper.Make;`) runs as surely as a
/// call, wherever the receiver calls it: it must be a region, as a called
/// one must. A name that is also a method of the closure counts as one (a
/// local or property of that name escalates too).
fn method_groups(region: &Region<'_>, unread: &std::collections::BTreeMap<&str, (&str, Node<'_>)>) -> Result<(), Escalation> {
    for n in region.node.descendants().filter(|n| matches!(n.kind(), "identifier" | "member_access_expression")) {
        let Some(parent) = n.parent() else { continue };
        let value = match parent.kind() {
            "argument" | "return_statement" | "arrow_expression_clause" | "initializer_expression" => true,
            "assignment_expression" => parent.field_child("right") == Some(n),
            // `T f = Note;`: the declarator holds its value beside its name.
            "variable_declarator" => parent.field_child("name") != Some(n),
            _ => false,
        };
        let name = if n.kind() == "member_access_expression" { n.field_child("name").map(|i| i.text()) } else { Some(n.text()) };
        let Some(name) = name.filter(|_| value) else { continue };
        if let Some((path, m)) = unread.get(name) {
            return Err(at(
                region.file,
                n,
                format!(
                    "hands on `{}` as a value, and a method `{name}` declared in the closure ({path}:{}) is not a region: whatever receives it may call it, and its body is unread",
                    n.text(),
                    m.line()
                ),
            ));
        }
    }
    Ok(())
}

/// The segments of a dotted identity, without call parentheses and type
/// arguments: `a.B<int>().C` is `[a, B, C]`; a creation segment keeps `new T`.
fn segments(path: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0i32;
    for c in path.chars() {
        match c {
            '<' | '(' => depth += 1,
            '>' | ')' => depth -= 1,
            '.' if depth == 0 => out.push(std::mem::take(&mut cur)),
            _ if depth == 0 => cur.push(c),
            _ => {}
        }
    }
    out.push(cur);
    out
}

/// The class (or struct/record) declaration around a node.
fn class_of(n: Node<'_>) -> Option<Node<'_>> {
    n.ancestors().find(|a| TYPES.contains(&a.kind()))
}

fn name_of(n: Node<'_>) -> Option<&str> {
    n.field_child("name").map(|i| i.text())
}

/// Methods with a body named `m` in the closure, with their file.
fn methods<'a>(trees: &[(&'a str, &'a Syntax)], m: &str) -> Vec<(&'a str, Node<'a>)> {
    let mut out = Vec::new();
    for (path, syntax) in trees {
        for n in syntax.root().descendants().filter(|n| matches!(n.kind(), "method_declaration" | "local_function_statement")) {
            if has_body(n) && name_of(n) == Some(m) {
                out.push((*path, n));
            }
        }
    }
    out
}

/// Whether a method declaration has a body (a block or `=> …`), not only a signature.
fn has_body(n: Node<'_>) -> bool {
    n.field_child("body").is_some() || n.children().any(|c| c.kind() == "arrow_expression_clause")
}

fn is_region(regions: &[Region<'_>], n: Node<'_>) -> bool {
    regions.iter().any(|r| r.node == n)
}

/// The first base class (not interface) of `class` that the closure declares.
fn base_class_in_closure(trees: &[(&str, &Syntax)], class: Option<Node<'_>>) -> Option<String> {
    let names = class.map(base_type_names).unwrap_or_default();
    names.into_iter().find(|b| plain::declarations(trees, b).iter().any(|(_, d)| d.kind() != "interface_declaration"))
}

fn base_type_names(class: Node<'_>) -> Vec<String> {
    class
        .named_children()
        .filter(|c| c.kind() == "base_list")
        .flat_map(|b| b.named_children().filter(|c| c.kind() != "comment").map(|c| plain::simple_name(c.field_child("type").unwrap_or(c))).collect::<Vec<_>>())
        .collect()
}

/// Whether the spelling `path` of a call in `region` can bind to code fcd does not analyze.
fn spelled(region: &Region<'_>, regions: &[Region<'_>], call: Node<'_>, path: &str) -> Result<(), Escalation> {
    let trees = region.trees;
    // `T#rest`: the receiver is a value of the type T, spelled by what it is.
    let (segs, typed) = match path.split_once('#') {
        Some((ty, rest)) => {
            let simple = ty.split('<').next().unwrap_or(ty);
            let simple = simple.rsplit('.').next().unwrap_or(simple).to_owned();
            (std::iter::once(simple).chain(segments(rest)).collect::<Vec<_>>(), true)
        }
        None => (segments(path), false),
    };
    let class = class_of(region.node);
    let fail = |detail: String| Err(at(region.file, call, format!("`{path}`: {detail}")));
    if let Some(ty) = segs[0].strip_prefix("new ") {
        plain::check(trees, ty.trim(), &format!("created by `{path}` in region `{}`", region.name), &Settings::of(region.env).inert_attributes)?;
    }
    if path == "new()" {
        let types = super::target::created_types(trees, call)
            .map_err(|why| at(region.file, call, format!("`{}`: fcd cannot tell which type it creates ({why})", call.compact_text())))?;
        for ty in types {
            plain::check(trees, &ty, &format!("created by `{}` in region `{}`", call.compact_text(), region.name), &Settings::of(region.env).inert_attributes)?;
        }
    }
    let root = segs[0].as_str();
    let bare = !typed && (segs.len() == 1 || root == "this");
    for (file, syntax) in trees {
        for alias in syntax.root().descendants().filter(|n| n.kind() == "using_directive" && n.field_child("name").is_some()) {
            if name_of(alias) == Some(root) || (bare && name_of(alias) == segs.last().map(String::as_str)) {
                return Err(at(file, alias, format!("the alias `{}` ({file}:{}) changes what `{path}` names", alias.text().trim(), alias.line())));
            }
        }
    }
    if !typed && root.starts_with(|c: char| c.is_uppercase()) && !segs[0].starts_with("new ") && segs.len() > 1 {
        if let Some(local) = super::held::occurrences(region.node, root).into_iter().find(|o| super::held::is_declared_name(*o)) {
            return fail(format!("a local `{root}` at line {} hides the type the callee names", local.line()));
        }
        if let Some((file, decl)) = plain::declarations(trees, root).first() {
            let method = segs.get(1).map(String::as_str).unwrap_or("");
            if !methods(trees, method).iter().any(|(_, m)| is_region(regions, *m) && class_of(*m) == Some(*decl)) {
                return fail(format!("the closure declares a type `{root}` ({file}:{}) that shadows the one the callee names", decl.line()));
            }
        }
    }
    if root == "base" {
        return match base_class_in_closure(trees, class) {
            Some(b) => fail(format!("the base class `{b}` is declared in the closure; fcd does not analyze its methods")),
            None => Ok(()),
        };
    }
    let method_segs: Vec<&String> = segs.iter().skip(if bare && root != "this" { 0 } else { 1 }).filter(|s| !s.starts_with("new ")).collect();
    for m in method_segs {
        for (file, decl) in methods(trees, m) {
            if bare && class_of(decl) != class && !region.node.contains(decl) {
                continue;
            }
            if !is_region(regions, decl) {
                return fail(format!("`{m}` is declared at {file}:{}, which fcd does not analyze; the call may bind to it", decl.line()));
            }
        }
    }
    if bare {
        let m = segs.last().map(String::as_str).unwrap_or("");
        let scopes = [Some(region.node), class].into_iter().flatten();
        for scope in scopes {
            let shadow =
                scope.descendants().find(|n| matches!(n.kind(), "variable_declarator" | "parameter" | "property_declaration") && name_of(*n) == Some(m));
            if let Some(s) = shadow {
                return fail(format!("`{m}` is also a variable or property at line {}: the call may invoke it", s.line()));
            }
        }
        if let Some(b) = base_class_in_closure(trees, class) {
            return fail(format!("the base class `{b}` is declared in the closure; fcd does not analyze what `{m}` binds to there"));
        }
    }
    Ok(())
}

/// The option definition `Class.Field` is only read (`.Name`) or passed to a
/// call inside a region; its declared type is not shadowed by the closure.
fn definition_uses(trees: &[(&str, &Syntax)], regions: &[Region<'_>], definition: &str) -> Result<(), Escalation> {
    let Some((class, field)) = definition.rsplit_once('.') else { return Ok(()) };
    for (path, syntax) in trees {
        for n in syntax.root().descendants() {
            let qualified = n.kind() == "member_access_expression"
                && n.field_child("name").is_some_and(|x| x.text() == field)
                && n.field_child("expression").is_some_and(|e| e.text() == class || e.text().ends_with(&format!(".{class}")));
            let inside_class = n.kind() == "identifier"
                && n.text() == field
                && class_of(n).and_then(name_of) == Some(class)
                && n.parent().is_some_and(|p| !matches!(p.kind(), "member_access_expression" | "member_binding_expression" | "variable_declarator"))
                && !super::syntax::is_argument_label(n)
                && !n.parent().is_some_and(|p| p.kind() == "assignment_expression" && p.parent().is_some_and(|i| i.kind() == "initializer_expression"));
            let declared_here = n.kind() == "variable_declarator" && name_of(n) == Some(field) && class_of(n).and_then(name_of) == Some(class);
            if declared_here {
                let ty = n.parent().and_then(|d| d.field_child("type")).map(plain::simple_name).unwrap_or_default();
                if let Some((file, decl)) = plain::declarations(trees, &ty).first() {
                    return Err(at(
                        file,
                        *decl,
                        format!("the closure declares `{ty}` ({file}:{}), the type of the option definition `{definition}`", decl.line()),
                    ));
                }
            }
            if !(qualified || inside_class) {
                continue;
            }
            let read_name = n.parent().is_some_and(|p| {
                p.kind() == "member_access_expression"
                    && p.field_child("expression") == Some(n)
                    && p.field_child("name").is_some_and(|x| x.text() == "Name")
                    && p.parent().is_none_or(|g| !(g.kind() == "assignment_expression" && g.field_child("left") == Some(p)))
            });
            let in_region = regions.iter().any(|r| r.file == *path && r.node.contains(n));
            let passed = n.parent().is_some_and(|p| matches!(p.kind(), "argument" | "collection_expression" | "expression_element")) && in_region;
            if !(read_name || passed) {
                return Err(at(
                    path,
                    n,
                    format!(
                        "the option definition `{definition}` is used at {path}:{} other than as `.Name` or as an argument in a region: its default may change",
                        n.line()
                    ),
                ));
            }
        }
    }
    Ok(())
}
