//! The closed call path: code the release itself defines is only as
//! reviewed as its body.
//!
//! An inventory checks who a callee is, not what it does. A function, class
//! or method of the release (a request tracker, a response builder, a path
//! check a pinned region calls) can gain an effect from one release to the
//! next while every identity stays the same. So a region may call release
//! code only when the profile reads that code as a region of its own, with
//! its own inventory (and, through it, everything it calls in turn):
//!
//! - `f(…)`, `f().x(…)`: `f` declared at the top of the region's file
//!   (a function, a class, a `const` bound to a function or class
//!   expression) or imported from a file of the release under its own name;
//! - `C.m(…)`, `new C(…)` (region `C.constructor`): the same for `C`;
//! - `this.m(…)` in a class-method region, `m` a method of that class;
//! - `o.m(…)` on a module-level `o` bound to `new C(…)` of such a `C`
//!   (region `C.m`), or to an object literal holding functions (no region
//!   can name that method, so it escalates).
//!
//! Each call is followed to the file whose definition it reaches: the
//! region's own file for a name declared there, the file an import names for
//! an imported one (a module's top level is its own scope, so a helper of the
//! same name elsewhere is another function). The name must be bound once at
//! the top of that file, and the region must be that definition (`file`
//! picks it when the release defines the name in several files). A method
//! of an object whose class is not fixed (`getRegistry().lookup`,
//! `connector.run`) may be any definition of that name in the release:
//! [`dispatch`] binds each of them.

use std::collections::{BTreeMap, BTreeSet};

use fcd_frontends::frontend::{Program, Region};
use fcd_frontends::ir::{Escalation, EscalationCode, Identity, ReachedCode};
use fcd_frontends::ts::Node;
use fcd_model::effect::Anchor;

use super::FUNCTIONS;
use super::bindings::{Bindings, module_bindings};
use super::dispatch;
use super::loader::is_package;
use super::pinned;
use super::scope::TopLevel;
use super::settings::Settings;
use super::syntax::bare;

/// Checks that every release-local callee of every region is a located region.
pub(super) fn check(program: &Program<'_, '_>) -> Result<(), Escalation> {
    if program.env.alone {
        return Ok(());
    }
    let calls = Calls::of(program);
    let located: BTreeSet<(&str, String)> = program.regions.iter().filter_map(|r| Some((r.file, function_name(r.node)?))).collect();
    let mut pinned: PinnedClosures<'_> = BTreeMap::new();
    for (region, node, path, Reached { home, head, root }) in calls.landing_in_release(program) {
        let fail = |why: String| {
            let what = match path.strip_prefix("handed ") {
                Some(value) => format!("hands on `{value}` as a value, for whatever receives it to call"),
                None => format!("calls `{path}`"),
            };
            Err(Escalation::new(
                EscalationCode::InventoryViolation,
                format!("region `{}` {what}: {why}", region.name),
                Some(Anchor::at_line(region.file, node.line())),
            ))
        };
        let Some(home) = home else {
            return fail(format!("`{root}` is imported from a file of the release that is not among the loaded files, so what it runs is unread"));
        };
        if !located.contains(&(home, head.clone()))
            && let Some(why) = unbound(program, &mut pinned, &located, home, &head, &[head.as_str()], None)
        {
            return fail(why);
        }
        // A region that reads one member of a class lets its instances reach
        // code no call names: what JavaScript runs by itself on an object.
        if located.contains(&(home, head.clone()))
            && let Some((class, _)) = head.split_once('.').filter(|(c, _)| !c.starts_with("static "))
            && let Some((member, line)) = implicit_members(program, home, class).into_iter().find(|(m, _)| !located.contains(&(home, format!("{class}.{m}"))))
        {
            return fail(format!(
                "`{class}` (region `{head}`) defines `{member}` (line {line} of {home}), which JavaScript runs without a call naming it \
                 (a string or number conversion, JSON.stringify, await, iteration, a property read): make it a region too, or pin the class"
            ));
        }
        let count = calls.bound.get(&(home, root.clone())).copied().unwrap_or(0);
        if root != "this" && count != 1 {
            return fail(format!(
                "`{root}` is bound {count} times at the top of {home}, so the definition the call reaches may not be the region of that name"
            ));
        }
    }
    // A method called on a receiver whose class is not fixed: every
    // definition of it in the release may answer ([`dispatch`]).
    for (region, method, node, path) in calls.dispatched(program) {
        // A loaded file that did not parse may define `m` where no one can see.
        if let Some((file, _)) = program.opaque.iter().find(|(_, text)| dispatch::mentions(text, method)) {
            return Err(Escalation::new(
                EscalationCode::ParseError,
                format!(
                    "region `{}` calls `{path}`, whose receiver's class is not fixed, so any definition of `{method}` in the release may run, and {file}, which did not parse, names `{method}`",
                    region.name
                ),
                Some(Anchor::at_line(region.file, node.line())),
            ));
        }
        for implementation in dispatch::implementations(program, method) {
            let line = implementation.node.line();
            let why = match &implementation.class {
                Some(class) => {
                    let head = format!("{class}.{method}");
                    if located.contains(&(implementation.file, head.clone())) {
                        continue;
                    }
                    let Some(why) = unbound(program, &mut pinned, &located, implementation.file, &head, &[class.as_str(), head.as_str()], Some(class)) else {
                        continue;
                    };
                    format!("`{class}` (line {line} of {}) defines `{method}`: {why}", implementation.file)
                }
                None => format!(
                    "line {line} of {} may define `{method}` where no region or pin can name it (an object literal's property, a member assigned or defined, a computed member name, a class not declared at the top of its file)",
                    implementation.file
                ),
            };
            return Err(Escalation::new(
                EscalationCode::InventoryViolation,
                format!(
                    "region `{}` calls `{path}`, whose receiver's class is not fixed, so any definition of `{method}` in the release may run: {why}",
                    region.name
                ),
                Some(Anchor::at_line(region.file, node.line())),
            ));
        }
    }
    Ok(())
}

