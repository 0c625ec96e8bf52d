//! Release functions pinned by a digest of everything they reach.
//!
//! Some functions a region calls cannot be regions yet: their bodies rebind
//! their locals, or pick a scanner from a table at run time, so no inventory
//! can name their call sites. They may not be trusted by name either: a
//! helper can gain an effect from one release to the next while every
//! identity stays the same. A pinned function (`source.pinned-functions`) is
//! bound instead to the text a reviewer read, and to all the release code
//! that text can reach:
//!
//! - its definition: the function, or for a method the whole class (a
//!   method reads and writes the state its class's other members keep);
//! - transitively, every module-level definition of the release that a
//!   definition in the closure names (functions, classes, tables, constants),
//!   in its own file or imported from another file of the release. A name of
//!   a package, or a global, is outside the release and trusted by identity.
//!
//! The digest hashes each definition's name and tokens (comments left out),
//! never its file: a bundler's chunk names change from build to build. Any
//! change to any definition changes the digest, which escalates naming it,
//! for a reviewer to read and list.
//!
//! The text alone binds nothing if other code can change what it reaches.
//! So every name of the closure must be bound once at the top of its file,
//! and code outside the closure may only call into it (`f(…)`, `new C(…)`,
//! a static `C.m(…)` of a class in it) or import and export it: any other
//! use (an assignment, a write to a member, the value handed on, an
//! instance's method) escalates. A module object counts as its names, however
//! it is held: an `import * as` namespace, the value of `require("./…")` or
//! `import("./…")` (bound, destructured or read directly), or a file's own
//! `exports`; handing such a module on escalates when it defines or
//! re-exports code of the release.

use std::collections::{BTreeMap, BTreeSet};

use fcd_frontends::frontend::Program;
use fcd_frontends::ts::Node;

use super::FUNCTIONS;
use super::bindings::{module_bindings, pattern_names};
use super::loader::{LOADERS, is_package, resolve};
use super::scope::TopLevel;
use super::settings::Settings;
use super::syntax::bare;

/// A pinned function's closure: its digest and the definitions it binds.
pub(super) struct Pinned<'a> {
    /// `sha256:` over every definition's name and tokens, sorted by name.
    pub(super) digest: String,
    definitions: Vec<Definition<'a>>,
}

/// A module-level definition of the release in a pinned closure.
struct Definition<'a> {
    file: &'a str,
    name: String,
    /// The declaration (a function, class or enum) or the declarator (a
    /// variable), then the top-level statements that write its members
    /// (`C.cache = new Map()`, as bundlers lower a static field).
    nodes: Vec<Node<'a>>,
    /// What the digest hashes: `const x = …`, `function f(…) {…}`, tokens only.
    tokens: String,
    /// Whether the closure reads a member of it (`f.cache`): then it may not go out as a value.
    members_read: bool,
}

/// The closure of `head` (`f`, `C.m`, `static C.m`, `C.constructor`, `o.m`)
/// as defined at the top of `file`, or why it cannot be pinned.
///
/// A module loaded at run time (`require(…)`, `import(…)`) is not in the
/// digest, so a closure that loads one cannot be pinned for a region to
/// call ([`Loads::Refused`]). The loader check alone asks for the closure
/// of a function that holds a loader fcd cannot follow
/// ([`Loads::Reviewed`]): there the digest binds the text a reviewer read
/// to say what it loads, and a region calling it still escalates here.
pub(super) fn closure<'a>(program: &Program<'a, '_>, file: &'a str, head: &str) -> Result<Pinned<'a>, String> {
    closure_with(program, file, head, Loads::Refused)
}

/// Whether a pinned closure may load a module at run time.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Loads {
    /// A load escalates: what it loads would run unread on the call path.
    Refused,
    /// The reviewer read the loads (see [`super::loader`]).
    Reviewed,
}

