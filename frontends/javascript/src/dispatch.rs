//! Calls a receiver's class decides: every method of the release that could answer.
//!
//! `connector.executeSQL(sql)` names no definition. Which body runs depends
//! on the object the receiver holds at run time: a connector the registry
//! returns, an element of a table, a parameter. fcd does not know that
//! object's class, and a profile that trusts the method by its name lets any
//! class of the release answer with any body (a connector whose `executeSQL`
//! gains a write while every identity stays the same).
//!
//! So a call `o.m(…)` whose receiver is not fixed (a local, a parameter, a
//! call's result, an element, a module-level value that is not `new C(…)`)
//! may reach every definition of `m` the loaded release holds, and each must
//! be bound like any other release code the regions call:
//!
//! - an instance member `m` (method, accessor or field) of a class,
//!   declared or bound to a class expression at the top of its file: a
//!   region `C.m`, or pinned by the digest of its class's closure
//!   (`source.pinned-functions`, `"C"` or `"C.m"`);
//! - a function property `m` of an object literal, or a function assigned
//!   to a member `m` anywhere: no region can name it, so it escalates.
//!
//! A receiver that is a package's import or a global (`JSON`, `fs.promises`)
//! reaches no release code: its methods are the package's. A method no
//! release definition has (`trim`, `join`) reaches no release code either.

use fcd_frontends::frontend::Program;
use fcd_frontends::ts::Node;

use super::FUNCTIONS;
use super::syntax::bare;

/// A definition of a method name in the loaded release.
pub(super) struct Implementation<'a> {
    pub(super) file: &'a str,
    /// The node defining it (a class member, an object property, an assignment).
    pub(super) node: Node<'a>,
    /// The class, by the name it is bound to at the top of its file
    /// (`class C`, `var C = class _C {…}`); `None` for an object literal's
    /// property, a member assignment, or a class bound to no name at the top.
    pub(super) class: Option<String>,
}

/// Every definition of an instance method `method` in the loaded files.
pub(super) fn implementations<'a>(program: &Program<'a, '_>, method: &str) -> Vec<Implementation<'a>> {
    let mut out = Vec::new();
    for (file, syntax) in program.trees {
        for n in syntax.root().descendants() {
            match n.kind() {
                "method_definition" | "field_definition" | "public_field_definition"
                    if n.parent().is_some_and(|b| b.kind() == "class_body")
                        && !super::is_static(n)
                        && super::class_member_name(n).as_deref() == Some(method) =>
                {
                    out.push(Implementation { file, node: n, class: top_level_class(n) });
                }
                "method_definition" if n.parent().is_some_and(|o| o.kind() == "object") && super::class_member_name(n).as_deref() == Some(method) => {
                    out.push(Implementation { file, node: n, class: None });
                }
                "pair" if key(n).as_deref() == Some(method) && n.field_child("value").is_some_and(|v| FUNCTIONS.contains(&bare(v).kind())) => {
                    out.push(Implementation { file, node: n, class: None });
                }
                "assignment_expression"
                    if n.field_child("left").is_some_and(|l| l.kind() == "member_expression" && l.field_child("property").is_some_and(|p| p.text() == method)) =>
                {
                    out.push(Implementation { file, node: n, class: None });
                }
                _ => {}
            }
        }
    }
    out
}

/// The method a call dispatches on its receiver's class, when the receiver
/// is not fixed: `m` of `a.b().m`, `x.m` (`x` a local or parameter), `t[].m`.
/// `this.m`, a package's or a global's member chain (`fs.promises.readFile`),
/// and a call of a name (`f(…)`) dispatch nothing here.
pub(super) fn dispatched(path: &str, fixed: impl Fn(&str) -> bool) -> Option<&str> {
    if path.starts_with("new ") || path.starts_with("handed ") {
        return None;
    }
    let (receiver, method) = path.rsplit_once('.')?;
    if method.is_empty() || !method.chars().all(|c| c == '_' || c == '$' || c.is_alphanumeric()) {
        return None;
    }
    let root = receiver.split(['.', '[', '(']).next().unwrap_or_default();
    let chained = receiver.len() > root.len() && receiver[root.len()..].contains(['(', '[']);
    (root != "this" && (chained || !fixed(root))).then_some(method)
}

/// The name the class of `member` is bound to at the top of its file.
fn top_level_class(member: Node<'_>) -> Option<String> {
    let class = member.parent()?.parent()?;
    let bound = match class.kind() {
        "class_declaration" => class,
        "class" => class.parent().filter(|d| d.kind() == "variable_declarator")?,
        _ => return None,
    };
    // Declared at the top: in the program, an export, or a top-level `var`/`let`/`const`.
    let mut up = bound.parent()?;
    if matches!(up.kind(), "lexical_declaration" | "variable_declaration") {
        up = up.parent()?;
    }
    if up.kind() == "export_statement" {
        up = up.parent()?;
    }
    (up.kind() == "program").then(|| bound.field_child("name").map(|n| n.text().to_owned())).flatten()
}

/// The key of an object property (`m: …`, `"m": …`).
fn key(pair: Node<'_>) -> Option<String> {
    let k = pair.field_child("key")?;
    Some(super::syntax::string_content(k).unwrap_or_else(|| k.text().to_owned()))
}

#[cfg(test)]
mod tests {
    use super::dispatched;

    #[test]
    fn a_receiver_not_fixed_dispatches_its_method() {
        let locals = |root: &str| matches!(root, "JSON" | "fs" | "ConnectorManager");
        assert_eq!(dispatched("ConnectorManager.getCurrentConnector().executeSQL", locals), Some("executeSQL"));
        assert_eq!(dispatched("connector.executeSQL", locals), Some("executeSQL"));
        assert_eq!(dispatched("allowedKeywords[].join", locals), Some("join"));
        assert_eq!(dispatched("new Date().toISOString", locals), None, "a constructor call is not a dispatch");
        assert_eq!(dispatched("JSON.stringify", locals), None);
        assert_eq!(dispatched("fs.promises.readFile", locals), None);
        assert_eq!(dispatched("this.run", locals), None);
        assert_eq!(dispatched("f", locals), None);
    }
}