/// Each pinned function's closure, computed once, with its uses checked.
type PinnedClosures<'a> = BTreeMap<(&'a str, String), Result<pinned::Pinned<'a>, String>>;

/// Why release code at `head` of `home`, which no located region reads, is
/// not bound: `None` when a key of `keys` pins it in `source.pinned-functions`
/// by a listed digest of its closure (or `source.unread-functions` names it).
fn unbound<'a>(
    program: &Program<'a, '_>,
    pinned: &mut PinnedClosures<'a>,
    located: &BTreeSet<(&str, String)>,
    home: &'a str,
    head: &str,
    keys: &[&str],
    class: Option<&str>,
) -> Option<String> {
    let settings = Settings::of(program.env);
    let Some((key, reviewed)) = keys.iter().find_map(|k| settings.pinned_functions.get_key_value(*k)) else {
        if settings.unread_functions.iter().any(|u| u == head) {
            return None;
        }
        let elsewhere = located.iter().find(|(_, name)| name == head).map(|(f, _)| format!(" (the region `{head}` reads the one in {f})")).unwrap_or_default();
        let digest = pinned::closure(program, home, head).map(|c| format!("; the code it reaches has digest {}", c.digest)).unwrap_or_default();
        return Some(format!(
            "`{head}` is defined in the release ({home}), and no region of the profile reads that body{elsewhere}, so what it does is unread \
             (make it a region with its own inventory, or read it and pin it in `source.pinned-functions`{digest})"
        ));
    };
    // A class pinned for a dispatched call: its own uses outside its text
    // are checked (a second name, a member written, the class handed on);
    // what its closure reaches is bound by the digest, not held against
    // uses elsewhere (docs/shapes-that-escalate.md).
    let cached = match class {
        Some(class) => format!("dispatch {class}"),
        None => key.clone(),
    };
    let closure = pinned.entry((home, cached)).or_insert_with(|| {
        pinned::closure(program, home, key)
            .and_then(|c| match class {
                Some(class) => c.check_uses_of(program, |name| name == class, true).map(|()| c),
                None => c.check_uses(program).map(|()| c),
            })
            .map_err(|why| format!("`{key}` is pinned (`source.pinned-functions`), but {why}"))
    });
    match closure {
        Ok(c) if reviewed.contains(&c.digest) => None,
        Ok(c) => Some(format!(
            "`{key}` is pinned (`source.pinned-functions`), and the release code it reaches from {home} has digest {}, \
             which no reviewer listed: read it (`fcd debug region --closure {key}` prints it), and list the digest if it does what the assumptions say",
            c.digest
        )),
        Err(why) => Some(why.clone()),
    }
}