/// [`closure`], saying whether its text may load modules at run time.
pub(super) fn closure_with<'a>(program: &Program<'a, '_>, file: &'a str, head: &str, loads: Loads) -> Result<Pinned<'a>, String> {
    let bare = head.strip_prefix("static ").unwrap_or(head);
    let root = bare.split('.').next().unwrap_or(bare);
    let known: BTreeSet<&str> = program.trees.iter().map(|(f, _)| *f).collect();
    let mut files: BTreeMap<&'a str, File<'a>> = BTreeMap::new();
    let mut definitions: Vec<Definition<'a>> = Vec::new();
    let mut seen: BTreeSet<(&'a str, String)> = BTreeSet::new();
    let mut todo = vec![(file, root.to_owned())];
    while let Some((file, name)) = todo.pop() {
        if !seen.insert((file, name.clone())) {
            continue;
        }
        let Some(top) = program.trees.iter().find(|(f, _)| *f == file).map(|(_, s)| s.root()) else {
            return Err(format!("`{name}` is in {file}, which did not parse, so its text cannot be pinned"));
        };
        let File { scope, bound } = files.entry(file).or_insert_with(|| File::of(top));
        if let Some((spec, orig)) = scope.imports.get(&name) {
            if is_package(spec) {
                continue;
            }
            let Some(home) = resolve(file, spec, &known).and_then(|h| known.get(h.as_str()).copied()) else {
                return Err(format!("`{name}` is imported in {file} from `{spec}`, a file of the release that is not loaded"));
            };
            if orig == "default" || orig == "*" {
                let how = if orig == "*" { "namespace" } else { "default" };
                return Err(format!("`{name}` is a {how} import of {home} in {file}: pin the functions it names by their own names"));
            }
            todo.push((home, orig.clone()));
            continue;
        }
        if !scope.declared.contains(&name) {
            // A global (`Object`, `process`): outside the release.
            continue;
        }
        let count = bound.get(&name).copied().unwrap_or(0);
        if count != 1 {
            return Err(format!("`{name}` is bound {count} times at the top of {file}, so which definition runs is not fixed"));
        }
        let Some((node, mut tokens)) = definition(top, &name) else {
            return Err(format!("`{name}` is declared in {file} other than by a function, a class, an enum or a variable at the top"));
        };
        let mut nodes = vec![node];
        for statement in top.named_children().filter(|s| s.kind() == "expression_statement" && writes(*s, &name)) {
            tokens.push('\n');
            tokens.push_str(&statement.token_text());
            nodes.push(statement);
        }
        // A package loaded at run time is outside the release, as a static
        // import of it is; a file of the release, or a computed name, is code
        // the digest would not bind (unless a reviewer read the load: [`pinned_around`]).
        if let Some(load) = nodes.iter().flat_map(|n| n.descendants()).find(|c| loads_a_module(*c) && !loads_a_package(*c)).filter(|_| loads == Loads::Refused)
        {
            return Err(format!("`{name}` loads a module at run time (line {} of {file}): what it loads is not in the digest", load.line()));
        }
        for reference in nodes.iter().flat_map(|n| n.descendants()).filter(|n| matches!(n.kind(), "identifier" | "shorthand_property_identifier")) {
            let text = reference.text();
            if text != name && (scope.declared.contains(text) || scope.imports.contains_key(text)) {
                todo.push((file, text.to_owned()));
            }
        }
        definitions.push(Definition { file, name, nodes, tokens, members_read: false });
    }
    // Closure text reading `f.x` or `f[…]` relies on what the members of `f` are.
    let read: BTreeSet<&str> = definitions
        .iter()
        .flat_map(|d| d.nodes.iter().flat_map(|n| n.descendants()))
        .filter(|n| matches!(n.kind(), "member_expression" | "subscript_expression"))
        .filter_map(|m| m.field_child("object").filter(|o| o.kind() == "identifier").map(|o| o.text()))
        .collect();
    for d in &mut definitions {
        d.members_read = read.contains(d.name.as_str());
    }
    fcd_frontends::pinned::sort(&mut definitions, |d| (d.name.as_str(), d.tokens.as_str()));
    if let Some(pair) = definitions.windows(2).find(|w| w[0].name == w[1].name) {
        return Err(format!("`{}` is defined in both {} and {}, so the closure's text does not say which runs", pair[0].name, pair[0].file, pair[1].file));
    }
    let digest = fcd_frontends::pinned::digest(definitions.iter().map(|d| (d.name.as_str(), d.tokens.as_str())));
    Ok(Pinned { digest, definitions })
}

/// What the closure reads of a file, once: its top level, and how often it binds each name.
struct File<'a> {
    scope: TopLevel<'a>,
    bound: BTreeMap<String, usize>,
}

impl<'a> File<'a> {
    fn of(top: Node<'a>) -> File<'a> {
        let mut bound = BTreeMap::new();
        for b in top.descendants().flat_map(module_bindings) {
            *bound.entry(b.text().to_owned()).or_default() += 1;
        }
        File { scope: TopLevel::of(top), bound }
    }
}

/// Whether `n` loads a module when it runs: `require(…)` or `import(…)`, or
/// makes a loader (`require` as a value, `createRequire`, `getBuiltinModule`).
fn loads_a_module(n: Node<'_>) -> bool {
    match n.kind() {
        "call_expression" => n.field_child("function").is_some_and(|f| f.kind() == "import" || (f.kind() == "identifier" && f.text() == "require")),
        "identifier" | "property_identifier" => {
            LOADERS.contains(&n.text())
                || (n.text() == "require" && !n.parent().is_some_and(|p| p.kind() == "call_expression" && p.field_child("function") == Some(n)))
        }
        _ => false,
    }
}

/// Whether a module load names a package or a Node builtin by a literal (`import("pg")`).
fn loads_a_package(n: Node<'_>) -> bool {
    matches!(n.items("arguments").as_slice(), [one] if super::syntax::string_content(*one).is_some_and(|s| is_package(&s) && !s.starts_with('#')))
}

/// The top-level definition of `name` in a file whose root is `top`, with
/// the tokens the digest hashes.
fn definition<'a>(top: Node<'a>, name: &str) -> Option<(Node<'a>, String)> {
    for n in top.named_children() {
        let decl = if n.kind() == "export_statement" { n.field_child("declaration").unwrap_or(n) } else { n };
        match decl.kind() {
            "function_declaration" | "generator_function_declaration" | "class_declaration" | "enum_declaration"
                if decl.field_child("name").is_some_and(|i| i.text() == name) =>
            {
                return Some((decl, decl.token_text()));
            }
            "lexical_declaration" | "variable_declaration" => {
                let keyword = decl.children().next().map(|k| k.text().to_owned()).unwrap_or_default();
                for d in decl.named_children().filter(|d| d.kind() == "variable_declarator") {
                    let mut names = Vec::new();
                    if let Some(p) = d.field_child("name") {
                        pattern_names(p, &mut names);
                    }
                    if names.iter().any(|i| i.text() == name) {
                        return Some((d, format!("{keyword} {}", d.token_text())));
                    }
                }
            }
            _ => {}
        }
    }
    None
}

