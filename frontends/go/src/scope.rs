//! Names by declaration, not by spelling.
//!
//! A callee identity is a dotted token as written (`github.Ptr`,
//! `client.Repositories.Create`); what makes it the reviewed thing is the
//! declaration its head resolves to. This module finds that declaration in
//! Go's scopes, innermost first: the region's enclosing top-level function
//! (parameters, receivers, locals, nested literals: flow-insensitive, so a
//! name bound anywhere in it counts), the file's imports, the package's
//! top-level declarations (every file of the package directory), and the
//! predeclared identifiers. An identity matches a reviewed one only when its
//! head resolves the way the inventory means it: an import from an accepted
//! path, a function of the package the profile reviews as a region, a local
//! bound by a reviewed call, a predeclared name nobody redeclared.

use std::collections::BTreeMap;

use fcd_frontends::frontend::{Env, Region};
use fcd_frontends::ir::Identity;
use fcd_frontends::ts::Node;

use super::bindings::Bindings;
use super::settings::Settings;

/// Go's predeclared types.
pub const PREDECLARED_TYPES: &[&str] = &[
    "any",
    "bool",
    "byte",
    "comparable",
    "complex64",
    "complex128",
    "error",
    "float32",
    "float64",
    "int",
    "int8",
    "int16",
    "int32",
    "int64",
    "rune",
    "string",
    "uint",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "uintptr",
];

/// Go's other predeclared identifiers: constants, the zero value and builtins.
const PREDECLARED_VALUES: &[&str] = &[
    "true", "false", "iota", "nil", "append", "cap", "clear", "close", "complex", "copy", "delete", "imag", "len", "make", "max", "min", "new", "panic",
    "print", "println", "real", "recover",
];

/// Whether `name` is one of Go's predeclared identifiers: a type, a constant, the zero value or a builtin.
pub fn is_predeclared(name: &str) -> bool {
    PREDECLARED_TYPES.contains(&name) || PREDECLARED_VALUES.contains(&name)
}

/// What a top-level name of the package is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeclKind {
    Func,
    Var,
    Const,
    Type,
}

/// One top-level declaration of the package.
#[derive(Clone, Copy)]
pub struct Decl<'a> {
    pub kind: DeclKind,
    pub name: Node<'a>,
    pub file: &'a str,
}

/// The directory part of a `/`-separated path: Go's package boundary.
pub fn dir(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

/// Every top-level declaration of every file in the package directory of `file`.
pub fn package_decls<'a>(region: &Region<'a>) -> BTreeMap<String, Vec<Decl<'a>>> {
    let mut out: BTreeMap<String, Vec<Decl<'a>>> = BTreeMap::new();
    let here = dir(region.file);
    for (path, syntax) in region.trees.iter().filter(|(p, _)| dir(p) == here) {
        for top in syntax.root().named_children() {
            for (kind, name) in top_level_names(top) {
                out.entry(name.text().to_owned()).or_default().push(Decl { kind, name, file: path });
            }
        }
    }
    out
}

/// The names one top-level declaration binds in the package scope (methods bind none).
pub fn top_level_names(top: Node<'_>) -> Vec<(DeclKind, Node<'_>)> {
    let outside_functions = |n: &Node<'_>| n.ancestors().take_while(|a| *a != top).all(|a| a.kind() != "func_literal");
    match top.kind() {
        "function_declaration" => top.field_child("name").map(|n| vec![(DeclKind::Func, n)]).unwrap_or_default(),
        "var_declaration" | "const_declaration" | "type_declaration" => top
            .descendants()
            .filter(outside_functions)
            .flat_map(|spec| {
                let kind = match spec.kind() {
                    "var_spec" => DeclKind::Var,
                    "const_spec" => DeclKind::Const,
                    "type_spec" | "type_alias" => DeclKind::Type,
                    _ => return Vec::new(),
                };
                spec.field_children("name").map(|n| (kind, n)).collect()
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// A file's imports by the package name the file uses ([`imports`]).
pub type Imports<'a> = BTreeMap<String, (String, Node<'a>)>;

/// The file's imports: package name as used in the file -> (import path, spec).
/// A dot import has the name `.`; a blank import is left out (it binds no name).
pub fn imports<'a>(root: Node<'a>) -> Imports<'a> {
    let mut out = BTreeMap::new();
    for spec in root.descendants().filter(|n| n.kind() == "import_spec") {
        let Some(path) = spec.field_child("path").map(|p| p.text().trim_matches(['"', '`']).to_owned()) else { continue };
        let name = match spec.field_child("name") {
            Some(n) if n.kind() == "blank_identifier" => continue,
            Some(n) => n.text().to_owned(),
            None => default_name(&path),
        };
        out.insert(name, (path, spec));
    }
    out
}

/// The name an import without an explicit name binds, by Go's convention: the
/// last path element, skipping a major-version suffix (`go-github/v87/github`
/// is `github`, `yaml.v3` is `yaml`). A package whose clause says otherwise
/// resolves to nothing here, which escalates: never a wrong match.
fn default_name(path: &str) -> String {
    let mut parts = path.rsplit('/');
    let last = parts.next().unwrap_or(path);
    let is_major = |s: &str| s.strip_prefix('v').is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
    let last = if is_major(last) { parts.next().unwrap_or(last) } else { last };
    let last = last.split_once(".v").map_or(last, |(head, _)| head);
    last.trim_start_matches("go-").to_owned()
}

/// The top-level function or method holding the region (the region itself
/// when it is one): the scope whose names a closure sees.
pub fn enclosing<'a>(region: Node<'a>) -> Node<'a> {
    std::iter::once(region).chain(region.ancestors()).filter(|n| matches!(n.kind(), "function_declaration" | "method_declaration")).last().unwrap_or(region)
}