/// The release code the regions call that is not itself a region of the
/// profile, for `fcd debug region`: how the profile covers each callee, and
/// the digest and definitions of the code it reaches. Checks nothing.
pub(super) fn reached(program: &Program<'_, '_>) -> Vec<ReachedCode> {
    let calls = Calls::of(program);
    let settings = Settings::of(program.env);
    let mut out: Vec<ReachedCode> = Vec::new();
    for (region, node, path, Reached { home, head, .. }) in calls.landing_in_release(program) {
        // A callee a region of the profile reads (read alone, the others are
        // not located); the profile names its regions' functions by their last part.
        let last = head.rsplit('.').next().unwrap_or(&head);
        let regions = program.env.reviewed.iter().any(|r| r == last);
        if regions || out.iter().any(|r| r.callee == head) {
            continue;
        }
        let closure = home.ok_or_else(|| "imported from a file that is not loaded".to_owned()).and_then(|home| pinned::closure(program, home, &head));
        let covered = match fcd_frontends::pinned::coverage(settings.pinned_functions.get(&head), closure.as_ref().ok().map(|c| c.digest.as_str())) {
            Some(how) => how,
            None if settings.unread_functions.contains(&head) => "trusted by name (`source.unread-functions`)",
            None => "unread: escalates",
        };
        out.push(ReachedCode {
            region: region.name.to_owned(),
            callee: head.clone(),
            call: Anchor::at_line(region.file, node.line()),
            covered: format!("{path}: {covered}"),
            digest: closure.as_ref().map(|c| c.digest.clone()).map_err(Clone::clone),
            definitions: closure.map(|c| c.anchors()).unwrap_or_default(),
        });
    }
    // Each class that may answer a dispatched call, pinned as the class.
    for (region, method, node, path) in calls.dispatched(program) {
        for implementation in dispatch::implementations(program, method) {
            let head = implementation.class.clone().unwrap_or_else(|| format!("line {} of {}", implementation.node.line(), implementation.file));
            if out.iter().any(|r| r.callee == head) || program.env.reviewed.iter().any(|r| *r == format!("{head}.{method}")) {
                continue;
            }
            let closure = match &implementation.class {
                Some(class) => pinned::closure(program, implementation.file, class),
                None => Err("no region or pin can name it".to_owned()),
            };
            let covered = fcd_frontends::pinned::coverage(
                settings.pinned_functions.get(&head).or_else(|| settings.pinned_functions.get(&format!("{head}.{method}"))),
                closure.as_ref().ok().map(|c| c.digest.as_str()),
            )
            .unwrap_or("unread: escalates");
            out.push(ReachedCode {
                region: region.name.to_owned(),
                callee: head,
                call: Anchor::at_line(region.file, node.line()),
                covered: format!("{path} (any definition of `{method}`): {covered}"),
                digest: closure.as_ref().map(|c| c.digest.clone()).map_err(Clone::clone),
                definitions: closure.map(|c| c.anchors()).unwrap_or_default(),
            });
        }
    }
    out
}

/// What the closed call path reads of every loaded file, once.
struct Calls<'a> {
    /// How often each file binds each top-level name.
    bound: BTreeMap<(&'a str, String), usize>,
    /// What each top-level name of the loaded files is bound to, with its
    /// file: an imported name means the one definition of that name (a name
    /// bound more than once anywhere is no known value).
    values: BTreeMap<String, (&'a str, Option<Node<'a>>)>,
    known: BTreeSet<&'a str>,
}

impl<'a> Calls<'a> {
    fn of(program: &Program<'_, 'a>) -> Calls<'a> {
        let mut bound: BTreeMap<(&str, String), usize> = BTreeMap::new();
        let mut values: BTreeMap<String, (&str, Option<Node<'_>>)> = BTreeMap::new();
        let mut anywhere: BTreeMap<String, usize> = BTreeMap::new();
        for (file, syntax) in program.trees {
            for n in syntax.root().descendants() {
                for b in module_bindings(n) {
                    *bound.entry((*file, b.text().to_owned())).or_default() += 1;
                    *anywhere.entry(b.text().to_owned()).or_default() += 1;
                    let value = b
                        .parent()
                        .filter(|d| d.kind() == "variable_declarator" && d.field_child("name") == Some(b))
                        .and_then(|d| d.field_child("value"))
                        .map(bare);
                    values.insert(b.text().to_owned(), (*file, value.filter(|v| !FUNCTIONS.contains(&v.kind()) && v.kind() != "class")));
                }
                // `export { a as b }` binds `b` too, to whatever `a` is.
                if n.kind() == "export_specifier"
                    && let Some(alias) = n.field_child("alias")
                {
                    *bound.entry((*file, alias.text().to_owned())).or_default() += 1;
                    *anywhere.entry(alias.text().to_owned()).or_default() += 1;
                }
            }
        }
        // A name bound more than once is no known value: it counts as code, and escalates.
        values.retain(|name, _| anywhere.get(name) == Some(&1));
        let known = program.trees.iter().map(|(f, _)| *f).chain(program.opaque.iter().map(|(f, _)| *f)).collect();
        Calls { bound, values, known }
    }