impl<'a> Pinned<'a> {
    /// Each definition of the closure, by name, with where it is (from its
    /// first node to its last: a top-level field write may come later).
    pub(super) fn anchors(&self) -> Vec<(String, fcd_model::effect::Anchor)> {
        self.definitions
            .iter()
            .map(|d| {
                let first = d.nodes[0];
                let last = d.nodes.iter().map(|n| n.end_line()).max().unwrap_or(first.end_line());
                (d.name.clone(), fcd_model::effect::Anchor { file: d.file.to_owned(), line: first.line(), end_line: last, hash: String::new() })
            })
            .collect()
    }

    /// Whether `node` of `file` is part of the closure's text.
    pub(super) fn holds(&self, file: &str, node: Node<'_>) -> bool {
        self.definitions.iter().any(|d| d.file == file && d.nodes.iter().any(|m| m.contains(node)))
    }

    /// Every use of the closure's names outside it, in every loaded file,
    /// is a call into it or an import or export: anything else could change
    /// what the pinned text reaches. `Err` names the first other use.
    pub(super) fn check_uses(&self, program: &Program<'a, '_>) -> Result<(), String> {
        self.check_uses_of(program, |_| true, false)
    }

    /// [`Self::check_uses`] for the definitions `checked` names only;
    /// `lazy_loads`: a module loaded for its effect by a thunk
    /// (`() => import("./x.js")`, [`lazy_load`]) is not a module handed on.
    pub(super) fn check_uses_of(&self, program: &Program<'a, '_>, checked: impl Fn(&str) -> bool, lazy_loads: bool) -> Result<(), String> {
        let defs: Vec<&Definition<'a>> = self.definitions.iter().filter(|d| checked(&d.name)).collect();
        let by_file: BTreeMap<&str, Vec<&Definition<'a>>> = defs.iter().copied().fold(BTreeMap::new(), |mut m, d| {
            m.entry(d.file).or_default().push(d);
            m
        });
        let known: BTreeSet<&str> = program.trees.iter().map(|(f, _)| *f).collect();
        // Whether a module of the release, held as a value, may hand on
        // closure code: it defines some, or re-exports anything of the
        // release (which may be some). Unresolved, it may.
        let exposes = |from: &str, spec: Option<&str>| {
            let Some(target) = spec.map_or(Some(from.to_owned()), |s| resolve(from, s, &known)) else { return true };
            by_file.contains_key(target.as_str()) || program.trees.iter().find(|(f, _)| *f == target).is_none_or(|(_, syntax)| reexports(syntax.root()))
        };
        // A second name a file gives a definition of its own at the top
        // (`var MySQLConnector = _MySQLConnector;`, as a bundler exports a
        // class that refers to itself): its uses are the definition's, and
        // are checked as such; the binding itself is no use.
        let aliases: Vec<(&str, Node<'_>, &Definition<'a>)> = program
            .trees
            .iter()
            .flat_map(|(file, syntax)| syntax.root().named_children().map(move |n| (*file, n)))
            .filter(|(_, n)| matches!(n.kind(), "lexical_declaration" | "variable_declaration"))
            .flat_map(|(file, n)| n.named_children().filter(|d| d.kind() == "variable_declarator").map(move |d| (file, d)))
            .filter_map(|(file, declarator)| {
                let name = declarator.field_child("name").filter(|i| i.kind() == "identifier")?;
                let value = declarator.field_child("value").filter(|v| v.kind() == "identifier")?;
                let d = by_file.get(file)?.iter().find(|d| d.name == value.text())?;
                (!self.holds(file, declarator)).then_some((file, name, *d))
            })
            .collect();
        let alias_of = |name: &str| aliases.iter().find(|(_, a, _)| a.text() == name).map(|(_, _, d)| *d);
        for (file, syntax) in program.trees {
            let top = syntax.root();
            let scope = TopLevel::of(top);
            // The closure's names as this file spells them: its own, or imported from their file.
            let mut here: BTreeMap<&str, &Definition<'a>> = BTreeMap::new();
            for d in by_file.get(file).into_iter().flatten() {
                here.insert(d.name.as_str(), d);
            }
            for (_, alias, d) in aliases.iter().filter(|(f, _, _)| f == file) {
                here.insert(alias.text(), d);
            }
            // An import by a closure name is that definition, wherever the
            // import resolves (a file re-exporting it counts); a namespace or
            // default import of a release file may reach any of them.
            let mut namespaces: BTreeMap<&str, Option<&str>> = BTreeMap::new();
            for (local, (spec, orig)) in scope.imports.iter().filter(|(_, (spec, _))| !is_package(spec)) {
                if orig == "*" || orig == "default" {
                    namespaces.insert(local.as_str(), Some(spec.as_str()));
                } else if let Some(d) = defs.iter().copied().find(|d| &d.name == orig).or_else(|| alias_of(orig)) {
                    here.insert(local.as_str(), d);
                }
            }
            // The module objects it reaches by value: `require("./…")`, `import("./…")`, its own `exports`.
            let held = module_values(top, lazy_loads);
            if let Some((line, _)) = held.handed.iter().find(|(_, spec)| exposes(file, spec.as_deref())) {
                return Err(format!("line {line} of {file} hands on a module of the release whose exports may include code the pinned text reaches"));
            }
            for (local, orig) in &held.named {
                if let Some(d) = defs.iter().copied().find(|d| d.name == *orig) {
                    here.insert(local, d);
                }
            }
            namespaces.extend(held.namespaces.iter().map(|(local, spec)| (*local, spec.as_deref())));
            if here.is_empty() && namespaces.is_empty() && held.members.is_empty() {
                continue;
            }
            let inside = |n: Node<'_>| self.holds(file, n);
            for (member, own) in &held.members {
                let Some(d) = member.field_child("property").and_then(|p| defs.iter().copied().find(|d| d.name == p.text())) else { continue };
                // `exports.Name = …` in the file itself is its export, not a write to the definition.
                let exported =
                    *own && d.file == *file && member.parent().is_some_and(|p| p.kind() == "assignment_expression" && p.field_child("left") == Some(*member));
                if exported || inside(*member) || reads_only(*member, self.aliased(d)) {
                    continue;
                }
                return Err(misused(file, *member));
            }
            for n in top.descendants().filter(|n| matches!(n.kind(), "identifier" | "shorthand_property_identifier")) {
                if held.sites.contains(&n) {
                    continue;
                }
                // `ns.Name` stands for the closure's `Name`; `ns` used otherwise hands on every export.
                let (used, d) = if let Some(spec) = namespaces.get(n.text()) {
                    let member = n.parent().filter(|p| p.kind() == "member_expression" && p.field_child("object") == Some(n));
                    let named = member.and_then(|m| {
                        let property = m.field_child("property")?;
                        defs.iter().copied().find(|d| d.name == property.text()).map(|d| (m, d))
                    });
                    match named {
                        Some(found) => found,
                        None if member.is_some() || n.parent().is_some_and(|p| matches!(p.kind(), "namespace_import" | "import_clause")) => continue,
                        None if !exposes(file, *spec) => continue,
                        None => {
                            return Err(format!(
                                "line {} of {file} hands on `{}`, a module of the release whose exports may include code the pinned text reaches",
                                n.line(),
                                n.text()
                            ));
                        }
                    }
                } else {
                    let Some(d) = here.get(n.text()) else { continue };
                    // The alias's own binding, and the definition it names there.
                    let binding = |a: &Node<'_>| *a == n || a.parent().and_then(|decl| decl.field_child("value")) == Some(n);
                    if aliases.iter().any(|(f, a, _)| f == file && binding(a)) {
                        continue;
                    }
                    (n, *d)
                };
                if inside(used) || reads_only(used, self.aliased(d)) {
                    continue;
                }
                return Err(misused(file, used));
            }
        }
        Ok(())
    }

    /// The class a closure name stands for when it is bound to another name
    /// of the closure in its own file (`var Registry = _Registry;`, as a
    /// bundler keeps a class that refers to itself): a static call through
    /// the alias is a static call of that class. Anything else is itself.
    fn aliased<'d>(&'d self, d: &'d Definition<'a>) -> &'d Definition<'a> {
        let node = d.nodes[0];
        let target = Some(node).filter(|n| n.kind() == "variable_declarator").and_then(|n| n.field_child("value")).filter(|v| v.kind() == "identifier");
        target.and_then(|t| self.definitions.iter().find(|o| o.file == d.file && o.name == t.text() && !static_methods(o.nodes[0]).is_empty())).unwrap_or(d)
    }
}