/// The scopes one region's names resolve in.
pub struct Scope<'r, 'a> {
    pub region: &'r Region<'a>,
    /// Binding sites in the enclosing top-level function.
    pub locals: Bindings<'a>,
    pub imports: BTreeMap<String, (String, Node<'a>)>,
    pub package: BTreeMap<String, Vec<Decl<'a>>>,
    pub env: &'r Env,
}

impl<'r, 'a> Scope<'r, 'a> {
    pub fn of(region: &'r Region<'a>) -> Scope<'r, 'a> {
        let root = region.node.ancestors().last().unwrap_or(region.node);
        Scope { region, locals: Bindings::of(enclosing(region.node)), imports: imports(root), package: package_decls(region), env: region.env }
    }

    /// The identity of a call once its head is resolved: the spelled identity
    /// when the head is what the inventory means by it, else unresolved or dynamic.
    pub fn resolve(&self, spelled: Identity) -> Identity {
        let Identity::Path(path) = &spelled else { return spelled };
        if path == "func()" {
            return spelled;
        }
        // Only a conversion is spelled with a leading `[]` (`[]byte(s)`): it
        // runs no code of its own, so it is what its element type resolves
        // to (a shadowed `byte` escalates where it is declared).
        if let Some(element) = path.strip_prefix("[]") {
            return match self.resolve(Identity::Path(element.to_owned())) {
                Identity::Path(_) => spelled,
                other => other,
            };
        }
        let end = path.find(['.', '[', '(']).unwrap_or(path.len());
        let (head, rest) = path.split_at(end);
        let bare = rest.is_empty() || rest.starts_with('[');
        if !self.locals.sites(head).is_empty() || self.locals.is_param(head) {
            return self.local(head, bare, spelled.clone());
        }
        if let Some((import, spec)) = self.imports.get(head) {
            if bare {
                return Identity::Unresolved(format!("`{head}` is a package name, called as a function"));
            }
            return match Settings::of(self.env).accepts_import(head, import) {
                true => spelled,
                false if Settings::of(self.env).imports.contains_key(head) => Identity::Unresolved(format!(
                    "`{path}`: `{head}` is imported from `{import}` (line {}), not a path the profile accepts ([imports].{head} = {:?})",
                    spec.line(),
                    Settings::of(self.env).imports[head]
                )),
                false => Identity::Unresolved(format!(
                    "`{path}`: `{head}` is imported from `{import}` (line {}), a package the profile's [imports] does not list",
                    spec.line()
                )),
            };
        }
        if let Some(decls) = self.package.get(head) {
            return self.package_level(head, bare, decls, spelled.clone());
        }
        if bare && is_predeclared(head) {
            return spelled;
        }
        Identity::Unresolved(format!("`{path}`: `{head}` is declared nowhere (not a local, an import, a declaration of the package or a predeclared name)"))
    }