    /// Every call of every region that lands in code of the release, and
    /// every function of the release a region hands on as a value (to
    /// `arr.map(f)`, a timer, an event): the region, the site, the identity
    /// (`handed f` for a value) and where it lands.
    fn landing_in_release<'p>(&self, program: &'p Program<'p, 'a>) -> Vec<(&'p Region<'a>, Node<'a>, String, Reached<'a>)> {
        let mut out = Vec::new();
        for (region, calls) in program.regions.iter().zip(program.calls) {
            let file = Definitions::of(region, &self.values, &self.known);
            for (node, identity) in calls {
                let Identity::Path(path) = identity else { continue };
                if let Some(reached) = file.head(path) {
                    out.push((region, *node, path.clone(), reached));
                }
            }
            for value in region.node.descendants().filter(|n| handed_value(*n)) {
                let name = value.text();
                let code = match (value.kind(), value.field_child("object"), value.field_child("property")) {
                    ("member_expression", Some(o), _) if o.kind() == "this" => file.this.is_some(),
                    // `C.m` of a class of the release: its static method (or a static field holding a function).
                    ("member_expression", Some(o), Some(m)) => {
                        matches!(file.home_of(o.text()), Some(Some(home)) if pinned::has_static_code(program, home, o.text(), m.text()))
                    }
                    _ => file.home_of(name).is_some(),
                };
                if let Some(reached) = file.head(name).filter(|_| code) {
                    out.push((region, value, format!("handed {name}"), reached));
                }
            }
        }
        out
    }

    /// Every call of every region that dispatches a method on a receiver
    /// whose class is not fixed ([`dispatch::dispatched`]), with the method.
    fn dispatched<'p>(&self, program: &'p Program<'p, 'a>) -> Vec<(&'p Region<'a>, &'p str, Node<'a>, &'p str)> {
        let mut out = Vec::new();
        for (region, calls) in program.regions.iter().zip(program.calls) {
            let file = Definitions::of(region, &self.values, &self.known);
            for (node, identity) in calls {
                let Identity::Path(path) = identity else { continue };
                // A call [`Definitions::head`] lands names its definition,
                // unless the method is a call's result's (`C.get().m`: `C.get` lands).
                let chained = path.rsplit_once('.').is_some_and(|(receiver, _)| receiver.contains(['(', '[']));
                if !chained && file.head(path).is_some() {
                    continue;
                }
                if let Some(method) = dispatch::dispatched(path, |root| file.fixed(root), |root| file.home_of(root).is_some()) {
                    out.push((region, method, *node, path.as_str()));
                }
            }
        }
        out
    }
}

/// Whether `n` is a function or method used as a value, not called: a name
/// (`f`, `{ f }`), `this.m` or `C.m`, that no call, `new` or member access takes.
fn handed_value(n: Node<'_>) -> bool {
    let taken = |p: Node<'_>| match p.kind() {
        "call_expression" => p.field_child("function") == Some(n),
        "new_expression" => p.field_child("constructor") == Some(n),
        "member_expression" => p.field_child("object") == Some(n),
        _ => false,
    };
    let value = match n.kind() {
        "identifier" | "shorthand_property_identifier" => true,
        "member_expression" => n.field_child("object").is_some_and(|o| matches!(o.kind(), "this" | "identifier")),
        _ => false,
    };
    value && !n.parent().is_some_and(taken)
}

/// Where a call into the release's own code lands.
struct Reached<'f> {
    /// The file whose top-level definition the call reaches (`None`: an
    /// import of a release file that is not loaded).
    home: Option<&'f str>,
    /// The region that definition needs: `f`, `C.m`, `C.constructor`.
    head: String,
    /// The top-level name the call starts from (`this` in a method).
    root: String,
}