/// Why a use of closure code outside the closure escalates, naming it and its line.
fn misused(file: &str, used: Node<'_>) -> String {
    format!(
        "line {} of {file} uses `{}` other than by calling it or reading a constant of it, and it is release code \
         the pinned text reaches: what it does there is not what the digest binds",
        used.line(),
        used.text()
    )
}

/// The module objects of the release a file holds as values, and how it
/// holds them. A module is named by its specifier, or `None` for the file's own.
#[derive(Default)]
struct ModuleValues<'a> {
    /// Names bound to a whole module: `const m = require("./x.js")`.
    namespaces: Vec<(&'a str, Option<String>)>,
    /// Names destructured from one, with the export each names: `const { a: b } = …` is `("b", "a")`.
    named: Vec<(&'a str, &'a str)>,
    /// Members read from one directly (`require("./x.js").a`), and whether
    /// the module is the file's own `exports`.
    members: Vec<(Node<'a>, bool)>,
    /// The identifiers that bind the names above: a declaration, not a use.
    sites: Vec<Node<'a>>,
    /// Modules used any other way (returned, passed, stored), by line: every export goes with them.
    handed: Vec<(u32, Option<String>)>,
}

/// How the file whose root is `top` holds a module of the release as a
/// value: the result of `require("./…")` or `import("./…")` (awaited or
/// not), and its own `exports` and `module.exports` (whatever declares
/// them: a local of that name is checked as strictly). A module bound whole
/// to a name, its exports destructured by name, a member read, or a load for
/// its effect are followed; any other use hands every export on.
fn module_values(top: Node<'_>, lazy_loads: bool) -> ModuleValues<'_> {
    let mut held = ModuleValues::default();
    for n in top.descendants() {
        let own = (n.kind() == "identifier" && n.text() == "exports" && !is_member_of(n))
            || (n.kind() == "member_expression"
                && n.field_child("object").is_some_and(|o| o.kind() == "identifier" && o.text() == "module")
                && n.field_child("property").is_some_and(|p| p.text() == "exports"));
        let spec = if loads_a_module(n) { n.items("arguments").first().and_then(|a| super::syntax::string_content(*a)) } else { None };
        if !own && spec.as_deref().is_none_or(is_package) {
            continue;
        }
        let mut value = n;
        while let Some(p) = value.parent().filter(|p| matches!(p.kind(), "await_expression" | "parenthesized_expression")) {
            value = p;
        }
        let Some(parent) = value.parent() else { continue };
        if lazy_loads && lazy_load(n, value) {
            continue;
        }
        match parent.kind() {
            "member_expression" if parent.field_child("object") == Some(value) => held.members.push((parent, own)),
            "expression_statement" => {}
            // `module.exports = { … }` replaces the file's exports: the names it lists are read as any use.
            "assignment_expression" if own && parent.field_child("left") == Some(value) => {}
            "variable_declarator" if parent.field_child("value") == Some(value) => match parent.field_child("name") {
                Some(name) if name.kind() == "identifier" => {
                    held.namespaces.push((name.text(), spec));
                    held.sites.push(name);
                }
                Some(name) if name.kind() == "object_pattern" => {
                    for p in name.named_children() {
                        match (p.kind(), p.field_child("key"), p.field_child("value")) {
                            ("shorthand_property_identifier_pattern", _, _) => held.named.push((p.text(), p.text())),
                            ("pair_pattern", Some(key), Some(local)) if local.kind() == "identifier" => {
                                held.named.push((local.text(), key.text().trim_matches(|c| c == '"' || c == '\'')));
                                held.sites.push(local);
                            }
                            _ => held.handed.push((p.line(), spec.clone())),
                        }
                    }
                }
                _ => held.handed.push((parent.line(), spec)),
            },
            _ => held.handed.push((value.line(), spec)),
        }
    }
    held
}

/// Whether `load`, held as `value`, is a lazy load of a module for its
/// effect: `() => import("./x.js")`, a thunk of no parameters whose whole
/// body is the `import()`, as a table of connectors to load at startup is
/// written. Only a class pinned for a dispatched call may be loaded so
/// (`closure.rs`): an ES module's namespace cannot be written (its exports
/// are read-only bindings), a prototype write escalates wherever it is,
/// and a method of the dispatched name assigned anywhere escalates. What
/// is left is a static member of the class written through the namespace
/// by code that holds it (docs/shapes-that-escalate.md). `require` returns
/// a writable exports object: never a lazy load here.
fn lazy_load(load: Node<'_>, value: Node<'_>) -> bool {
    let import = load.kind() == "call_expression" && load.field_child("function").is_some_and(|f| f.kind() == "import");
    let thunk = value.parent().filter(|a| a.kind() == "arrow_function" && a.field_child("body") == Some(value));
    import && thunk.is_some_and(|a| a.field_child("parameters").is_none_or(|p| p.named_children().next().is_none()) && a.field_child("parameter").is_none())
}

/// Whether a file re-exports anything of the release: `export … from "./…"`,
/// or an export of a name it imports from a file of the release.
fn reexports(top: Node<'_>) -> bool {
    let scope = TopLevel::of(top);
    top.named_children().filter(|s| s.kind() == "export_statement").any(|s| {
        s.field_child("source").and_then(super::syntax::string_content).is_some_and(|spec| !is_package(&spec))
            || s.descendants()
                .filter(|e| e.kind() == "export_specifier")
                .filter_map(|e| e.field_child("name"))
                .any(|name| scope.imports.get(name.text()).is_some_and(|(spec, _)| !is_package(spec)))
    })
}

/// Whether `n` is the property of a member expression (`x.exports`), not a name of its own.
fn is_member_of(n: Node<'_>) -> bool {
    n.parent().is_some_and(|p| p.kind() == "member_expression" && p.field_child("property") == Some(n))
}

/// Methods of a builtin value (an array, a string, a map, a regular
/// expression's source) that read it and change nothing: a table of the
/// closure may be read through them from outside it.
const READING_METHODS: &[&str] = &[
    "at",
    "charAt",
    "charCodeAt",
    "concat",
    "endsWith",
    "entries",
    "every",
    "filter",
    "find",
    "findIndex",
    "flat",
    "flatMap",
    "forEach",
    "get",
    "has",
    "includes",
    "indexOf",
    "join",
    "keys",
    "lastIndexOf",
    "map",
    "reduce",
    "slice",
    "some",
    "split",
    "startsWith",
    "toLowerCase",
    "toString",
    "toUpperCase",
    "trim",
    "values",
];

/// Whether `n`, a use outside the closure of its definition `d`, can
/// change nothing the pinned text reaches: an import or export, a call
/// (`d(…)`, `new d(…)`, a static method `d.m(…)` of a class), a reading
/// method of one of its values (`d.list.join(…)`), a read of a member
/// whose value is a primitive constant (`d.Plain` of an enum or an object
/// literal of literals, `d.length`), or the value of a constant
/// (`err[MARKER]`, `text.match(PATTERN)`). Anything else — an assignment,
/// a write to a member, an object of it handed on — may.
fn reads_only(n: Node<'_>, d: &Definition<'_>) -> bool {
    let Some(parent) = n.parent() else { return false };
    if exported(n) {
        return true;
    }
    match parent.kind() {
        "import_specifier" | "export_specifier" | "import_clause" => return true,
        // Iterating a table the closure holds as an array literal reads it
        // (`for (… of LIST)`, `[...LIST]`): only a prototype write could
        // change how, and that escalates wherever it is.
        "spread_element" if array_table(d.nodes[0]) && parent.parent().is_some_and(|a| a.kind() == "array") => return true,
        "for_in_statement" if array_table(d.nodes[0]) && parent.field_child("right") == Some(n) => return true,
        // `x instanceof C` compares with the class; it changes nothing.
        "binary_expression" if parent.field_child("right") == Some(n) && parent.field_child("operator").is_some_and(|o| o.text() == "instanceof") => {
            return true;
        }
        "call_expression" if parent.field_child("function") == Some(n) => return true,
        "new_expression" if parent.field_child("constructor") == Some(n) => return true,
        _ => {}
    }
    // The member chain `n.a.b[…]` the use reads through (TypeScript's
    // `(n as T[])` and parentheses looked through: they change no value).
    let mut outer = n;
    while let Some(p) =
        outer.parent().filter(|p| matches!(p.kind(), "as_expression" | "parenthesized_expression" | "non_null_expression" | "satisfies_expression"))
    {
        outer = p;
    }
    let mut members = Vec::new();
    while let Some(p) = outer.parent().filter(|p| matches!(p.kind(), "member_expression" | "subscript_expression") && p.field_child("object") == Some(outer)) {
        members.push(p.field_child("property").filter(|_| p.kind() == "member_expression").map(|m| m.text()).unwrap_or("[]"));
        outer = p;
    }
    let context = outer.parent();
    let (Some(first), Some(last)) = (members.first().copied(), members.last().copied()) else {
        // The value itself: only a constant that cannot change may go out,
        // or a function whose members nothing in the closure reads (what
        // receives it can call it, or give it members the closure never sees).
        return (constant(d.nodes[0]) || (is_function(d.nodes[0]) && !d.members_read)) && !context.is_some_and(|c| written(c, outer));
    };
    let called = context.is_some_and(|c| c.kind() == "call_expression" && c.field_child("function") == Some(outer));
    if called {
        // `test`/`exec` of a pattern without `g` or `y` keep no state (`lastIndex`).
        let stateless_match = members.len() == 1 && matches!(first, "test" | "exec") && stateless_pattern(d.nodes[0]);
        return (members.len() == 1 && static_code(d.nodes[0]).contains(first)) || READING_METHODS.contains(&last) || stateless_match;
    }
    // A static method handed on as a value: whoever receives it can call it, as a call here could.
    if members.len() == 1 && static_code(d.nodes[0]).contains(first) && !context.is_some_and(|c| written(c, outer)) {
        return true;
    }
    members.len() == 1 && (first == "length" || primitive_member(d.nodes[0], first)) && !context.is_some_and(|c| written(c, outer))
}

/// Whether `n` is exported the CommonJS way: `exports.Name = n`,
/// `module.exports.Name = n`, or listed in `module.exports = { n, Name: n }`.
/// What reaches it through the module is checked where the module is held.
fn exported(n: Node<'_>) -> bool {
    let is_exports = |e: Node<'_>| {
        (e.kind() == "identifier" && e.text() == "exports")
            || (e.kind() == "member_expression"
                && e.field_child("object").is_some_and(|o| o.kind() == "identifier" && o.text() == "module")
                && e.field_child("property").is_some_and(|p| p.text() == "exports"))
    };
    let assigned_to = |value: Node<'_>, left: &dyn Fn(Node<'_>) -> bool| {
        value.parent().is_some_and(|a| a.kind() == "assignment_expression" && a.field_child("right") == Some(value) && a.field_child("left").is_some_and(left))
    };
    if assigned_to(n, &|l| l.kind() == "member_expression" && l.field_child("object").is_some_and(is_exports)) {
        return true;
    }
    let entry = match n.parent() {
        Some(p) if n.kind() == "shorthand_property_identifier" => Some(n).filter(|_| p.kind() == "object"),
        Some(p) if p.kind() == "pair" && p.field_child("value") == Some(n) => Some(p),
        _ => None,
    };
    entry.and_then(|e| e.parent()).filter(|o| o.kind() == "object").is_some_and(|o| assigned_to(o, &is_exports))
}