    /// A head bound in the enclosing function. Calling it directly calls a
    /// function value: accepted only for a parameter of the region or its
    /// enclosing function that nothing else binds. Calling a method on it is
    /// trusted only when every binding is such a parameter, a parameter of a
    /// function literal inside the region, or the result of a call (itself a
    /// call site the inventory checks), never a value built here.
    fn local(&self, head: &str, bare: bool, spelled: Identity) -> Identity {
        let sites = self.locals.sites(head);
        let params: Vec<&Node<'a>> = sites.iter().filter(|s| self.outer_param(**s)).collect();
        let others: Vec<&Node<'a>> = sites.iter().filter(|s| !self.outer_param(**s)).collect();
        if bare {
            return match (params.len() + usize::from(self.locals.is_param(head)), others.as_slice()) {
                (1, []) => spelled,
                _ => Identity::Dynamic(format!("calls `{head}`, a local function value")),
            };
        }
        // A parameter of a function literal nested in the region is as good as
        // an outer one for a method call: its declared type fixes what it is.
        let is_param = |s: Node<'a>| s.parent().is_some_and(|p| matches!(p.kind(), "parameter_declaration" | "variadic_parameter_declaration"));
        let trusted = |s: Node<'a>| self.locals.bound_to_call(s) || (is_param(s) && self.region.node.contains(s));
        // A field read of such a name (`c := resp.Content`, `resp` a
        // parameter) runs no code, and the field's declared type fixes its
        // methods as a parameter's does.
        let read_of_trusted = |s: Node<'a>| {
            let Some(mut value) = self.locals.value(s).filter(|v| v.kind() == "selector_expression") else { return false };
            while value.kind() == "selector_expression" {
                let Some(operand) = value.field_child("operand") else { return false };
                value = operand;
            }
            let root = value.text();
            let sites = self.locals.sites(root);
            value.kind() == "identifier"
                && root != head
                && (!sites.is_empty() || self.locals.is_param(root))
                && sites.iter().all(|r| self.outer_param(*r) || trusted(*r))
        };
        match others.iter().find(|s| !trusted(***s) && !read_of_trusted(***s)) {
            None => spelled,
            Some(site) => Identity::Unresolved(format!("`{spelled}`: `{head}` is bound at line {} to something other than a call's result", site.line())),
        }
    }

    /// Whether a binding site is a parameter of the region or of a function
    /// around it (the enclosing function, a handler factory): a name the
    /// region sees, fixed before it runs.
    fn outer_param(&self, site: Node<'a>) -> bool {
        let owner = site.ancestors().find(|a| matches!(a.kind(), "func_literal" | "function_declaration" | "method_declaration"));
        let is_param = site.parent().is_some_and(|p| matches!(p.kind(), "parameter_declaration" | "variadic_parameter_declaration"));
        is_param && owner.is_some_and(|o| o == self.region.node || o.contains(self.region.node))
    }

    /// A function of the package handed on as a value (`sort.Slice(x,
    /// less)`, `errgroup.Go(work)`, a field of a struct literal): it runs as
    /// surely as a call, so it needs a region as a call does. `None` when
    /// `name` is no such function here (a local, a parameter, a type, another
    /// package's name).
    pub fn handed(&self, name: &str) -> Option<Identity> {
        if !self.locals.sites(name).is_empty() || self.locals.is_param(name) || self.imports.contains_key(name) {
            return None;
        }
        let decls = self.package.get(name)?;
        if !decls.iter().any(|d| matches!(d.kind, DeclKind::Func)) || (self.env.reviewed.iter().any(|r| r == name) && decls.len() == 1) {
            return None;
        }
        let at = decls.first().map(|d| format!("{}:{}", d.file, d.name.line())).unwrap_or_default();
        Some(Identity::Unresolved(format!(
            "handed {name}: a function of the package ({at}) passed as a value for whatever receives it to call, which the profile does not review as a region"
        )))
    }

    fn package_level(&self, head: &str, bare: bool, decls: &[Decl<'a>], spelled: Identity) -> Identity {
        let [decl] = decls else {
            return Identity::Unresolved(format!("`{head}` is declared {} times in the package", decls.len()));
        };
        let at = format!("{}:{}", decl.file, decl.name.line());
        match (decl.kind, bare) {
            (DeclKind::Func, true) if self.env.reviewed.iter().any(|r| r == head) => spelled,
            (DeclKind::Func, true) => {
                Identity::Unresolved(format!("calls `{head}`, a function of the package ({at}) that the profile does not review as a region"))
            }
            // A conversion runs no code.
            (DeclKind::Type, true) => spelled,
            (DeclKind::Var, _) => Identity::Dynamic(format!("calls through the package variable `{head}` ({at}), which any code of the package can rebind")),
            _ => Identity::Unresolved(format!("`{spelled}`: `{head}` is a package-level declaration ({at}) of a kind that is not called this way")),
        }
    }
}
