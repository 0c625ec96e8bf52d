//! What the rest of the package may do to what the regions trust.
//!
//! A region is read alone, but JavaScript lets any module-level statement
//! change what a name in it means: reassign a reviewed function
//! (`checkReadOnly = () => true`), declare it twice with `var`, wrap the
//! handler factory, patch a builtin (`String.prototype.includes = …`), or
//! extend a reviewed data table (`allowedKeywords.sqlite.push(…)`). This pass
//! reads every file the package loads and escalates, with file and line, on
//! any such statement, so the facts read in the regions are the ones that run.
//!
//! The trusted names are the regions' names (a class-method region's class),
//! the plain callees of every region and the module-level roots of their
//! dotted callees. A reviewed method is also guarded against what replaces a
//! method: a subclass, a member of its name written on any object, an
//! accessor or field of that name.

use std::collections::{BTreeMap, BTreeSet};

use fcd_frontends::frontend::Region;
use fcd_frontends::ir::{Escalation, EscalationCode, Identity};
use fcd_frontends::ts::{Node, Syntax};
use fcd_model::effect::Anchor;

use super::FUNCTIONS;
use super::bindings::{BUILTINS, Head, module_bindings, module_head};
use super::methods::READ_METHODS;
use super::settings::Settings;
use super::syntax::{bare, dotted, identity, string_content};

/// Names whose use anywhere can change another module's objects or run text as code.
const FORBIDDEN: &[&str] = &["__proto__", "setPrototypeOf", "__defineGetter__", "__defineSetter__", "eval"];

struct Check<'t> {
    file: &'t str,
    /// Trusted names that are a module's own, non-exported state, with the
    /// file declaring them (see [`module_private`]).
    private: &'t BTreeMap<String, &'t str>,
    /// The private names their module declares (not imports): its state.
    state: &'t BTreeSet<String>,
    /// The regions, whose own writes to their module's state were reviewed.
    regions: &'t [Region<'t>],
    /// The MCP tool name the profile reviews: a reviewed function may be
    /// handed, as the last argument, to the one call that registers it.
    tool: &'t str,
    /// Where a reviewed function was registered under the tool's name.
    registered: std::cell::RefCell<Vec<(String, u32)>>,
    /// Callee identities the profile reviewed as only reading what they are
    /// handed (`source.read-only-callees`).
    read_only: &'t [String],
}

impl Check<'_> {
    fn fail(&self, n: Node<'_>, detail: String) -> Escalation {
        Escalation::new(EscalationCode::ShapeMismatch, detail, Some(Anchor::at_line(self.file, n.line())))
    }
}