/// Whether a definition is a function (declared, or a `const` bound to a function expression), not a class.
fn is_function(node: Node<'_>) -> bool {
    match node.kind() {
        "function_declaration" | "generator_function_declaration" => true,
        "variable_declarator" => node.field_child("value").map(bare).is_some_and(|v| super::FUNCTIONS.contains(&v.kind())),
        _ => false,
    }
}

/// Whether `target` is what `statement` (or an expression) writes:
/// the left of an assignment, the operand of `++`/`--` or `delete`.
fn written(context: Node<'_>, target: Node<'_>) -> bool {
    match context.kind() {
        "assignment_expression" | "augmented_assignment_expression" => context.field_child("left") == Some(target),
        "update_expression" => true,
        "unary_expression" => context.children().next().is_some_and(|o| o.text() == "delete"),
        _ => false,
    }
}

/// Whether a top-level statement writes a member of `name` (`name.x = …`,
/// `name.prototype.m = …`, `name.count++`).
fn writes(statement: Node<'_>, name: &str) -> bool {
    let Some(e) = statement.named_children().next() else { return false };
    let target = match e.kind() {
        "assignment_expression" | "augmented_assignment_expression" => e.field_child("left"),
        "update_expression" => e.field_child("argument"),
        _ => None,
    };
    let mut root = target;
    while let Some(r) = root.filter(|r| matches!(r.kind(), "member_expression" | "subscript_expression")) {
        root = r.field_child("object");
    }
    root != target && root.is_some_and(|r| r.kind() == "identifier" && r.text() == name)
}

