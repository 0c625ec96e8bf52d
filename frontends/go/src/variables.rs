//! Whether an exported package variable a pinned closure reads is bound by
//! its declaration alone.
//!
//! A closure's digest binds the variable's declaration, initializer
//! included ([`super::pinned`]). But an exported variable can be written by
//! any package of the binary: `scopes.ScopeHierarchy = nil` in a package
//! the handler never imports still changes what the closure computes. So
//! such a variable is bound only when every package of the module is read
//! and no code of the module, outside the declaration, does anything with
//! it but read it. The rule is an allowlist, failing closed: each use of
//! the variable (its name in its own package, `P.Name` elsewhere, through
//! whatever import name) must be a plain read, where its value is only
//! compared or computed with (an operand of a binary operator or of `!`,
//! `-`, `^`), tested (an `if`, `switch` or `for` condition), measured
//! (`len`, `cap`), converted to a predeclared type (a copy), panicked with,
//! called (a function variable runs what its declaration holds), or used as
//! an index; or whose element, field or slice (`V[k]`, `V.F`, `V[a:b]`,
//! `V.(T)`, `*V`) is in turn used so; or that is ranged over (`for k, v :=
//! range V`) or bound by `:=` to locals whose every use in their function
//! is again such a read. Anything else escalates naming the site: an
//! assignment (whole, to an element or a field), `++`/`--`, `&V` (and so
//! any reflection or `unsafe` use, which needs the address or the value
//! handed on), a method call on it (a pointer receiver may change it), the
//! value handed to a function, returned, stored in another value or sent
//! on a channel (the receiver could change what it shares), a receive from
//! it, and a dot import of its package (its name then needs no qualifier).
//! Any `//go:linkname` in the module escalates too: it can bind another
//! name to the variable. A variable its declaration sets to a new error of
//! the standard library (`var ErrX = errors.New(…)`) may also be handed on
//! (returned, passed): what it holds cannot be changed from the module
//! (while no file imports `unsafe`), only the variable itself.

use fcd_frontends::ts::{Node, Syntax};

use super::scope;
use super::syntax::is_member;

/// How deep locals bound from the variable's elements are followed.
const DEPTH: usize = 4;

/// Whether a conversion to the predeclared type `t` copies its operand into
/// a new value: every predeclared type but the interfaces (`any`,
/// `comparable`, `error`), which hold the operand itself.
fn copying(t: &str) -> bool {
    scope::PREDECLARED_TYPES.contains(&t) && !matches!(t, "any" | "comparable" | "error")
}

/// The module as this check reads it, every package read (the caller has made sure).
pub(super) struct Module<'m, 'a> {
    /// Every parsed file of the module.
    pub(super) files: Vec<(&'a str, &'a Syntax)>,
    /// The files of the variable's package.
    pub(super) package: &'m [(&'a str, &'a Syntax)],
    /// The package directory an import path names, when the module's.
    pub(super) release: &'m dyn Fn(&str) -> Option<String>,
}

