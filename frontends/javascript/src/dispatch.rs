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
//! - a property `m` of an object literal that may hold a function, a
//!   member `m` assigned or defined (`Object.defineProperty`) anywhere: no
//!   region can name it, so it escalates.
//!
//! A receiver that is a package's import or a global (`JSON`, `fs.promises`)
//! reaches no release code: its methods are the package's. A method no
//! release definition has (`trim`, `join`) reaches no release code either.

use fcd_frontends::frontend::Program;
use fcd_frontends::ts::Node;

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
                // A property `m` whose value is a function or names one (`{ m: run }`).
                "pair" if key(n).as_deref() == Some(method) && n.field_child("value").is_none_or(|v| FUNCTION_VALUES.contains(&bare(v).kind())) => {
                    out.push(Implementation { file, node: n, class: None });
                }
                "shorthand_property_identifier" if n.text() == method => out.push(Implementation { file, node: n, class: None }),
                // A member named by an expression (`[name]() {…}`) may be named `m` at run time; a well-known symbol is never a name.
                "computed_property_name" if computed(n).is_none_or(|name| name == method) => out.push(Implementation { file, node: n, class: None }),
                // `o.m = …`, `o["m"] = …`, `Object.defineProperty(o, "m", …)`.
                "assignment_expression" if n.field_child("left").is_some_and(|l| names_member(l, method)) => {
                    out.push(Implementation { file, node: n, class: None });
                }
                "call_expression"
                    if n.field_child("function").is_some_and(|f| f.text().ends_with("defineProperty") || f.text().ends_with("defineProperties"))
                        && n.descendants().any(|a| {
                            super::syntax::string_content(a).as_deref() == Some(method) || (a.kind() == "pair" && key(a).as_deref() == Some(method))
                        }) =>
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
/// and a call of a name (`f(…)`) dispatch nothing here; `new C().m` does.
pub(super) fn dispatched(path: &str, fixed: impl Fn(&str) -> bool, release: impl Fn(&str) -> bool) -> Option<&str> {
    if path.starts_with("handed ") {
        return None;
    }
    // `new C().m`: the method of what the constructor returned; a package's
    // or a global's class builds an object of its own (what the release
    // writes onto it is the surroundings' and the registration's to check).
    let path = match path.strip_prefix("new ") {
        Some(rest) if !release(rest.split(['.', '[', '(']).next().unwrap_or_default()) => return None,
        Some(rest) => rest,
        None => path,
    };
    let (receiver, method) = path.rsplit_once('.')?;
    if method.is_empty() || !method.chars().all(|c| c == '_' || c == '$' || c.is_alphanumeric()) {
        return None;
    }
    let root = receiver.split(['.', '[', '(']).next().unwrap_or_default();
    let chained = receiver.len() > root.len() && receiver[root.len()..].contains(['(', '[']);
    (root != "this" && (chained || !fixed(root))).then_some(method)
}

/// Whether `text` (a file that did not parse) holds `method` as a word.
pub(super) fn mentions(text: &str, method: &str) -> bool {
    let word = |c: char| c == '_' || c == '$' || c.is_alphanumeric();
    text.match_indices(method).any(|(at, _)| !text[..at].chars().next_back().is_some_and(word) && !text[at + method.len()..].chars().next().is_some_and(word))
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

/// Values of a property that are, or name, a function. A call's result is
/// not among them: `{ isDirectory: stats.isDirectory() }` is data, and a
/// function returned by a call and stored under `m` is not looked for.
const FUNCTION_VALUES: &[&str] =
    &["function_expression", "arrow_function", "function", "generator_function", "identifier", "member_expression", "subscript_expression", "class"];

/// Whether `target` is the member `method` of something: `o.m`, `o["m"]`.
fn names_member(target: Node<'_>, method: &str) -> bool {
    match target.kind() {
        "member_expression" => target.field_child("property").is_some_and(|p| p.text() == method),
        "subscript_expression" => target.field_child("index").and_then(super::syntax::string_content).as_deref() == Some(method),
        _ => false,
    }
}

/// What a computed member name evaluates to, when fcd can tell: a string
/// (`["m"]`), or a symbol (`[Symbol.iterator]`, given as `""`: no method's
/// name); `None` for any other expression.
fn computed(name: Node<'_>) -> Option<String> {
    let inner = name.named_children().next()?;
    if let Some(text) = super::syntax::string_content(inner) {
        return Some(text);
    }
    let symbol = inner.kind() == "member_expression" && inner.field_child("object").is_some_and(|o| o.text() == "Symbol");
    symbol.then(String::new)
}

/// The key of an object property (`m: …`, `"m": …`).
fn key(pair: Node<'_>) -> Option<String> {
    let k = pair.field_child("key")?;
    Some(super::syntax::string_content(k).unwrap_or_else(|| k.text().to_owned()))
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_file_that_did_not_parse_mentions_a_method_as_a_word() {
        assert!(super::mentions("x.run(1)", "run"));
        assert!(super::mentions("run", "run"));
        assert!(!super::mentions("rerun(); running", "run"));
    }

    #[test]
    fn a_receiver_not_fixed_dispatches_its_method() {
        let locals = |root: &str| matches!(root, "JSON" | "fs" | "ConnectorManager" | "Date" | "Lite");
        let dispatched = |path| super::dispatched(path, locals, |root: &str| matches!(root, "ConnectorManager" | "Lite"));
        assert_eq!(dispatched("ConnectorManager.getCurrentConnector().executeSQL"), Some("executeSQL"));
        assert_eq!(dispatched("connector.executeSQL"), Some("executeSQL"));
        assert_eq!(dispatched("allowedKeywords[].join"), Some("join"));
        assert_eq!(dispatched("new Date().toISOString"), None, "a global's class builds its own object");
        assert_eq!(dispatched("new Lite().run"), Some("run"), "the method of an object of the release's class");
        assert_eq!(dispatched("JSON.stringify"), None);
        assert_eq!(dispatched("fs.promises.readFile"), None);
        assert_eq!(dispatched("this.run"), None);
        assert_eq!(dispatched("f"), None);
    }
}