/// Whether a variable's value is a constant nothing can change through it:
/// a primitive literal, or a regular expression without the `g` or `y`
/// flag (those keep the position of the last match in the object).
fn constant(node: Node<'_>) -> bool {
    let Some(value) = node.field_child("value").map(bare) else { return false };
    match value.kind() {
        "string" | "number" | "true" | "false" | "null" | "undefined" => true,
        "template_string" => !value.named_children().any(|c| c.kind() == "template_substitution"),
        "regex" => !value.field_child("flags").is_some_and(|f| f.text().contains(['g', 'y'])),
        _ => false,
    }
}

/// Whether a definition is a variable bound to a pattern whose flags are
/// known and hold neither `g` nor `y`: a literal, or `new RegExp(source, "i")`.
fn stateless_pattern(node: Node<'_>) -> bool {
    let Some(value) = node.field_child("value").map(bare) else { return false };
    let flags = match value.kind() {
        "regex" => Some(value.field_child("flags").map(|f| f.text().to_owned()).unwrap_or_default()),
        "new_expression" if value.field_child("constructor").is_some_and(|c| c.text() == "RegExp") => match value.items("arguments").as_slice() {
            [_] => Some(String::new()),
            [_, flags] => super::syntax::string_content(*flags),
            _ => None,
        },
        _ => None,
    };
    flags.is_some_and(|f| !f.contains(['g', 'y']))
}