/// `Ok` when no code of the module but the declaration `declaration` does
/// anything with the variable `name` of package `dir` other than read it;
/// else why, naming the site.
pub(super) fn unwritten(module: &Module<'_, '_>, dir: &str, name: &str, declaration: Node<'_>) -> Result<(), String> {
    let ty = declared_type(declaration, name);
    let copies = |t: &str| copies_in(module.package, t);
    let cx = Cx { copies: &copies };
    let unsafe_imported = module.files.iter().any(|(_, s)| scope::imports(s.root()).values().any(|(path, _)| path == "unsafe"));
    let sealed = sealed_error(declaration, name) && !unsafe_imported;
    for (file, syntax) in module.files.iter().copied() {
        if let Some(line) = syntax.text().lines().position(|l| l.trim_start().starts_with("//go:linkname")) {
            return Err(format!("{file}:{} has a `//go:linkname`, which can bind another name to it", line + 1));
        }
        let root = syntax.root();
        let uses: Vec<Node<'_>> = if scope::dir(file) == dir {
            root.descendants().filter(|n| n.kind() == "identifier" && n.text() == name && !is_member(*n)).collect()
        } else {
            let mut names = Vec::new();
            for (local, (path, spec)) in scope::imports(root) {
                if (module.release)(&path).as_deref() != Some(dir) {
                    continue;
                }
                if local == "." {
                    return Err(format!("{file}:{} dot-imports its package, so its name needs no qualifier there", spec.line()));
                }
                names.push(local);
            }
            root.descendants()
                .filter(|n| n.kind() == "selector_expression")
                .filter(|n| n.field_child("field").is_some_and(|f| f.text() == name))
                .filter(|n| n.field_child("operand").is_some_and(|o| o.kind() == "identifier" && names.iter().any(|l| l == o.text())))
                .collect()
        };
        for u in uses {
            if declaration.contains(u) && u.parent().is_some_and(|p| p.kind() == "var_spec") {
                continue;
            }
            let read = if sealed { !written_in_place(u) } else { cx.read(u, 0, ty.as_deref()) };
            if !read {
                let line = u.ancestors().find(|a| a.kind().ends_with("statement") || a.kind().ends_with("declaration")).unwrap_or(u);
                return Err(format!(
                    "it is used at {file}:{} (`{}`) other than by a plain read, so code outside its declaration may change it",
                    u.line(),
                    line.compact_text()
                ));
            }
        }
    }
    Ok(())
}

/// Whether `u` is where a value is stored: the left of an assignment or of
/// a `range` with `=`, the operand of `++`, `--` or `&`.
fn written_in_place(u: Node<'_>) -> bool {
    let Some(p) = u.parent() else { return true };
    match p.kind() {
        "parenthesized_expression" => written_in_place(p),
        "expression_list" => p.parent().is_some_and(|d| d.field_child("left") == Some(p)),
        "inc_statement" | "dec_statement" => true,
        "unary_expression" => p.field_child("operator").is_some_and(|o| o.text() == "&"),
        _ => false,
    }
}

/// The type the declaration of `name` spells (`var V T`, `var V = T{…}`),
/// or the default type of the basic literal it is set to (`var V = "x"`: a
/// string), when it shows one.
fn declared_type(declaration: Node<'_>, name: &str) -> Option<String> {
    let spec = declaration.descendants().find(|n| n.kind() == "var_spec" && n.field_children("name").any(|m| m.text() == name))?;
    if let Some(t) = spec.field_child("type") {
        return Some(t.compact_text());
    }
    let values: Vec<Node<'_>> = spec.field_child("value")?.named_children().collect();
    let [value] = values.as_slice() else { return None };
    match value.kind() {
        "composite_literal" => value.field_child("type").map(|t| t.compact_text()),
        "interpreted_string_literal" | "raw_string_literal" => Some("string".into()),
        "int_literal" => Some("int".into()),
        "float_literal" => Some("float64".into()),
        "true" | "false" => Some("bool".into()),
        _ => None,
    }
}

/// Whether the variable `name` is set by its declaration to a new error of
/// the standard library (`errors.New(…)`, `fmt.Errorf(…)`): the value it
/// holds has only unexported fields of another package, so no code of the
/// module can change it through any copy handed on (short of `unsafe`,
/// which the caller rules out). Handing it on (`return ErrX`) then shares
/// nothing that can be written; only the variable itself can be.
fn sealed_error(declaration: Node<'_>, name: &str) -> bool {
    let Some(spec) = declaration.descendants().find(|n| n.kind() == "var_spec" && n.field_children("name").any(|m| m.text() == name)) else { return false };
    let values: Vec<Node<'_>> = spec.field_child("value").map(|v| v.named_children().collect()).unwrap_or_default();
    let ([value], None) = (values.as_slice(), spec.field_child("type").filter(|t| t.text() != "error")) else { return false };
    let Some(function) = value
        .field_child("function")
        .filter(|_| value.kind() == "call_expression" && value.field_child("function").is_some_and(|f| f.kind() == "selector_expression"))
    else {
        return false;
    };
    let (Some(package), Some(member)) = (function.field_child("operand"), function.field_child("field")) else { return false };
    let imports = scope::imports(declaration.ancestors().last().unwrap_or(declaration));
    let path = imports.get(package.text()).map(|(path, _)| path.as_str());
    matches!((path, member.text()), (Some("errors"), "New") | (Some("fmt"), "Errorf"))
}

