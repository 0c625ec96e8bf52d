//! What a name means where a JavaScript region's calls are resolved: the
//! region's own bindings, and its file's module-level declarations and
//! imports. A name counts as the reviewed one only when nothing nearer or
//! elsewhere binds it.

use std::collections::{BTreeMap, BTreeSet};

use fcd_frontends::frontend::Region;
use fcd_frontends::ir::Identity;
use fcd_frontends::ts::Node;

use super::FUNCTIONS;
use super::bindings::{self, Bindings};
use super::loader::is_package;
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

/// What the top of a region's module declares and imports: read once, for
/// the names a region's calls resolve through ([`Scope`]) and for the code of
/// the release they may reach (the closed call path).
pub(super) struct TopLevel<'a> {
    /// Every module-level name the file declares.
    pub(super) declared: BTreeSet<String>,
    /// Functions and classes: declared, or bound to a function or class expression.
    pub(super) code: BTreeSet<String>,
    /// The values of the file's module-level `const`/`let`/`var name = value`.
    pub(super) values: BTreeMap<String, Node<'a>>,
    /// Local name -> (specifier, imported name: `default` for a default
    /// import, `*` for a namespace).
    pub(super) imports: BTreeMap<String, (String, String)>,
}

impl<'a> TopLevel<'a> {
    pub(super) fn of(node: Node<'a>) -> TopLevel<'a> {
        let root = node.ancestors().last().unwrap_or(node);
        let mut top = TopLevel { declared: BTreeSet::new(), code: BTreeSet::new(), values: BTreeMap::new(), imports: BTreeMap::new() };
        for n in root.named_children() {
            let decl = if n.kind() == "export_statement" { n.field_child("declaration").unwrap_or(n) } else { n };
            match decl.kind() {
                "function_declaration" | "generator_function_declaration" | "class_declaration" => {
                    if let Some(id) = decl.field_child("name") {
                        top.declared.insert(id.text().to_owned());
                        top.code.insert(id.text().to_owned());
                    }
                }
                "lexical_declaration" | "variable_declaration" => {
                    for d in decl.named_children().filter(|d| d.kind() == "variable_declarator") {
                        let mut names = Vec::new();
                        if let Some(p) = d.field_child("name") {
                            bindings::pattern_names(p, &mut names);
                        }
                        top.declared.extend(names.iter().map(|i| i.text().to_owned()));
                        if let (Some(n), Some(v)) = (d.field_child("name").filter(|n| n.kind() == "identifier"), d.field_child("value")) {
                            if matches!(bare(v).kind(), "class") || super::FUNCTIONS.contains(&bare(v).kind()) {
                                top.code.insert(n.text().to_owned());
                            }
                            top.values.insert(n.text().to_owned(), v);
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
                                top.imports.insert(local.text().to_owned(), (spec.clone(), orig.text().to_owned()));
                            }
                            "import_clause" | "namespace_import" => {
                                // `import d from …` binds the default export, `import * as ns from …` the namespace.
                                let what = if i.kind() == "import_clause" { "default" } else { "*" };
                                for id in i.named_children().filter(|c| c.kind() == "identifier") {
                                    top.imports.insert(id.text().to_owned(), (spec.clone(), what.to_owned()));
                                }
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        top
    }
}

impl<'a> Scope<'a> {
    pub(super) fn of(region: &Region<'a>) -> Scope<'a> {
        let TopLevel { declared, values, imports, .. } = TopLevel::of(region.node);
        // A dispatcher case's names are its handler function's.
        let owner = super::route::owner(region.node);
        Scope { region: owner, locals: Bindings::of(owner), declared, values, imports }
    }

    /// A name as spelled is the reviewed one only when nothing nearer or
    /// elsewhere binds it: a local or parameter named like a reviewed
    /// function, a local shadowing a module name, an import under another
    /// name or from a package outside the release does not count.
    pub(super) fn resolve(&self, id: Identity) -> Identity {
        self.resolve_at(id, None)
    }

    /// [`Self::resolve`] for a name used at `at`: a local bound by several
    /// lexical declarations (block-scoped `let`/`const`, parameters, a
    /// `catch` parameter, a `for (const … of …)` variable) means the one
    /// whose scope holds `at`, when exactly one does ([`Self::visible_binding`]).
    pub(super) fn resolve_at(&self, id: Identity, at: Option<Node<'a>>) -> Identity {
        let Identity::Path(path) = id else { return id };
        let root = path.split(['.', '[', '(']).next().unwrap_or_default();
        let plain = root.len() == path.len();
        let local = self.locals.is_param(root) || self.locals.count(root) > 0;
        if local && plain {
            return Identity::Unresolved(format!("{path}: a local or parameter of the region, not the reviewed function of that name"));
        }
        if local && (self.declared.contains(root) || self.imports.contains_key(root) || bindings::BUILTINS.contains(&root)) {
            return Identity::Unresolved(format!("{path}: `{root}` is bound in the region and shadows the module's `{root}`"));
        }
        if local {
            // What the local is, when its one binding says so: the identity
            // follows the value, not the local's name.
            if let Some(what) = self.derive_name_at(root, at, 0) {
                return Identity::Path(join(&what, &path[root.len()..]));
            }
            // `let x;` then one `x = V`: before it, `x` is undefined and a
            // method call on it throws, so whatever runs is V's method. For
            // a callee only: a fact reading `x` still sees two bindings.
            if let Some(what) = self.assigned_once(root).and_then(|v| self.derive(v, 1)) {
                return Identity::Path(join(&what, &path[root.len()..]));
            }
            if self.locals.count(root) > 1 {
                // The one declaration in scope here, kept by name when its
                // value is a parameter's or a reviewed call's.
                return match at.and_then(|at| self.visible_binding(root, at)) {
                    Some(site) if self.site_origin_ok(site) => Identity::Path(path),
                    _ => Identity::Unresolved(format!("{path}: `{root}` is bound more than once, so which object it holds depends on the path taken")),
                };
            }
        }
        if local && !self.origins_ok(root) {
            return Identity::Unresolved(format!("{path}: `{root}` is a local whose value does not come from a reviewed call, a read or a parameter"));
        }
        match self.imports.get(root) {
            // A package's default export is spelled `PACKAGE:default…`; its
            // namespace stands for its named exports (`ns.join` is `PACKAGE:join`).
            Some((spec, orig)) if is_package(spec) && orig == "default" => Identity::Path(format!("{spec}:default{}", &path[root.len()..])),
            Some((spec, orig)) if is_package(spec) && orig == "*" && path[root.len()..].starts_with('.') => {
                Identity::Path(format!("{spec}:{}", &path[root.len() + 1..]))
            }
            // A package's named export is spelled by its export name, whatever
            // local name imports it (`import { promises as fs } from "fs"`
            // makes `fs.writeFile` `fs:promises.writeFile`).
            Some((spec, orig)) if is_package(spec) => Identity::Path(format!("{spec}:{orig}{}", &path[root.len()..])),
            Some((_, orig)) if orig != root => Identity::Unresolved(format!("{path}: `{root}` is imported as `{orig}` under another name")),
            _ => Identity::Path(path),
        }
    }
}

impl<'a> Scope<'a> {
    /// What an expression is, spelled as an identity: a local bound once by
    /// its own declaration stands for its value (`const c = M.get()` makes
    /// `c` `M.get()`), a parameter with a declared TypeScript type for the
    /// type (`p: Connector` is `Connector#`, so `p.run` is `Connector#run`),
    /// a module name or import for itself (resolved as a callee is); member
    /// reads, calls (`f()`, arguments left out), `new C()`, literals and
    /// `===`/`!==` comparisons of those compose. Anything else (a local bound
    /// twice or by a pattern, an untyped parameter, a local function called,
    /// another operator) has no spelling: `None`.
    pub(super) fn derive(&self, n: Node<'a>, depth: usize) -> Option<String> {
        if depth > 32 {
            return None;
        }
        let n = bare(n);
        match n.kind() {
            "identifier" => self.derive_name_at(n.text(), Some(n), depth),
            "this" => Some("this".to_owned()),
            "member_expression" => {
                let object = self.derive(n.field_child("object")?, depth + 1)?;
                Some(join(&object, &format!(".{}", n.field_child("property")?.text())))
            }
            "subscript_expression" => Some(format!("{}[]", self.derive(n.field_child("object")?, depth + 1)?)),
            "call_expression" => {
                let f = bare(n.field_child("function")?);
                let local_function = f.kind() == "identifier" && self.is_local(f.text());
                if !matches!(f.kind(), "identifier" | "member_expression") || local_function {
                    return None;
                }
                Some(format!("{}()", self.derive(f, depth + 1)?))
            }
            "new_expression" => {
                let c = bare(n.field_child("constructor")?);
                if c.kind() == "identifier" && self.is_local(c.text()) {
                    return None;
                }
                Some(format!("new {}()", self.derive(c, depth + 1)?))
            }
            // A fresh empty array: its methods are the builtin Array's.
            "array" if n.named_children().all(|c| c.kind() == "comment") => Some("[]".to_owned()),
            "true" | "false" | "null" | "undefined" | "number" => Some(n.text().to_owned()),
            "string" | "template_string" => string_content(n).map(|s| format!("{s:?}")),
            "binary_expression" => {
                let op = n.field_child("operator")?.text();
                if !matches!(op, "===" | "!==") {
                    return None;
                }
                Some(format!("{} {op} {}", self.derive(n.field_child("left")?, depth + 1)?, self.derive(n.field_child("right")?, depth + 1)?))
            }
            _ => None,
        }
    }

    /// What the name `name` is where the region uses it (see
    /// [`Self::derive`]), at `at`: a name bound by several lexical
    /// declarations is the one whose scope holds `at`.
    fn derive_name_at(&self, name: &str, at: Option<Node<'a>>, depth: usize) -> Option<String> {
        if !self.is_local(name) {
            return match self.resolve(Identity::Path(name.to_owned())) {
                Identity::Path(p) => Some(p),
                _ => None,
            };
        }
        if self.declared.contains(name) || self.imports.contains_key(name) || bindings::BUILTINS.contains(&name) {
            return None;
        }
        let site = match self.locals.count(name) {
            0 | 1 => self.binding_site(name)?,
            _ => self.visible_binding(name, at?)?,
        };
        let parent = site.parent()?;
        match parent.kind() {
            "variable_declarator" if parent.field_child("name") == Some(site) => self.derive(parent.field_child("value")?, depth + 1),
            // `for (const x of XS)`: x is an element of XS.
            "for_in_statement" if parent.field_child("left") == Some(site) && is_for_of(parent) => {
                Some(format!("{}[]", self.derive(parent.field_child("right")?, depth + 1)?))
            }
            "required_parameter" | "optional_parameter" if parent.field_child("pattern") == Some(site) && parent.field_child("value").is_none() => {
                let ty = parent.field_child("type")?.named_children().find(|c| c.kind() != "comment")?;
                matches!(ty.kind(), "type_identifier" | "nested_type_identifier").then(|| format!("{}#", ty.compact_text()))
            }
            _ => None,
        }
    }

    /// The identity of a call made outside the region whose receiver is a
    /// module-level name (a registration: `server.registerTool(…)`), spelled
    /// by what the name is: a module-level `const` bound to `new C(…)`, C
    /// resolved as a callee is (`new pkg:C().registerTool`). Any other
    /// receiver (a `let`, a parameter, a local of an enclosing function, a
    /// call's result) cannot be told apart from a look-alike: unresolved.
    ///
    /// A factory's server is one too: when the function that makes the call
    /// `call` (its nearest enclosing function) declares the receiver by a
    /// `const name = new C(…)` statement of its own body, binds the name
    /// nowhere else (no other declaration, parameter or assignment at any
    /// depth) and binds no local named like C, the receiver is that value.
    pub(super) fn module_call(&self, id: Identity, call: Node<'a>) -> Identity {
        let Identity::Path(path) = id else { return id };
        let root = path.split(['.', '[', '(']).next().unwrap_or_default();
        let unresolved = |why: &str| Identity::Unresolved(format!("{path}: `{root}` {why}"));
        if root.len() == path.len() {
            return unresolved("is called directly, not a method of a constructed object");
        }
        if self.is_local(root) {
            return unresolved("is bound in the region");
        }
        let factory = call.ancestors().find(|a| FUNCTIONS.contains(&a.kind()));
        let factory_value = factory.and_then(|f| {
            let origins = bindings::origins(f, root);
            let [Some(value)] = origins.as_slice() else { return None };
            let declaration = value.parent().and_then(|d| d.parent());
            let in_body = declaration.and_then(|d| d.parent()) == f.field_child("body");
            let class_local = bare(*value).field_child("constructor").is_some_and(|c| !bindings::origins(f, c.text()).is_empty());
            (in_body && !class_local).then_some(*value)
        });
        let (value, top) = match (factory, factory_value) {
            (Some(_), Some(v)) => (bare(v), false),
            (Some(f), None) if !bindings::origins(f, root).is_empty() => {
                return unresolved("is bound in the function that registers, other than once by a `const` of its body");
            }
            _ => match self.values.get(root).map(|v| bare(*v)) {
                Some(v) => (v, true),
                None => return unresolved("is not a module-level constant"),
            },
        };
        let declaration = value.parent().and_then(|d| d.parent());
        let constant = declaration.is_some_and(|d| d.kind() == "lexical_declaration" && d.children().next().is_some_and(|k| k.text() == "const"));
        let module_level = !top || declaration.and_then(|d| d.parent()).is_some_and(|p| matches!(p.kind(), "program" | "export_statement"));
        if !constant || !module_level || value.kind() != "new_expression" {
            return unresolved("is not a module-level `const` (or a factory's) bound to `new C(…)`");
        }
        let Some(class) = value.field_child("constructor").map(bare).filter(|c| c.kind() == "identifier") else {
            return unresolved("is constructed from something other than a name");
        };
        match self.resolve(Identity::Path(class.text().to_owned())) {
            Identity::Path(c) => Identity::Path(format!("new {c}(){}", &path[root.len()..])),
            other => other,
        }
    }

    /// The value of the one `name = V` when `name`'s only other binding is
    /// a declaration without a value (`let name;`).
    fn assigned_once(&self, name: &str) -> Option<Node<'a>> {
        let origins = bindings::origins(self.region, name);
        let [Some(a), Some(b)] = origins.as_slice() else { return None };
        let bare_declaration = |n: &Node<'a>| n.kind() == "variable_declarator" && n.field_child("value").is_none();
        let assigned = |n: &Node<'a>| {
            n.parent().is_some_and(|p| {
                p.kind() == "assignment_expression" && p.field_child("right") == Some(*n) && p.field_child("left").is_some_and(|l| l.kind() == "identifier")
            })
        };
        match (bare_declaration(a), bare_declaration(b)) {
            (true, false) if assigned(b) => Some(*b),
            (false, true) if assigned(a) => Some(*a),
            _ => None,
        }
    }

    fn is_local(&self, name: &str) -> bool {
        self.locals.is_param(name) || self.locals.count(name) > 0
    }

    /// The identifier that binds `name` when exactly one place does: a
    /// binding inside the region, or else one of the region's own parameters.
    fn binding_site(&self, name: &str) -> Option<Node<'a>> {
        if let Some(at) = self.locals.only_site(name) {
            return self.site_node(name, at);
        }
        if self.locals.count(name) > 0 || !self.locals.is_param(name) {
            return None;
        }
        self.region_parameter(name)
    }

    /// The identifier binding `name` that starts at byte `offset` of the region.
    fn site_node(&self, name: &str, offset: usize) -> Option<Node<'a>> {
        self.region.descendants().find(|n| n.byte_range().start == offset && is_name(*n) && n.text() == name)
    }
}

impl<'a> Scope<'a> {
    /// The one lexical declaration of `name`, bound several times in the
    /// region, whose scope holds `at` ([`Self::visible_binding`]); `None`
    /// when a parameter of that name is what `at` sees.
    pub(super) fn visible_declaration(&self, name: &str, at: Node<'a>) -> Option<Node<'a>> {
        self.visible_binding(name, at).filter(|site| !is_parameter(*site))
    }

    /// The one binding of `name` whose scope holds `at`, when every binding
    /// of the name in the region is a lexical declaration (a parameter, a
    /// block-scoped `let`/`const`, a `catch` parameter, a `for (const|let …
    /// of|in …)` variable) and exactly one of their scopes holds `at`. An
    /// assignment, a `var`, a nested function or class declaration of the
    /// name, or a shadowing declaration in scope as well, gives `None`.
    fn visible_binding(&self, name: &str, at: Node<'a>) -> Option<Node<'a>> {
        let mut visible = Vec::new();
        if self.locals.is_param(name) {
            visible.push(self.region_parameter(name)?);
        }
        for offset in self.locals.site_offsets(name) {
            let site = self.site_node(name, *offset)?;
            if declaration_scope(site)?.contains(at) {
                visible.push(site);
            }
        }
        match visible.as_slice() {
            [one] => Some(*one),
            _ => None,
        }
    }

    /// The region's own parameter `name`, when exactly one binds it.
    fn region_parameter(&self, name: &str) -> Option<Node<'a>> {
        let function = if self.region.kind() == "variable_declarator" { self.region.field_child("value")? } else { self.region };
        let mut names = Vec::new();
        for p in function.field_child("parameters")?.named_children() {
            bindings::pattern_names(p, &mut names);
        }
        match names.iter().filter(|n| n.text() == name).collect::<Vec<_>>().as_slice() {
            [one] => Some(**one),
            _ => None,
        }
    }

    /// Whether one binding's value means what its spelling says: a
    /// parameter's, or a plain declaration's whose value is a reviewed origin.
    fn site_origin_ok(&self, site: Node<'a>) -> bool {
        match site.parent() {
            Some(d) if d.kind() == "variable_declarator" && d.field_child("name") == Some(site) => {
                d.field_child("value").is_some_and(|v| self.reviewed_origin(v))
            }
            Some(f) if f.kind() == "for_in_statement" && f.field_child("left") == Some(site) => self.reviewed_origin(f),
            _ => is_parameter(site),
        }
    }
}

/// Whether a binding site is a parameter's name (inside its pattern, if any).
fn is_parameter(site: Node<'_>) -> bool {
    match declaring(site) {
        Some((a, _)) if a.kind() == "formal_parameters" => true,
        Some((a, child)) if a.kind() == "arrow_function" => a.field_child("parameter") == Some(child),
        _ => false,
    }
}

/// The first ancestor of a binding site that is not part of its pattern
/// (destructuring, a default, a TypeScript parameter), with the node below it.
fn declaring(site: Node<'_>) -> Option<(Node<'_>, Node<'_>)> {
    const PATTERNS: &[&str] = &[
        "object_pattern",
        "array_pattern",
        "pair_pattern",
        "assignment_pattern",
        "object_assignment_pattern",
        "rest_pattern",
        "required_parameter",
        "optional_parameter",
    ];
    let mut child = site;
    for a in site.ancestors() {
        if !PATTERNS.contains(&a.kind()) {
            return Some((a, child));
        }
        child = a;
    }
    None
}

/// An identifier that can be a binding site.
fn is_name(n: Node<'_>) -> bool {
    matches!(n.kind(), "identifier" | "shorthand_property_identifier_pattern")
}

/// `for (… of …)`, not `for (… in …)` nor `for await`.
fn is_for_of(n: Node<'_>) -> bool {
    n.children().any(|c| c.kind() == "of") && !n.children().any(|c| c.kind() == "await")
}

/// The node whose extent a lexical declaration's name is visible in: a
/// parameter's function, a `let`/`const`'s block (a `switch`'s whole body for
/// a case clause's), a `catch` clause, a `for (const|let …)` loop. `None` for
/// any other binding (an assignment, a `var`, a function or class name), whose
/// reach is not lexical.
fn declaration_scope(site: Node<'_>) -> Option<Node<'_>> {
    let (a, child) = declaring(site)?;
    match a.kind() {
        "formal_parameters" => a.parent(),
        "arrow_function" | "catch_clause" => (a.field_child("parameter") == Some(child)).then_some(a),
        "for_in_statement" => {
            let declares = a.children().any(|c| matches!(c.kind(), "const" | "let"));
            (a.field_child("left") == Some(child) && declares).then_some(a)
        }
        "variable_declarator" => {
            let declaration = a.parent().filter(|d| d.kind() == "lexical_declaration" && a.field_child("name") == Some(child))?;
            let holder = declaration.parent()?;
            match holder.kind() {
                "statement_block" | "program" | "for_statement" => Some(holder),
                "switch_case" | "switch_default" => holder.parent(),
                _ => None,
            }
        }
        _ => None,
    }
}

/// A derived spelling followed by the rest of a path (`.m`, `[]`, `()`):
/// a type's member is `T#m`.
fn join(what: &str, rest: &str) -> String {
    match (what.strip_suffix('#'), rest.strip_prefix('.')) {
        (Some(_), Some(member)) => format!("{what}{member}"),
        _ => format!("{what}{rest}"),
    }
}

impl std::ops::Deref for Scope<'_> {
    type Target = Bindings;

    /// The region's bindings, which facts consult beside what names are.
    fn deref(&self) -> &Bindings {
        &self.locals
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

    /// A call, a member read, or one of them with fallbacks (`a[k] || a.d ?? b`)
    /// that are such reads or a builtin value: a literal, an array, a regex,
    /// or a module constant holding one (`mutatingPattern = new RegExp(…)`).
    fn reviewed_origin(&self, v: Node<'_>) -> bool {
        let v = bare(v);
        match v.kind() {
            "call_expression" | "member_expression" | "subscript_expression" => true,
            // An element of such a value, or of a local bound once to one
            // (`for (const s of statements)`, `statements = sql.split(';')`).
            "for_in_statement" if is_for_of(v) => v.field_child("right").map(bare).is_some_and(|r| match r.kind() {
                "identifier" => {
                    self.locals.count(r.text()) == 1
                        && bindings::origins(self.region, r.text())
                            .iter()
                            .all(|o| o.is_some_and(|o| matches!(bare(o).kind(), "call_expression" | "member_expression" | "subscript_expression" | "array")))
                }
                _ => matches!(r.kind(), "call_expression" | "member_expression" | "subscript_expression"),
            }),
            "binary_expression" if v.field_child("operator").is_some_and(|o| matches!(o.text(), "||" | "??")) => {
                v.field_child("left").is_some_and(|l| self.reviewed_origin(l))
                    && v.field_child("right").is_some_and(|r| self.builtin_value(r) || self.reviewed_origin(r))
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