/// The name a function region answers to: `f`, or `Class.method`.
pub(super) fn function_name(n: Node<'_>) -> Option<String> {
    match n.kind() {
        "method_definition" => Some(format!("{}{}.{}", if super::is_static(n) { "static " } else { "" }, class_of(n)?, super::class_member_name(n)?)),
        "function_declaration" | "generator_function_declaration" => n.field_child("name").map(|i| i.text().to_owned()),
        "variable_declarator" if n.field_child("value").is_some_and(|v| FUNCTIONS.contains(&v.kind())) => n.field_child("name").map(|i| i.text().to_owned()),
        _ => None,
    }
}

/// The name of the class a member belongs to: `class C {…}`, or
/// `var C = class {…}` as bundlers write it.
pub(super) fn class_of(member: Node<'_>) -> Option<String> {
    let class = member.parent().filter(|b| b.kind() == "class_body")?.parent()?;
    match class.field_child("name") {
        Some(name) => Some(name.text().to_owned()),
        None => class.parent().filter(|d| d.kind() == "variable_declarator").and_then(|d| d.field_child("name")).map(|n| n.text().to_owned()),
    }
}

/// What the top of a region's file defines.
struct Definitions<'a> {
    /// The region's file.
    file: &'a str,
    /// Functions and classes declared at the top of the file, or bound to a
    /// function or class expression there.
    code: BTreeSet<String>,
    /// Top-level names imported from a file of the release under their own
    /// name, with the file the import resolves to.
    imported: BTreeMap<String, Option<&'a str>>,
    /// Top-level variables' values, with the file defining each.
    values: BTreeMap<String, (&'a str, Node<'a>)>,
    /// The class a class-method region belongs to, with the names of the
    /// methods `this.m` reaches there (its static ones in a static method).
    this: Option<(String, BTreeSet<String>)>,
    locals: Bindings,
    /// Top-level names that hold no code and no value [`Self::values`]
    /// knows (`let x;`, a value bound again), and release imports under
    /// another name: objects a call cannot tell the class of.
    unfixed: BTreeSet<String>,
}