/// Whether a definition is a variable bound to an array literal (`const L = [...]`, `as const` too).
fn array_table(node: Node<'_>) -> bool {
    node.kind() == "variable_declarator" && node.field_child("value").map(bare).is_some_and(|v| v.kind() == "array")
}

/// Whether `member` of a definition is a primitive constant: a member of
/// an enum, or a property of an object literal whose value is a literal.
fn primitive_member(node: Node<'_>, member: &str) -> bool {
    if node.kind() == "enum_declaration" {
        return true;
    }
    let object = node.field_child("value").map(bare).filter(|v| v.kind() == "object");
    object.into_iter().flat_map(|o| o.named_children()).filter(|p| p.kind() == "pair").any(|p| {
        let key = p.field_child("key").map(|k| k.text().trim_matches(|c| c == '"' || c == '\'').to_owned());
        let literal = p.field_child("value").is_some_and(|v| matches!(v.kind(), "string" | "number" | "true" | "false" | "null" | "undefined"));
        key.as_deref() == Some(member) && literal
    })
}

/// Whether `class`, defined at the top of `file`, declares a static member
/// `member` that is code: a static method, or a static field holding a function.
pub(super) fn has_static_code(program: &Program<'_, '_>, file: &str, class: &str, member: &str) -> bool {
    let Some((_, syntax)) = program.trees.iter().find(|(f, _)| *f == file) else { return false };
    definition(syntax.root(), class).is_some_and(|(node, _)| static_code(node).contains(member))
}

