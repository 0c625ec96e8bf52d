//! What a name means where a JavaScript region's calls are resolved: the
//! region's own bindings, and its file's module-level declarations and
//! imports. A name counts as the reviewed one only when nothing nearer or
//! elsewhere binds it.

use std::collections::{BTreeMap, BTreeSet};

use crate::ir::Identity;
use crate::lang::Region;
use crate::ts::Node;

use super::bindings::{self, Bindings};
use super::integrity;
use super::syntax::{bare, string_content};

/// What names mean where a region's calls are resolved: its own bindings and
/// its file's module-level declarations and imports.
pub(super) struct Scope<'a> {
    region: Node<'a>,
    locals: Bindings,
    /// Module-level names the file declares.
    declared: BTreeSet<String>,
    /// The values of the file's module-level `const`/`let`/`var name = value`.
    values: BTreeMap<String, Node<'a>>,
    /// Local name -> (specifier, imported name).
    imports: BTreeMap<String, (String, String)>,
}

impl<'a> Scope<'a> {
    pub(super) fn of(region: &Region<'a>) -> Scope<'a> {
        let root = region.node.ancestors().last().unwrap_or(region.node);
        let mut declared = BTreeSet::new();
        let mut values = BTreeMap::new();
        let mut imports = BTreeMap::new();
        for n in root.named_children() {
            let decl = if n.kind() == "export_statement" { n.field_child("declaration").unwrap_or(n) } else { n };
            match decl.kind() {
                "function_declaration" | "generator_function_declaration" | "class_declaration" => {
                    if let Some(id) = decl.field_child("name") {
                        declared.insert(id.text().to_owned());
                    }
                }
                "lexical_declaration" | "variable_declaration" => {
                    for d in decl.named_children().filter(|d| d.kind() == "variable_declarator") {
                        let mut names = Vec::new();
                        if let Some(p) = d.field_child("name") {
                            bindings::pattern_names(p, &mut names);
                        }
                        declared.extend(names.iter().map(|i| i.text().to_owned()));
                        if let (Some(n), Some(v)) = (d.field_child("name").filter(|n| n.kind() == "identifier"), d.field_child("value")) {
                            values.insert(n.text().to_owned(), v);
                        }
                    }
                }
                "import_statement" => {
                    let Some(spec) = decl.field_child("source").and_then(string_content) else { continue };
                    for i in decl.descendants() {
                        match i.kind() {
                            "import_specifier" => {
                                let Some(orig) = i.field_child("name") else { continue };
                                let local = i.field_child("alias").unwrap_or(orig);
                                imports.insert(local.text().to_owned(), (spec.clone(), orig.text().to_owned()));
                            }
                            "import_clause" | "namespace_import" => {
                                for id in i.named_children().filter(|c| c.kind() == "identifier") {
                                    imports.insert(id.text().to_owned(), (spec.clone(), "*".to_owned()));
                                }
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        Scope { region: region.node, locals: Bindings::of(region.node), declared, values, imports }
    }

    /// A name as spelled is the reviewed one only when nothing nearer or
    /// elsewhere binds it: a local or parameter named like a reviewed
    /// function, a local shadowing a module name, an import under another
    /// name or from a package outside the release does not count.
    pub(super) fn resolve(&self, id: Identity) -> Identity {
        let Identity::Path(path) = id else { return id };
        let root = path.split(['.', '[', '(']).next().unwrap_or_default();
        let plain = root.len() == path.len();
        let local = self.locals.is_param(root) || self.locals.count(root) > 0;
        if local && plain {
            return Identity::Unresolved(format!("{path}: a local or parameter of the region, not the reviewed function of that name"));
        }
        if local && (self.declared.contains(root) || self.imports.contains_key(root) || integrity::BUILTINS.contains(&root)) {
            return Identity::Unresolved(format!("{path}: `{root}` is bound in the region and shadows the module's `{root}`"));
        }
        if local && !self.origins_ok(root) {
            return Identity::Unresolved(format!("{path}: `{root}` is a local whose value does not come from a reviewed call, a read or a parameter"));
        }
        match self.imports.get(root) {
            Some((_, orig)) if orig != root => Identity::Unresolved(format!("{path}: `{root}` is imported as `{orig}` under another name")),
            Some((spec, _)) if !spec.starts_with("./") && !spec.starts_with("../") => Identity::Path(format!("{spec}:{path}")),
            _ => Identity::Path(path),
        }
    }
}

impl Scope<'_> {
    /// A local receiver means what its spelling says only when its value is
    /// a parameter or comes from a call, a member read or a fallback of one:
    /// `const ConnectorManager = rogue` must not pass for the module object.
    fn origins_ok(&self, root: &str) -> bool {
        bindings::origins(self.region, root).iter().all(|v| match v {
            None => true, // a parameter or a destructuring of one
            Some(value) => self.reviewed_origin(*value),
        })
    }

    /// A call, a member read, or one of them with a fallback (`a[k] ?? b`)
    /// that is a builtin value: a literal, an array, a regex, or a module
    /// constant holding one (`mutatingPattern = new RegExp(…)`).
    fn reviewed_origin(&self, v: Node<'_>) -> bool {
        let v = bare(v);
        match v.kind() {
            "call_expression" | "member_expression" | "subscript_expression" => true,
            "binary_expression" if v.field_child("operator").is_some_and(|o| matches!(o.text(), "||" | "??")) => {
                v.field_child("left").is_some_and(|l| self.reviewed_origin(l)) && v.field_child("right").is_some_and(|r| self.builtin_value(r))
            }
            _ => false,
        }
    }

    fn builtin_value(&self, v: Node<'_>) -> bool {
        let v = bare(v);
        match v.kind() {
            "string" | "template_string" | "number" | "array" | "regex" | "true" | "false" | "null" | "undefined" => true,
            "new_expression" => v.field_child("constructor").is_some_and(|c| matches!(c.text(), "RegExp" | "Set" | "Map")),
            "identifier" => {
                !self.locals.is_param(v.text()) && self.locals.count(v.text()) == 0 && self.values.get(v.text()).is_some_and(|d| self.builtin_value(*d))
            }
            _ => false,
        }
    }
}