impl<'a> Definitions<'a> {
    fn of(region: &Region<'a>, everywhere: &BTreeMap<String, (&'a str, Option<Node<'a>>)>, known: &BTreeSet<&'a str>) -> Definitions<'a> {
        let top = TopLevel::of(region.node);
        let mut values: BTreeMap<String, (&'a str, Node<'a>)> =
            top.values.iter().filter(|(name, _)| !top.code.contains(*name)).map(|(name, v)| (name.clone(), (region.file, bare(*v)))).collect();
        let mut imported = BTreeMap::new();
        let mut unfixed = BTreeSet::new();
        for (local, (spec, orig)) in top.imports.iter().filter(|(_, (spec, _))| !is_package(spec)) {
            let home = super::loader::resolve(region.file, spec, known).and_then(|h| known.get(h.as_str()).copied());
            match orig.as_str() {
                // A default or namespace import of a release file is release code too.
                "default" | "*" => drop(imported.insert(local.clone(), home)),
                // Data another file defines (a pattern, a table) is a value here too.
                _ if orig == local => match everywhere.get(orig) {
                    Some((file, Some(value))) => drop(values.insert(orig.clone(), (*file, *value))),
                    _ => drop(imported.insert(orig.clone(), home)),
                },
                // Imported under another name: the scope leaves it unresolved.
                _ => drop(unfixed.insert(local.clone())),
            }
        }
        unfixed.extend(top.declared.iter().filter(|n| !top.code.contains(*n) && !top.imports.contains_key(*n)).cloned());
        let code = top.code;
        let this = (region.node.kind() == "method_definition").then(|| class_of(region.node)).flatten().map(|class| {
            let statics = super::is_static(region.node);
            let body = region.node.parent();
            let methods = body
                .into_iter()
                .flat_map(|b| b.named_children())
                .filter(|m| m.kind() == "method_definition" && super::is_static(*m) == statics)
                .filter_map(super::class_member_name)
                .collect();
            (if statics { format!("static {class}") } else { class }, methods)
        });
        Definitions { file: region.file, code, imported, values, this, locals: Bindings::of(super::route::owner(region.node)), unfixed }
    }

    /// Where a resolved callee identity lands, when it reaches code of the
    /// release: the defining file and the region it needs (`f`, `C.m`,
    /// `C.constructor`).
    fn head(&self, path: &str) -> Option<Reached<'a>> {
        let (path, constructed) = match path.strip_prefix("new ") {
            Some(rest) => (rest, true),
            None => (path.strip_prefix("handed ").unwrap_or(path), false),
        };
        let root = path.split(['.', '[', '(']).next().unwrap_or_default();
        let rest = &path[root.len()..];
        let member = rest.strip_prefix('.').map(|m| m.split(['.', '[', '(']).next().unwrap_or_default());
        // Indexing a name reads its data (`table[k].join`): the method is an
        // element's, and a callee that is an element is dynamic anyway.
        if rest.starts_with('[') || self.locals.is_param(root) || self.locals.count(root) > 0 {
            return None;
        }
        let reached = |home: Option<&'a str>, head: String, root: &str| Some(Reached { home, head, root: root.to_owned() });
        if root == "this" {
            let (class, methods) = self.this.as_ref()?;
            return member.filter(|m| methods.contains(*m)).and_then(|m| reached(Some(self.file), format!("{class}.{m}"), root));
        }
        if let Some(home) = self.home_of(root) {
            let head = match (constructed, member) {
                (true, _) => format!("{root}.constructor"),
                // A member called on the class itself is its static method.
                (false, Some(m)) => format!("static {root}.{m}"),
                (false, None) => root.to_owned(),
            };
            return reached(home, head, root);
        }
        // A method of a module-level object the release built; a module-level
        // variable called itself holds a function no region can name.
        let (file, value) = *self.values.get(root)?;
        let Some(member) = member else {
            return (rest.is_empty() || rest.starts_with('(')).then(|| Reached { home: Some(file), head: root.to_owned(), root: root.to_owned() });
        };
        match value.kind() {
            "new_expression" => {
                let class = value.field_child("constructor").map(bare).filter(|c| c.kind() == "identifier")?.text();
                let home = self.home_of(class)?;
                reached(home, format!("{class}.{member}"), class)
            }
            "object"
                if value
                    .named_children()
                    .any(|p| p.kind() == "method_definition" || p.field_child("value").is_some_and(|v| FUNCTIONS.contains(&bare(v).kind()))) =>
            {
                reached(Some(file), format!("{root}.{member}"), root)
            }
            _ => None,
        }
    }

    /// Whether `root` names one object whatever the call: a package's import,
    /// a global, or code of the release (its static members are [`Self::head`]'s).
    /// A local, a parameter, or a module-level value of the release is not.
    fn fixed(&self, root: &str) -> bool {
        !(self.locals.is_param(root) || self.locals.count(root) > 0 || self.values.contains_key(root) || self.unfixed.contains(root))
    }

    /// The file defining a function or class the region's file names: its
    /// own, or the release file it imports the name from (`Some(None)`: an
    /// import whose file is not loaded); `None` when the name is neither.
    fn home_of(&self, name: &str) -> Option<Option<&'a str>> {
        if self.code.contains(name) {
            return Some(Some(self.file));
        }
        self.imported.get(name).copied()
    }
}

/// Methods JavaScript calls on an object by itself: conversions to a string
/// or a primitive, JSON.stringify's `toJSON`, `await`'s `then`, iteration.
const IMPLICIT_METHODS: &[&str] =
    &["toJSON", "toString", "valueOf", "toLocaleString", "then", "[Symbol.toPrimitive]", "[Symbol.iterator]", "[Symbol.asyncIterator]"];

/// The instance members of class `class` (defined at the top of `file`)
/// that run with no call site naming them: [`IMPLICIT_METHODS`] and every
/// getter or setter, each with its line (`get size` is named `size`).
fn implicit_members(program: &Program<'_, '_>, file: &str, class: &str) -> Vec<(String, u32)> {
    let Some((_, syntax)) = program.trees.iter().find(|(f, _)| *f == file) else { return Vec::new() };
    let classes = syntax.root().descendants().filter(|n| {
        let named = |c: Node<'_>| c.field_child("name").is_some_and(|i| i.text() == class);
        match n.kind() {
            "class_declaration" => named(*n),
            "class" => n.parent().is_some_and(|d| d.kind() == "variable_declarator" && named(d)),
            _ => false,
        }
    });
    let mut out = Vec::new();
    for body in classes.filter_map(|c| c.field_child("body")) {
        for member in body.named_children().filter(|m| m.kind() == "method_definition" && !super::is_static(*m)) {
            let Some(name) = super::class_member_name(member) else { continue };
            let accessor = member.children().take_while(|c| Some(*c) != member.field_child("name")).any(|c| matches!(c.kind(), "get" | "set"));
            if accessor || IMPLICIT_METHODS.contains(&name.as_str()) {
                out.push((name, member.line()));
            }
        }
    }
    out
}