/// Checks every loaded file against what the located regions trust.
pub fn check(trees: &[(&str, &Syntax)], opaque: &[(&str, &str)], regions: &[Region<'_>]) -> Result<(), Escalation> {
    let functions: BTreeSet<String> =
        regions.iter().filter(|r| !in_class(r.node) && (r.node.kind() != "variable_declarator" || is_function(r.node))).filter_map(|r| name(r.node)).collect();
    let tables: BTreeSet<String> =
        regions.iter().filter(|r| r.node.kind() == "variable_declarator" && !is_function(r.node)).filter_map(|r| name(r.node)).collect();
    let methods = class_methods(regions)?;
    let mut trusted: BTreeSet<String> = functions.iter().chain(&tables).cloned().collect();
    trusted.extend(methods.iter().map(|(class, _)| class.clone()));
    let read_only = regions.first().map_or(&[][..], |r| Settings::of(r.env).read_only_callees.as_slice());
    // A global read-only callee's object (`console`) is trusted: writing its
    // members anywhere would replace the reviewed callee.
    trusted.extend(read_only.iter().filter(|c| !c.contains(':')).filter_map(|c| c.split('.').next()).map(str::to_owned));
    // The module-level roots of each region's dotted callees, with the region's file.
    let mut roots: Vec<(String, &str)> = Vec::new();
    // A helper's module state (a request log it appends to) is not trusted:
    // what a helper may do is its inventory, not the state it reads.
    for r in regions.iter().filter(|r| !Settings::of(r.env).helpers.iter().any(|h| h == r.name)) {
        let locals = super::bindings::Bindings::of(r.node);
        for call in r.node.descendants().filter(|n| n.kind() == "call_expression") {
            if let Identity::Path(p) = identity(call) {
                let root = p.split(['.', '[', '(']).next().unwrap_or_default().to_owned();
                if !locals.is_param(&root) && locals.count(&root) == 0 && !root.is_empty() && root != "this" && root != "function" {
                    trusted.insert(root.clone());
                    roots.push((root, r.file));
                }
            }
        }
    }
    for (file, text) in opaque {
        opaque_file(file, text, &trusted)?;
    }
    let (private, state) = module_private(trees, &roots, &functions, &tables);
    // Bindings per name and file: a module's top level is its own scope, so
    // a function of the same name in another file is another function (the
    // closed call path checks which one each call reaches).
    let mut declared: std::collections::BTreeMap<(String, &str), Vec<(String, u32)>> = Default::default();
    let tool = regions.first().map_or("", |r| r.env.tool.as_str());
    let registered = std::cell::RefCell::new(Vec::new());
    for (file, syntax) in trees {
        let c = Check {
            file,
            private: &private,
            state: &state,
            regions,
            tool,
            registered: std::cell::RefCell::new(std::mem::take(&mut *registered.borrow_mut())),
            read_only,
        };
        for n in syntax.root().descendants() {
            c.node(n, &trusted, &functions, &tables, regions)?;
            c.method_surroundings(n, &methods)?;
            // Another module's binding of a private name is that module's own variable.
            let elsewhere = |name: &str| private.get(name).is_some_and(|home| home != file);
            for bound in module_bindings(n).into_iter().filter(|b| trusted.contains(b.text()) && !elsewhere(b.text())) {
                declared.entry((bound.text().to_owned(), *file)).or_default().push((file.to_string(), bound.line()));
            }
        }
        *registered.borrow_mut() = c.registered.take();
    }
    if let [_, (file, line), ..] = registered.borrow().as_slice() {
        return Err(Escalation::new(
            EscalationCode::ShapeMismatch,
            format!("the tool `{tool}` is registered with a reviewed function more than once: which registration serves it is not what was reviewed"),
            Some(Anchor::at_line(file, *line)),
        ));
    }
    for ((name, _), sites) in &declared {
        let allowed = if BUILTINS.contains(&name.as_str()) { 0 } else { 1 };
        if sites.len() > allowed {
            let (file, line) = &sites[allowed.min(sites.len() - 1)];
            let at: Vec<String> = sites.iter().map(|(f, l)| format!("{f}:{l}")).collect();
            return Err(Escalation::new(
                EscalationCode::ShapeMismatch,
                format!(
                    "`{name}`, which a reviewed region relies on, is bound {} times at module level ({}): which one runs is not the one reviewed",
                    sites.len(),
                    at.join(", ")
                ),
                Some(Anchor::at_line(file, *line)),
            ));
        }
    }
    Ok(())
}

/// A loaded file that did not parse may not name anything the regions
/// trust, nor any word that patches shared objects: it cannot be checked.
fn opaque_file(file: &str, text: &str, trusted: &BTreeSet<String>) -> Result<(), Escalation> {
    let words = trusted.iter().map(String::as_str).chain(FORBIDDEN.iter().copied()).chain(["prototype", "defineProperty", "globalThis", "Function"]);
    for word in words {
        for (i, line) in text.lines().enumerate() {
            let hit = line.match_indices(word).any(|(at, _)| {
                let before = line[..at].chars().next_back();
                let after = line[at + word.len()..].chars().next();
                let edge = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric() && c != '_' && c != '$');
                edge(before) && edge(after)
            });
            if hit {
                return Err(Escalation::new(
                    EscalationCode::ParseError,
                    format!("a file the package loads does not parse, and it names `{word}`, which fcd would have to check"),
                    Some(Anchor::at_line(file, i as u32 + 1)),
                ));
            }
        }
    }
    Ok(())
}