/// The static members of a class definition that are code: its static
/// methods, and its static fields holding a function.
fn static_code(node: Node<'_>) -> BTreeSet<String> {
    let mut code = static_methods(node);
    let body = match node.kind() {
        "class_declaration" => node.field_child("body"),
        "variable_declarator" => node.field_child("value").filter(|v| v.kind() == "class").and_then(|c| c.field_child("body")),
        _ => None,
    };
    for f in body.into_iter().flat_map(|b| b.named_children()) {
        let function = f.field_child("value").map(bare).is_some_and(|v| super::FUNCTIONS.contains(&v.kind()));
        // `field_definition` (JavaScript: the name is its `property`) or `public_field_definition` (TypeScript).
        if matches!(f.kind(), "field_definition" | "public_field_definition") && super::is_static(f) && function {
            code.extend(f.field_child("name").or_else(|| f.field_child("property")).map(|n| n.text().to_owned()));
        }
    }
    code
}

/// The static methods a class definition declares (none for anything else).
fn static_methods(node: Node<'_>) -> BTreeSet<String> {
    let class = match node.kind() {
        "class_declaration" => Some(node),
        "variable_declarator" => node.field_child("value").filter(|v| v.kind() == "class"),
        _ => None,
    };
    class
        .and_then(|c| c.field_child("body"))
        .into_iter()
        .flat_map(|b| b.named_children())
        .filter(|m| m.kind() == "method_definition" && super::is_static(*m))
        .filter_map(super::class_member_name)
        .collect()
}

/// Whether `node` of `file` (a loader fcd cannot follow, a write to
/// process-wide state) sits in code a reviewer read: the closure of a
/// function pinned with a listed digest (loads included) holds it, and that
/// closure's uses outside it are only calls. `Err` says what is missing,
/// with the digest of the function around it to read.
pub(super) fn pinned_around(program: &Program<'_, '_>, file: &str, node: Node<'_>) -> Result<(), String> {
    let pins = &Settings::of(program.env).pinned_functions;
    for (head, digests) in pins {
        let root = head.strip_prefix("static ").unwrap_or(head).split('.').next().unwrap_or_default();
        for (home, _) in program.trees.iter().filter(|(_, s)| definition(s.root(), root).is_some()) {
            let Ok(closure) = closure_with(program, home, head, Loads::Reviewed) else { continue };
            if digests.contains(&closure.digest) && closure.holds(file, node) {
                return closure.check_uses(program).map_err(|why| format!("`{head}` is pinned (`source.pinned-functions`), but {why}"));
            }
        }
    }
    let Some(name) = top_level_function(node) else {
        return Err("it is not inside a function defined at the top of its file, which a reviewer could pin (`source.pinned-functions`)".to_owned());
    };
    let Some(&(home, _)) = program.trees.iter().find(|(f, _)| *f == file) else { return Err(format!("{file} did not parse")) };
    let closure = closure_with(program, home, &name, Loads::Reviewed).map_err(|why| format!("it is in `{name}`, which cannot be pinned: {why}"))?;
    if !closure.holds(file, node) {
        return Err(format!("it is in a `{name}` other than the one defined at the top of {file}"));
    }
    match pins.get(&name) {
        Some(_) => Err(format!(
            "it is in `{name}`, pinned (`source.pinned-functions`), whose closure now has digest {}, which no reviewer listed: read it and what it loads",
            closure.digest
        )),
        None => Err(format!(
            "it is in `{name}`, whose closure has digest {}: a reviewer who reads it and what it loads may pin it in `source.pinned-functions`",
            closure.digest
        )),
    }
}

/// The name of the outermost function holding `node`, when that function is
/// defined at the top of its file (`function f`, `export function f`,
/// `const f = () => …`).
fn top_level_function(node: Node<'_>) -> Option<String> {
    let function = node.ancestors().filter(|a| FUNCTIONS.contains(&a.kind())).last()?;
    let (name, statement) = match function.kind() {
        "function_declaration" | "generator_function_declaration" => (function.field_child("name")?, function),
        _ => {
            let declarator = function.parent().filter(|d| d.kind() == "variable_declarator" && d.field_child("value") == Some(function))?;
            (declarator.field_child("name").filter(|i| i.kind() == "identifier")?, declarator.parent()?)
        }
    };
    let parent = statement.parent()?;
    let top = parent.kind() == "program" || (parent.kind() == "export_statement" && parent.parent().is_some_and(|p| p.kind() == "program"));
    top.then(|| name.text().to_owned())
}