/// Whether the use `u` of the package variable declared by `declaration`
/// (in `package`) only reads it, by the allowlist of [`unwritten`].
pub(super) fn plain_read(package: &[(&str, &Syntax)], declaration: Node<'_>, name: &str, u: Node<'_>) -> bool {
    let ty = declared_type(declaration, name);
    let copies = |t: &str| copies_in(package, t);
    Cx { copies: &copies }.read(u, 0, ty.as_deref())
}

/// Whether a value of type `t` copies: a predeclared type, or a type of the
/// package defined as one (`type Scope string`).
fn copies_in(package: &[(&str, &Syntax)], t: &str) -> bool {
    copying(t)
        || package.iter().any(|(_, s)| {
            s.root()
                .named_children()
                .filter(|d| d.kind() == "type_declaration")
                .flat_map(|d| d.named_children())
                .any(|spec| spec.field_child("name").is_some_and(|n| n.text() == t) && spec.field_child("type").is_some_and(|u| copying(u.text())))
        })
}

/// The key and element types of a map, slice or array type spelled `ty`.
fn key_and_element(ty: Option<&str>) -> (Option<String>, Option<String>) {
    let Some(ty) = ty else { return (None, None) };
    if let Some(rest) = ty.strip_prefix("map[") {
        let mut depth = 1;
        for (i, c) in rest.char_indices() {
            match c {
                '[' => depth += 1,
                ']' => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                return (Some(rest[..i].to_owned()), Some(rest[i + 1..].to_owned()));
            }
        }
        return (None, None);
    }
    match ty.strip_prefix('[').and_then(|r| r.split_once(']')) {
        Some((_, element)) => (Some("int".into()), Some(element.to_owned())),
        None => (None, None),
    }
}

/// What the allowlist needs besides the syntax: which types copy.
struct Cx<'c> {
    copies: &'c dyn Fn(&str) -> bool,
}

impl Cx<'_> {
    /// Whether the value of expression `u` (of type `ty`, when known) is
    /// only read where it stands. A value of a type that copies (a string,
    /// a number) shares nothing with the variable: any use of it reads.
    fn read(&self, u: Node<'_>, depth: usize, ty: Option<&str>) -> bool {
        if ty.is_some_and(|t| (self.copies)(t)) {
            return !written_in_place(u);
        }
        let Some(p) = u.parent() else { return false };
        let is = |field: &str| p.field_child(field) == Some(u);
        let (key, element) = key_and_element(ty);
        match p.kind() {
            "binary_expression" => true,
            "unary_expression" => match p.field_child("operator").map(|o| o.text()) {
                Some("!" | "-" | "+" | "^") => true,
                Some("*") => self.read(p, depth, None),
                _ => false,
            },
            "parenthesized_expression" => self.read(p, depth, ty),
            "type_assertion_expression" if is("operand") => self.read(p, depth, p.field_child("type").map(|t| t.text())),
            "slice_expression" if is("operand") => self.read(p, depth, ty),
            "index_expression" if is("operand") => self.read(p, depth, element.as_deref()),
            "index_expression" | "slice_expression" => true,
            // A field is read; a method called on the value may change it.
            "selector_expression" => {
                is("operand") && !p.parent().is_some_and(|c| c.kind() == "call_expression" && c.field_child("function") == Some(p)) && self.read(p, depth, None)
            }
            "call_expression" => is("function"),
            "argument_list" => {
                let function = p.parent().and_then(|c| c.field_child("function"));
                function.is_some_and(|f| {
                    let named = f.kind() == "identifier" && matches!(f.text(), "len" | "cap" | "panic");
                    let copied = matches!(f.kind(), "identifier" | "type_identifier") && copying(f.text());
                    named || copied
                })
            }
            "if_statement" | "expression_switch_statement" | "for_statement" => is("condition") || is("value"),
            "range_clause" if is("right") => match p.field_child("left") {
                None => true,
                Some(left) => {
                    let declares = p.children().any(|c| c.text() == ":=");
                    let names: Vec<Node<'_>> = left.named_children().collect();
                    let types = [key.as_deref(), element.as_deref()];
                    declares && depth < DEPTH && names.iter().enumerate().all(|(i, n)| self.alias_read(*n, depth + 1, types.get(i).copied().flatten()))
                }
            },
            "expression_list" => {
                let declaration = p.parent().filter(|d| d.kind() == "short_var_declaration" && d.field_child("right") == Some(p));
                let Some(left) = declaration.and_then(|d| d.field_child("left")) else { return false };
                let values = p.named_children().count();
                let names: Vec<Node<'_>> = left.named_children().collect();
                // `v, ok := V[k]`: the element, then a bool.
                let typed = |i: usize| match (values, i) {
                    (1, 0) => ty,
                    (1, 1) if names.len() == 2 && u.kind() == "index_expression" => Some("bool"),
                    _ => None,
                };
                values == 1 && depth < DEPTH && names.iter().enumerate().all(|(i, n)| self.alias_read(*n, depth + 1, typed(i)))
            }
            _ => false,
        }
    }

    /// Every use of the local bound at `site`, in the function around it, is a read.
    fn alias_read(&self, site: Node<'_>, depth: usize, ty: Option<&str>) -> bool {
        if site.kind() != "identifier" {
            return false;
        }
        if site.text() == "_" || ty.is_some_and(|t| (self.copies)(t)) {
            return true;
        }
        let function = site.ancestors().find(|a| matches!(a.kind(), "func_literal" | "function_declaration" | "method_declaration"));
        let Some(function) = function else { return false };
        function.descendants().filter(|n| n.kind() == "identifier" && n.text() == site.text() && *n != site).all(|n| self.read(n, depth, ty))
    }
}