/// The trusted names that are a module's own: the module-level roots of
/// regions' dotted callees (not region names) that the region's file
/// declares at module level or imports, without exporting them, each with
/// that file.
/// ES modules do not share such a name: another file's binding of it is
/// another variable, and only its own module can assign it. A name two
/// regions would see as different bindings is not private.
fn module_private<'t>(
    trees: &[(&'t str, &Syntax)],
    roots: &[(String, &str)],
    functions: &BTreeSet<String>,
    tables: &BTreeSet<String>,
) -> (BTreeMap<String, &'t str>, BTreeSet<String>) {
    let mut out: BTreeMap<String, Option<&'t str>> = BTreeMap::new();
    let mut state = BTreeSet::new();
    for (name, region_file) in roots.iter().filter(|(n, _)| !functions.contains(n) && !tables.contains(n) && !BUILTINS.contains(&n.as_str())) {
        let home = trees.iter().find(|(f, _)| f == region_file).filter(|(_, syntax)| {
            let root = syntax.root();
            let declares = root.named_children().filter(|d| matches!(d.kind(), "lexical_declaration" | "variable_declaration")).any(|d| {
                d.named_children()
                    .filter(|v| v.kind() == "variable_declarator")
                    .any(|v| v.field_child("name").is_some_and(|n| n.kind() == "identifier" && n.text() == name))
            });
            // An import binds the name in its own module only, like a declaration.
            let imports = root.named_children().filter(|d| d.kind() == "import_statement").any(|d| {
                d.descendants().any(|i| match i.kind() {
                    "import_specifier" => i.field_child("alias").or_else(|| i.field_child("name")).is_some_and(|n| n.text() == name),
                    "import_clause" | "namespace_import" => i.named_children().any(|c| c.kind() == "identifier" && c.text() == name),
                    _ => false,
                })
            });
            let exported = root.descendants().any(|e| e.kind() == "export_specifier" && e.text().split_whitespace().any(|w| w == name));
            if declares && !imports {
                state.insert(name.clone());
            }
            (declares || imports) && !exported
        });
        let slot = out.entry(name.clone()).or_insert(home.map(|(f, _)| *f));
        if *slot != home.map(|(f, _)| *f) {
            *slot = None;
        }
    }
    (out.into_iter().filter_map(|(n, f)| Some((n, f?))).collect(), state)
}

/// Whether a region is a member of a class body (a `Class.method` region).
fn in_class(n: Node<'_>) -> bool {
    n.parent().is_some_and(|p| p.kind() == "class_body")
}

/// The `(Class, method)` of every class-method region, each checked to be a
/// plain method: an accessor or a field of that name runs differently from
/// the body a reviewer reads as the method's.
fn class_methods(regions: &[Region<'_>]) -> Result<Vec<(String, String)>, Escalation> {
    let mut out = Vec::new();
    for r in regions.iter().filter(|r| in_class(r.node)) {
        let fail = |detail: String| Err(Escalation::new(EscalationCode::ShapeMismatch, detail, Some(Anchor::at_line(r.file, r.node.line()))));
        let method = super::class_member_name(r.node).unwrap_or_default();
        if r.node.kind() != "method_definition" {
            return fail(format!("`{method}` is a class field, not a method: the reviewed region is a method body"));
        }
        let before_name = r.node.children().take_while(|c| Some(*c) != r.node.field_child("name")).map(|c| c.text().to_owned()).collect::<Vec<_>>();
        if before_name.iter().any(|t| t == "get" || t == "set" || t == "*") {
            return fail(format!("`{method}` is an accessor or a generator, not a plain method"));
        }
        let class = super::closure::class_of(r.node).unwrap_or_default();
        out.push((class, method));
    }
    Ok(out)
}

/// Whether an import clause or namespace import belongs to an import of a
/// bare specifier (a package or a Node builtin), not of a file of the release.
fn from_package(n: Node<'_>) -> bool {
    let statement = n.ancestors().find(|a| a.kind() == "import_statement");
    statement.and_then(|s| s.field_child("source")).and_then(super::syntax::string_content).is_some_and(|spec| super::loader::is_package(&spec))
}

fn is_function(n: Node<'_>) -> bool {
    n.field_child("value").is_some_and(|v| FUNCTIONS.contains(&v.kind()))
}

fn name(n: Node<'_>) -> Option<String> {
    n.field_child("name").map(|i| i.text().to_owned())
}

impl Check<'_> {
    fn node(
        &self,
        n: Node<'_>,
        trusted: &BTreeSet<String>,
        functions: &BTreeSet<String>,
        tables: &BTreeSet<String>,
        regions: &[Region<'_>],
    ) -> Result<(), Escalation> {
        match n.kind() {
            "with_statement" => return Err(self.fail(n, "a `with` statement makes every name in it ambiguous".into())),
            // Inside a region, `eval(…)` is already a dynamic callee with its own escalation.
            "identifier" | "property_identifier" if FORBIDDEN.contains(&n.text()) && !(n.text() == "eval" && regions.iter().any(|r| r.node.contains(n))) => {
                return Err(self.fail(n, format!("`{}` can change objects or run text as code anywhere in the package", n.text())));
            }
            "new_expression" if n.field_child("constructor").is_some_and(|c| c.text() == "Function") => {
                return Err(self.fail(n, "`new Function` runs text as code".into()));
            }
            "assignment_expression" | "augmented_assignment_expression" => self.write(n.field_child("left"), trusted)?,
            "update_expression" => self.write(n.field_child("argument"), trusted)?,
            "unary_expression" if n.field_child("operator").is_some_and(|o| o.text() == "delete") => self.write(n.field_child("argument"), trusted)?,
            "for_in_statement" => self.write(n.field_child("left"), trusted)?,
            // A package's export under another local name is spelled by its
            // export (`PACKAGE:NAME`), never taken for the reviewed name.
            "import_specifier" if !from_package(n) => {
                let (orig, alias) = (n.field_child("name"), n.field_child("alias"));
                if let (Some(o), Some(a)) = (orig, alias)
                    && trusted.contains(a.text())
                    && self.private.get(a.text()).is_none_or(|home| *home == self.file)
                    && o.text() != a.text()
                {
                    return Err(self.fail(n, format!("`{}` is imported under the name `{}`, which a reviewed region relies on", o.text(), a.text())));
                }
            }
            // A package's default or namespace binding is spelled by the
            // package (`fs/promises:default.realpath`), never taken for a
            // reviewed definition of the release; a relative one could be any.
            "import_clause" | "namespace_import" if !from_package(n) => {
                if let Some(id) = n.named_children().find(|c| c.kind() == "identifier")
                    && trusted.contains(id.text())
                {
                    return Err(self.fail(n, format!("`{}` is bound by a default or namespace import, not the reviewed definition", id.text())));
                }
            }
            _ => {}
        }
        if n.kind() == "member_expression" && n.field_child("property").is_some_and(|p| p.text() == "prototype") {
            self.prototype(n)?;
        }
        if n.kind() == "call_expression" {
            self.define(n, trusted)?;
            self.tool_registration(n, regions)?;
        }
        if n.kind() == "identifier" && functions.contains(n.text()) {
            self.function_use(n)?;
        }
        if (n.kind() == "identifier" || n.kind() == "property_identifier") && tables.contains(n.text()) {
            self.table_use(n, regions)?;
        }
        if n.kind() == "identifier" && self.state.contains(n.text()) && self.private.get(n.text()).is_some_and(|home| *home == self.file) {
            self.state_use(n)?;
        }
        Ok(())
    }

    /// A write whose target is a trusted name, a member of one, a builtin's
    /// member or anything reached through `prototype`.
    fn write(&self, target: Option<Node<'_>>, trusted: &BTreeSet<String>) -> Result<(), Escalation> {
        let Some(target) = target.map(bare) else { return Ok(()) };
        let mut names = Vec::new();
        super::bindings::pattern_names(target, &mut names);
        for id in names {
            if trusted.contains(id.text()) && !self.own_state_write(id) {
                return Err(self.fail(id, format!("`{}`, which a reviewed region relies on, is assigned: the reviewed definition is not what runs", id.text())));
            }
        }
        if !matches!(target.kind(), "member_expression" | "subscript_expression") {
            return Ok(());
        }
        let mut chain = Vec::new();
        let mut root = target;
        while matches!(root.kind(), "member_expression" | "subscript_expression") {
            if let Some(p) = root.field_child("property") {
                chain.push(p.text().to_owned());
            }
            match root.field_child("object") {
                Some(o) => root = bare(o),
                None => break,
            }
        }
        let root_name = root.text();
        if chain.iter().any(|p| p == "prototype" || p == "__proto__") {
            return Err(self.fail(target, format!("writes `{}`: a prototype write changes every object of that type", target.compact_text())));
        }
        let elsewhere = self.private.get(root_name).is_some_and(|home| *home != self.file);
        // The status the process exits with when it ends: no code reads it back to decide anything.
        if root.kind() == "identifier" && root_name == "process" && chain == ["exitCode"] && target.kind() == "member_expression" {
            return Ok(());
        }
        if root.kind() == "identifier" && (BUILTINS.contains(&root_name) || (trusted.contains(root_name) && !elsewhere)) {
            return Err(self.fail(target, format!("writes `{}`: a member of `{root_name}`, which reviewed code relies on", target.compact_text())));
        }
        if root.kind() == "call_expression" {
            return Err(self.fail(target, format!("writes `{}`: a member of a call's result fcd cannot name", target.compact_text())));
        }
        Ok(())
    }

    /// Whether `id`, a trusted name being assigned, is module state the write
    /// cannot touch as reviewed code sees it: another module's own variable
    /// of the same name, or its own module's, written inside a function
    /// region of that module (a reviewed setter).
    fn own_state_write(&self, id: Node<'_>) -> bool {
        let Some(home) = self.private.get(id.text()) else { return false };
        *home != self.file || self.regions.iter().any(|r| r.file == self.file && FUNCTIONS.contains(&r.node.kind()) && r.node.contains(id))
    }

    /// What could replace a reviewed method of a class: a subclass (its
    /// override may be what runs), a write to a member of the method's name
    /// on any object (an instance's own property shadows the prototype's),
    /// or `defineProperty` with that name.
    fn method_surroundings(&self, n: Node<'_>, methods: &[(String, String)]) -> Result<(), Escalation> {
        if methods.is_empty() {
            return Ok(());
        }
        match n.kind() {
            "class_heritage" => {
                if let Some((class, _)) = methods.iter().find(|(class, _)| n.descendants().any(|i| i.kind() == "identifier" && i.text() == class)) {
                    return Err(self.fail(n, format!("a class extends `{class}`, whose reviewed method a subclass may override")));
                }
            }
            "assignment_expression" | "augmented_assignment_expression" => {
                let written = n.field_child("left").map(bare).filter(|l| l.kind() == "member_expression").and_then(|l| l.field_child("property"));
                if let Some(p) = written
                    && let Some((class, method)) = methods.iter().find(|(_, m)| m == p.text())
                {
                    return Err(self.fail(n, format!("writes a member `{}`: an object's own `{method}` shadows the reviewed `{class}.{method}`", p.text())));
                }
            }
            "call_expression" => {
                let callee = n.field_child("function").and_then(dotted).unwrap_or_default();
                let method = callee.rsplit('.').next().unwrap_or_default();
                if matches!(method, "defineProperty" | "defineProperties" | "assign" | "set") {
                    let args = n.items("arguments");
                    let named = args.iter().any(|a| {
                        let text = super::syntax::string_content(bare(*a));
                        methods
                            .iter()
                            .any(|(_, m)| text.as_deref() == Some(m.as_str()) || a.descendants().any(|d| d.kind() == "property_identifier" && d.text() == m))
                    });
                    if named {
                        return Err(self.fail(n, format!("`{callee}` names a reviewed method: it may replace it on an object")));
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// `X.prototype` may be read through (`X.prototype.m`) or compared, nothing else.
    fn prototype(&self, n: Node<'_>) -> Result<(), Escalation> {
        let Some(parent) = n.parent() else { return Ok(()) };
        let read_through = parent.kind() == "member_expression" && parent.field_child("object") == Some(n);
        let compared = parent.kind() == "binary_expression"
            && parent.field_child("operator").is_some_and(|o| matches!(o.text(), "===" | "!==" | "==" | "!=" | "instanceof"));
        if read_through || compared {
            return Ok(());
        }
        Err(self.fail(n, format!("`{}` escapes as a value: whoever holds it can change every object of that type", n.compact_text())))
    }

    /// `Object.defineProperty(T, …)`, `Object.assign(T, …)` and `Reflect.*`
    /// on a builtin or a trusted name define getters or replace members.
    fn define(&self, call: Node<'_>, trusted: &BTreeSet<String>) -> Result<(), Escalation> {
        let Some(callee) = call.field_child("function").and_then(dotted) else { return Ok(()) };
        let method = callee.rsplit('.').next().unwrap_or_default();
        let defining = matches!(method, "defineProperty" | "defineProperties" | "assign")
            || callee.starts_with("Reflect.") && matches!(method, "set" | "defineProperty" | "deleteProperty");
        if !defining {
            return Ok(());
        }
        let Some(first) = call.items("arguments").first().map(|a| bare(*a)) else { return Ok(()) };
        let root = dotted(first).map(|d| d.split(['.', '[', '(']).next().unwrap_or_default().to_owned()).unwrap_or_default();
        if BUILTINS.contains(&root.as_str()) || trusted.contains(&root) || first.kind() == "call_expression" {
            return Err(self.fail(call, format!("`{callee}` on `{}` replaces members reviewed code relies on", first.compact_text())));
        }
        Ok(())
    }

    /// A reviewed function may be called or imported by name, or handed to
    /// the one registration of the tool, never otherwise taken as a value.
    fn function_use(&self, n: Node<'_>) -> Result<(), Escalation> {
        let Some(parent) = n.parent() else { return Ok(()) };
        let ok = match parent.kind() {
            "call_expression" => parent.field_child("function") == Some(n),
            "function_declaration" | "generator_function_declaration" => true,
            "variable_declarator" => parent.field_child("name") == Some(n),
            "import_specifier" | "export_specifier" | "import_clause" => true,
            // A TypeScript type query (`ReturnType<typeof f>`) is erased:
            // nothing of it runs.
            "type_query" => true,
            "arguments" => self.registers_tool(parent, n) || process_listener(parent, n),
            _ => false,
        };
        if ok {
            return Ok(());
        }
        Err(self
            .fail(n, format!("`{}`, a reviewed function, is used as a value (`{}`): a wrapper or stand-in may run instead", n.text(), parent.compact_text())))
    }

    /// A call registering the tool (its first argument the tool's name) with a
    /// function written in place: what serves the tool is then that
    /// function, which no region covers, not the reviewed handler, unless
    /// that function is itself a region (a `callback` region).
    fn tool_registration(&self, call: Node<'_>, regions: &[Region<'_>]) -> Result<(), Escalation> {
        let args = call.items("arguments");
        let named = args.first().and_then(|a| super::syntax::string_content(*a)).is_some_and(|name| !self.tool.is_empty() && name == self.tool);
        match args.last().map(|a| bare(*a)) {
            Some(last) if named && args.len() > 1 && FUNCTIONS.contains(&last.kind()) && !regions.iter().any(|r| r.node == last) => {
                Err(self.fail(last, format!("the tool `{}` is registered with a function written in place, not the reviewed handler", self.tool)))
            }
            _ => Ok(()),
        }
    }

    /// Whether `f` is the last argument of a call whose first argument is the
    /// tool's name as a string literal (`server.tool("execute_sql", …, f)`):
    /// the registration of the tool with the reviewed function, recorded so
    /// that a second one escalates.
    fn registers_tool(&self, arguments: Node<'_>, f: Node<'_>) -> bool {
        let Some(call) = arguments.parent().filter(|c| c.kind() == "call_expression") else { return false };
        let args = call.items("arguments");
        let named = args.first().and_then(|a| super::syntax::string_content(*a)).is_some_and(|name| !self.tool.is_empty() && name == self.tool);
        if named && args.len() > 1 && args.last() == Some(&f) {
            self.registered.borrow_mut().push((self.file.to_owned(), f.line()));
            return true;
        }
        false
    }

    /// A reviewed table may only be read: `T[k]` / `T.row`, then a reading
    /// method or `.length`, or inside a reviewed region (whose inventory sees the rest).
    fn table_use(&self, n: Node<'_>, regions: &[Region<'_>]) -> Result<(), Escalation> {
        let Some(parent) = n.parent() else { return Ok(()) };
        match parent.kind() {
            "variable_declarator" if parent.field_child("name") == Some(n) => return Ok(()),
            "import_specifier" | "export_specifier" => return Ok(()),
            "member_expression" if parent.field_child("property") == Some(n) => {
                // `ns.T`: a namespace read, checked like the bare name below.
                return self.table_access(parent, regions);
            }
            _ => {}
        }
        if n.kind() == "property_identifier" {
            return Ok(()); // another object's property of that name
        }
        if self.handed_to_read_only(n) {
            return Ok(());
        }
        self.table_access(n, regions)
    }

    /// Whether `n` is a plain argument of a call whose callee the profile
    /// reviewed as read-only (`source.read-only-callees`), spelled as a
    /// region's callee is: a package import as `PACKAGE:NAME` (a default
    /// export `PACKAGE:default.m`, a namespace `PACKAGE:m`), a global as
    /// written. A head bound by an enclosing function, declared at module
    /// level, imported under another name or from a file of the release is
    /// not the reviewed callee.
    fn handed_to_read_only(&self, n: Node<'_>) -> bool {
        handed_to_read_only(self.read_only, n)
    }
}

/// [`Check::handed_to_read_only`], for the callees the profile lists as `read_only`.
pub(super) fn handed_to_read_only(read_only: &[String], n: Node<'_>) -> bool {
    let Some(args) = n.parent().filter(|p| p.kind() == "arguments") else { return false };
    let Some(call) = args.parent().filter(|c| c.kind() == "call_expression" && c.field_child("arguments") == Some(args)) else { return false };
    let Some(callee) = call.field_child("function").map(bare).and_then(dotted) else { return false };
    let Some((head, rest)) = callee.split_once('.').map_or(Some((callee.as_str(), "")), |(h, r)| Some((h, r))) else { return false };
    let plain = |w: &str| !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    if !plain(head) || !(rest.is_empty() || rest.split('.').all(plain)) {
        return false;
    }
    let local = n.ancestors().filter(|a| FUNCTIONS.contains(&a.kind())).any(|f| {
        let b = super::bindings::Bindings::of(f);
        b.is_param(head) || b.count(head) > 0
    });
    if local {
        return false;
    }
    let root = n.ancestors().last().unwrap_or(n);
    let identity = match module_head(root, head) {
        Head::Global => callee.clone(),
        Head::Declared => return false,
        Head::Import(spec, orig) if super::loader::is_package(&spec) => match orig.as_str() {
            "default" => format!("{spec}:default{}", &callee[head.len()..]),
            "*" if !rest.is_empty() => format!("{spec}:{rest}"),
            o if o == head => format!("{spec}:{callee}"),
            _ => return false,
        },
        Head::Import(..) => return false,
    };
    read_only.contains(&identity)
}

impl Check<'_> {
    /// A use, in its own module, of module state a region trusts: inside a
    /// function region it was reviewed; elsewhere the module may declare it,
    /// assign it (checked as a write) and read it by a copying spread
    /// (`[...dirs]`), `.length` or a reading method, as long as no enclosing
    /// function binds a local of the name (then it is that local). Anything
    /// else (`dirs.push(…)`, passing or returning the array itself) could
    /// change what the regions read.
    fn state_use(&self, n: Node<'_>) -> Result<(), Escalation> {
        let functions = n.ancestors().filter(|a| FUNCTIONS.contains(&a.kind()));
        for f in functions {
            let b = super::bindings::Bindings::of(f);
            if b.is_param(n.text()) || b.count(n.text()) > 0 {
                return Ok(());
            }
            if self.regions.iter().any(|r| r.node == f) {
                return Ok(());
            }
        }
        // A dispatcher case's code (its clause and the handler's statements around the `switch`) was reviewed too.
        if self.regions.iter().any(|r| r.node.kind() == "switch_case" && super::route::owner(r.node).contains(n) && super::route::runs_for_case(r.node, n)) {
            return Ok(());
        }
        let Some(parent) = n.parent() else { return Ok(()) };
        let ok = match parent.kind() {
            "variable_declarator" => parent.field_child("name") == Some(n),
            "assignment_expression" | "augmented_assignment_expression" => parent.field_child("left") == Some(n),
            "spread_element" => parent.parent().is_some_and(|a| a.kind() == "array"),
            "arguments" => self.handed_to_read_only(n),
            "member_expression" if parent.field_child("object") == Some(n) => {
                let member = parent.field_child("property").map(|p| p.text()).unwrap_or_default();
                member == "length" || (READ_METHODS.contains(&member) && parent.parent().is_some_and(|c| c.kind() == "call_expression"))
            }
            _ => false,
        };
        if ok {
            return Ok(());
        }
        Err(self.fail(
            n,
            format!(
                "`{}`, module state a reviewed region reads, is used outside the regions in a way that may change it (`{}`)",
                n.text(),
                parent.compact_text()
            ),
        ))
    }

    fn table_access(&self, t: Node<'_>, regions: &[Region<'_>]) -> Result<(), Escalation> {
        let fail = |detail: &str| Err(self.fail(t, format!("the reviewed table `{}` {detail}", t.compact_text())));
        let Some(access) = t.parent().filter(|p| matches!(p.kind(), "member_expression" | "subscript_expression") && p.field_child("object") == Some(t)) else {
            return fail("is used as a whole value, which lets it be changed");
        };
        if regions.iter().any(|r| r.node.contains(access)) {
            return Ok(());
        }
        let Some(user) = access.parent() else { return Ok(()) };
        let method = (user.kind() == "member_expression" && user.field_child("object") == Some(access)).then(|| user.field_child("property")).flatten();
        match method {
            Some(m) if m.text() == "length" => Ok(()),
            Some(m) if READ_METHODS.contains(&m.text()) && user.parent().is_some_and(|c| c.kind() == "call_expression") => Ok(()),
            _ => fail("is read outside the reviewed regions in a way that may change it"),
        }
    }
}

/// Whether `f` is the listener (last argument, after a literal event name)
/// of a listener registration on the process or one of its streams
/// (`process.on("SIGTERM", f)`, `process.stdin.on("end", f)`): the process
/// calls the function itself, and dispatches no tool call. Whether the
/// listener may be installed at all is [`fcd_frontends::ambient`]'s to judge.
fn process_listener(arguments: Node<'_>, f: Node<'_>) -> bool {
    let Some(call) = arguments.parent().filter(|c| c.kind() == "call_expression") else { return false };
    let items: Vec<Node<'_>> = arguments.named_children().filter(|c| c.kind() != "comment").collect();
    let callee = call.field_child("function").and_then(dotted).unwrap_or_default();
    let Some((object, method)) = callee.rsplit_once('.') else { return false };
    matches!(object, "process" | "process.stdin" | "process.stdout" | "process.stderr")
        && matches!(method, "on" | "once" | "addListener" | "prependListener" | "prependOnceListener")
        && items.len() == 2
        && items.last() == Some(&f)
        && string_content(items[0]).is_some()
}