#[cfg(test)]
mod tests {
    use fcd_frontends::frontend::Lang;
    use fcd_frontends::ts::Syntax;

    /// Whether every use of `V` (a `map[string][]Scope`, `type Scope string`) in `body` (inside a function) is a plain read.
    fn reads(body: &str) -> bool {
        let syntax = Syntax::parse(Lang::Go, format!("package p\n\nfunc f() {{\n{body}\n}}\n")).expect("parses");
        let copies = |t: &str| t == "Scope" || super::copying(t);
        let cx = super::Cx { copies: &copies };
        syntax.root().descendants().filter(|n| n.kind() == "identifier" && n.text() == "V").all(|n| cx.read(n, 0, Some("map[string][]Scope")))
    }

    #[test]
    fn reads_pass() {
        for body in [
            "if x == V { return }",
            "for k, v := range V { _ = string(k) + string(v) }",
            "for _, c := range V { for _, d := range c { if d == \"a\" { return } } }",
            "c, ok := V[\"k\"]\nif ok { for _, d := range c { _ = string(d) } }",
            "panic(V)",
            "n := len(V)\n_ = n + 1",
            "s := V.F\nif s == \"\" { return }",
            "_ = V[1] + V[2]",
            "for k := range V { out = append(out, k) }",
            "x[\"a\"] = V[\"k\"][0]",
            "for _, c := range V { for _, d := range c { out = append(out, d) } }",
        ] {
            assert!(reads(body), "{body}");
        }
    }

    #[test]
    fn writes_and_escapes_fail() {
        for body in [
            "V = nil",
            "V[\"k\"] = nil",
            "V.F = 1",
            "V++",
            "V += 1",
            "p := &V\n_ = p",
            "_ = &V[0]",
            "V.Reset()",
            "sort.Strings(V)",
            "V = append(V, 1)",
            "x := append(V, 1)\n_ = x",
            "c := V[\"k\"]\nc[0] = 1",
            "for _, c := range V { c[0] = 1 }",
            "for _, c := range V { out = append(out, c...) }",
            "for _, c := range V { sort.Sort(c) }",
            "V[\"k\"][0] = \"x\"",
            "p := &V[\"k\"][0]\n_ = p",
            "reflect.ValueOf(V)",
            "return V",
            "m := map[string]any{\"v\": V}\n_ = m",
            "ch <- V",
            "<-V",
            "for _, c = range V { }",
        ] {
            assert!(!reads(body), "{body}");
        }
    }
}
