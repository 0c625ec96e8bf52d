//! The closed call path into the release's other packages, and the
//! functions of those packages pinned by the digest of what they reach.
//!
//! An import whose path is under the release's own module (`go.mod`'s
//! `module`) names release code: the loader reads those packages as
//! libraries ([`super::loader`]), and a region that calls into one (or
//! takes one of its names as a value) reaches code whose body can change
//! from one release to the next while every identity stays the same. So
//! each such name must be a region of the profile, or pinned in
//! `source.pinned-functions` with the digest of its closure, or the
//! registration escalates naming it and printing that digest. The same
//! holds for the rest of the route: the function a handler literal is
//! handed to (`via`: `NewTool`), the type whose `registered-by` method keeps
//! the tool (bound whole: another of its methods hands the tool to the
//! server), and the code the call path receives as function values
//! (installed middleware and hooks, a parameter a handler literal calls:
//! [`super::function_values`]), and every piece of code that can wrap a
//! tool's handler, found by its type ([`super::wrappers`]) unless a region
//! or a verified closure already holds it. What a listed closure runs
//! through an interface is [`super::implementations`]' question.
//!
//! A name is spelled by its package's directory relative to the module
//! root, then the name: `pkg/utils.NewToolResultError`. Its closure is its
//! declaration and, transitively, every top-level declaration of the
//! release its text names: a name of its own package, or `P.Name` with `P`
//! an import of the release; a type brings all its methods (whatever holds
//! a value of it may call them); an unexported package variable brings
//! every declaration of its package that does more with it than read it
//! ([`super::variables`]' allowlist): what writes it changes what the
//! closure computes, so that text is bound too. The digest hashes
//! each definition's name and tokens ([`fcd_frontends::pinned`]), so a
//! change anywhere in that text changes it. The text alone binds nothing if
//! other code can change what it reads, so a closure escalates (naming why)
//! when it reads an exported package variable that some code of the module
//! does more with than read ([`super::variables`]: the whole module is read
//! for that), a name declared twice in its package, a package the loader
//! could not read, a file with a build constraint, a dot import, or an
//! operation on process-wide state.

use std::collections::{BTreeMap, BTreeSet};

use fcd_frontends::frontend::Program;
use fcd_frontends::ir::{Escalation, EscalationCode, ReachedCode};
use fcd_frontends::ts::{Node, Syntax};
use fcd_model::effect::Anchor;

use super::function_values::What;
use super::index::Index;
use super::scope::{self, DeclKind};
use super::settings::Settings;
use super::syntax::is_member;

/// A pinned name's closure: its digest and the definitions it binds.
pub(super) struct Pinned<'a> {
    pub(super) digest: String,
    definitions: Vec<Definition<'a>>,
}

/// One top-level definition of the release in a closure.
struct Definition<'a> {
    /// `DIR.Name`, as `source.pinned-functions` spells it.
    name: String,
    /// The declaration, then (for a type) its methods, each with its file.
    nodes: Vec<(&'a str, Node<'a>)>,
    tokens: String,
}

impl Pinned<'_> {
    /// The methods named `.M(` in the closure's text, on any receiver, that
    /// an interface type of the module declares (`interfaces`): an
    /// over-approximation of the calls through an interface, whether the
    /// interface's type is in the closure or only in the signature of the
    /// code around it (a captured parameter).
    pub(super) fn interface_calls(&self, interfaces: &BTreeSet<String>) -> BTreeSet<String> {
        self.definitions
            .iter()
            .flat_map(|d| d.nodes.iter())
            .flat_map(|(_, n)| n.descendants().filter(|c| c.kind() == "call_expression"))
            .filter_map(|c| c.field_child("function").filter(|f| f.kind() == "selector_expression")?.field_child("field"))
            .map(|f| f.text())
            .filter(|m| interfaces.contains(*m))
            .map(str::to_owned)
            .collect()
    }

    /// Each piece of text of the closure, by definition, with where it is.
    pub(super) fn anchors(&self) -> Vec<(String, Anchor)> {
        self.definitions
            .iter()
            .flat_map(|d| {
                d.nodes
                    .iter()
                    .map(move |(file, n)| (d.name.clone(), Anchor { file: (*file).to_owned(), line: n.line(), end_line: n.end_line(), hash: String::new() }))
            })
            .collect()
    }
}

impl<'p, 'a> Index<'p, 'a> {
    /// The closure of `name` of package `dir`, or why it cannot be pinned.
    pub(super) fn closure(&self, dir: &str, name: &str) -> Result<Pinned<'a>, String> {
        let mut definitions: Vec<Definition<'a>> = Vec::new();
        let mut seen: BTreeSet<(String, String)> = BTreeSet::new();
        let mut todo = vec![(dir.to_owned(), name.to_owned())];
        // Unexported package variables of the closure, to check their uses once all is known.
        let mut variables: Vec<(String, String)> = Vec::new();
        loop {
            while let Some((dir, name)) = todo.pop() {
                if !seen.insert((dir.clone(), name.clone())) {
                    continue;
                }
                let spelled = self.spelled(&dir, &name);
                let files = self.package(&dir, &spelled)?;
                if let Some((function, api)) = name.split_once('#') {
                    // The function literals `function` hands on as `api` (function_values.rs).
                    let nodes = self.literals(&dir, &name).to_vec();
                    if nodes.is_empty() {
                        return Err(format!("`{spelled}` names no function literal `{function}` hands on as {api}"));
                    }
                    for (file, _) in &nodes {
                        let syntax = files.iter().find(|(f, _)| f == file).map(|(_, s)| *s).ok_or_else(|| format!("{file} is not parsed"))?;
                        built_as_read(file, syntax)?;
                    }
                    let tokens: Vec<String> = nodes.iter().map(|(_, n)| n.token_text()).collect();
                    self.queue_names(&dir, &nodes, &mut todo);
                    definitions.push(Definition { name: spelled, nodes, tokens: tokens.join("\n") });
                    continue;
                }
                if let Some((ty, method)) = name.split_once('.') {
                    definitions.push(self.method(&dir, ty, method, &spelled, files, &mut todo)?);
                    continue;
                }
                let decls: Vec<(&'a str, DeclKind, Node<'a>)> = files
                    .iter()
                    .flat_map(|(file, syntax)| {
                        syntax.root().named_children().flat_map(move |top| scope::top_level_names(top).into_iter().map(move |(k, n)| (*file, k, n)))
                    })
                    .filter(|(_, _, n)| n.text() == name)
                    .collect();
                let [(file, kind, declared)] = decls.as_slice() else {
                    return Err(match decls.len() {
                        0 => format!("`{spelled}` is declared nowhere in its package {dir}"),
                        n => format!("`{spelled}` is declared {n} times in {dir}, so which definition runs is not fixed"),
                    });
                };
                let (file, kind) = (*file, *kind);
                let syntax = files.iter().find(|(f, _)| *f == file).map(|(_, s)| *s).ok_or_else(|| format!("{file} is not parsed"))?;
                built_as_read(file, syntax)?;
                let declaration = match kind {
                    DeclKind::Func => declared.parent().filter(|p| p.kind() == "function_declaration"),
                    // The whole `var`/`const`/`type` declaration: a `const` of a
                    // group takes its value from the specs before it.
                    _ => declared.ancestors().find(|a| a.parent().is_some_and(|p| p.kind() == "source_file")),
                }
                .ok_or_else(|| format!("`{spelled}` has no declaration fcd can read"))?;
                let mut nodes = vec![(file, declaration)];
                if kind == DeclKind::Type {
                    for (f, s) in files {
                        nodes.extend(
                            s.root()
                                .named_children()
                                .filter(|m| m.kind() == "method_declaration" && super::syntax::receiver_type(*m) == Some(name.as_str()))
                                .map(|m| (*f, m)),
                        );
                    }
                }
                if kind == DeclKind::Var {
                    if name.starts_with(|c: char| c.is_uppercase()) {
                        let module = super::variables::Module {
                            files: self.all_files().collect(),
                            package: self.files(&dir),
                            release: &|path: &str| self.release(path),
                        };
                        self.whole_module().and_then(|()| super::variables::unwritten(&module, &dir, &name, declaration)).map_err(|why| {
                            format!("`{spelled}` is an exported package variable ({file}:{}) any package of the binary may write: {why}", declared.line())
                        })?;
                    } else {
                        variables.push((dir.clone(), name.clone()));
                    }
                }
                // Methods in a fixed order, whatever file holds them.
                nodes[1..].sort_by_cached_key(|(_, n)| n.token_text());
                let tokens: Vec<String> = nodes.iter().map(|(_, n)| n.token_text()).collect();
                self.queue_names(&dir, &nodes, &mut todo);
                definitions.push(Definition { name: spelled, nodes, tokens: tokens.join("\n") });
            }
            // What code outside the closure does with an unexported variable
            // of it changes what the closure computes: the declarations naming
            // it join the closure, until none is left outside.
            let mut users = Vec::new();
            for (dir, name) in &variables {
                users.extend(self.users_outside(dir, name, &definitions)?.into_iter().map(|user| (dir.clone(), user)));
            }
            users.retain(|user| !seen.contains(user));
            if users.is_empty() {
                break;
            }
            todo.extend(users);
        }
        self.no_ambient(&definitions)?;
        fcd_frontends::pinned::sort(&mut definitions, |d| (d.name.as_str(), d.tokens.as_str()));
        let digest = fcd_frontends::pinned::digest(definitions.iter().map(|d| (d.name.as_str(), d.tokens.as_str())));
        Ok(Pinned { digest, definitions })
    }

    /// Queue every top-level name of the release the text of `nodes` (of
    /// package `dir`) names ([`Self::queue_name`]).
    fn queue_names(&self, dir: &str, nodes: &[(&'a str, Node<'a>)], todo: &mut Vec<(String, String)>) {
        for (f, n) in nodes {
            let imports = scope::imports(self.root_of(f).unwrap_or(*n));
            for r in n.descendants() {
                self.queue_name(dir, r, &imports, todo);
            }
        }
    }

    /// Queue the top-level name of the release the node `r` (of package
    /// `dir`, whose file imports `imports`) is: a name of its own package,
    /// or `P.Name` with `P` an import of the release.
    fn queue_name(&self, dir: &str, r: Node<'a>, imports: &scope::Imports<'_>, todo: &mut Vec<(String, String)>) {
        match r.kind() {
            "identifier" | "type_identifier" if !is_member(r) && self.declares(dir, r.text()) => todo.push((dir.to_owned(), r.text().to_owned())),
            "selector_expression" | "qualified_type" => {
                let (package, member) = match r.kind() {
                    "selector_expression" => (r.field_child("operand"), r.field_child("field")),
                    _ => (r.field_child("package"), r.field_child("name")),
                };
                let (Some(package), Some(member)) = (package, member) else { return };
                if matches!(package.kind(), "identifier" | "package_identifier")
                    && let Some(target) = imports.get(package.text()).and_then(|(path, _)| self.release(path))
                {
                    todo.push((target, member.text().to_owned()));
                }
            }
            _ => {}
        }
    }

    /// One method `ty.method` of package `dir` as a definition of a closure
    /// (`pkg/github.BaseDeps.GetClient`): its declaration alone, not its
    /// type's other methods. What it reaches is queued on `todo`: the names
    /// its text names, as for any definition, but not its receiver's type;
    /// through its receiver (`d.x`), the method `ty.x` the same way, or the
    /// release types the declaration of the field `x` names, each whole. A
    /// member of the receiver that is neither (promoted from an embedded
    /// type's, say) cannot be pinned.
    fn method(
        &self,
        dir: &str,
        ty: &str,
        method: &str,
        spelled: &str,
        files: &[(&'a str, &'a Syntax)],
        todo: &mut Vec<(String, String)>,
    ) -> Result<Definition<'a>, String> {
        let is = |m: &Node<'_>, name: &str| {
            m.kind() == "method_declaration" && super::syntax::receiver_type(*m) == Some(ty) && m.field_child("name").is_some_and(|n| n.text() == name)
        };
        let found: Vec<(&'a str, Node<'a>)> =
            files.iter().flat_map(|(f, s)| s.root().named_children().filter(|m| is(m, method)).map(move |m| (*f, m))).collect();
        let [(file, declaration)] = found.as_slice() else {
            return Err(format!("`{spelled}` is declared {} times in {dir}", found.len()));
        };
        let syntax = files.iter().find(|(f, _)| f == file).map(|(_, s)| *s).ok_or_else(|| format!("{file} is not parsed"))?;
        built_as_read(file, syntax)?;
        let receiver_list = declaration.field_child("receiver").ok_or_else(|| format!("`{spelled}` has no receiver"))?;
        let receiver = receiver_list.descendants().find(|n| n.kind() == "parameter_declaration").and_then(|p| p.field_child("name")).map(|n| n.text());
        let imports = scope::imports(syntax.root());
        let queue_types = |n: Node<'a>, todo: &mut Vec<(String, String)>| {
            for t in std::iter::once(n).chain(n.descendants()) {
                match t.kind() {
                    "type_identifier" if self.declares(dir, t.text()) => todo.push((dir.to_owned(), t.text().to_owned())),
                    "qualified_type" => {
                        let (Some(package), Some(name)) = (t.field_child("package"), t.field_child("name")) else { continue };
                        if let Some(target) = imports.get(package.text()).and_then(|(path, _)| self.release(path)) {
                            todo.push((target, name.text().to_owned()));
                        }
                    }
                    _ => {}
                }
            }
        };
        for r in declaration.descendants().filter(|r| !receiver_list.contains(*r)) {
            match r.kind() {
                "selector_expression"
                    if receiver.is_some() && r.field_child("operand").is_some_and(|o| o.kind() == "identifier" && Some(o.text()) == receiver) =>
                {
                    let Some(member) = r.field_child("field").map(|f| f.text()) else { continue };
                    if files.iter().any(|(_, s)| s.root().named_children().any(|m| is(&m, member))) {
                        todo.push((dir.to_owned(), format!("{ty}.{member}")));
                    } else if let Some(field) = self.field_type(dir, ty, member) {
                        queue_types(field, todo);
                    } else {
                        return Err(format!(
                            "{file}:{} `{}` in `{spelled}` is neither a method nor a field `{ty}` declares (promoted from an embedded type?), so what it reaches is unread",
                            r.line(),
                            r.compact_text()
                        ));
                    }
                }
                _ => self.queue_name(dir, r, &imports, todo),
            }
        }
        Ok(Definition { name: spelled.to_owned(), nodes: vec![(*file, *declaration)], tokens: declaration.token_text() })
    }

    /// The type node of the field `name` of the struct type `ty` of package
    /// `dir` (an embedded field is named by its type), when it declares one.
    fn field_type(&self, dir: &str, ty: &str, name: &str) -> Option<Node<'a>> {
        let specs =
            self.files(dir).iter().flat_map(|(_, s)| s.root().named_children()).filter(|d| d.kind() == "type_declaration").flat_map(|d| d.named_children());
        let spec = specs.filter(|s| s.kind() == "type_spec" && s.field_child("name").is_some_and(|n| n.text() == ty)).collect::<Vec<_>>();
        let [spec] = spec.as_slice() else { return None };
        let body = spec.field_child("type").filter(|t| t.kind() == "struct_type")?;
        body.descendants().filter(|f| f.kind() == "field_declaration" && f.parent().and_then(|l| l.parent()) == Some(body)).find_map(|f| {
            let ty = f.field_child("type")?;
            let named = f.field_children("name").any(|n| n.text() == name);
            let embedded = f.field_child("name").is_none()
                && ty.descendants().chain([ty]).filter(|t| t.kind() == "type_identifier").last().is_some_and(|t| t.text() == name);
            (named || embedded).then_some(ty)
        })
    }

    /// The top-level declarations of package `dir` that use its unexported
    /// variable `name` outside the closure's text other than by a plain
    /// read, as closure names (`F`,
    /// `T.m`, a `var`/`const`/`type` declaration's names). A name used where
    /// no declaration can be named for it cannot be pinned.
    fn users_outside(&self, dir: &str, name: &str, definitions: &[Definition<'a>]) -> Result<Vec<String>, String> {
        let inside = |file: &str, n: Node<'_>| definitions.iter().any(|d| d.nodes.iter().any(|(f, m)| *f == file && m.contains(n)));
        // A use that only reads the variable changes nothing the closure computes.
        let declaration = definitions.iter().find(|d| d.name == self.spelled(dir, name)).and_then(|d| d.nodes.first()).map(|(_, n)| *n);
        let mut users = Vec::new();
        for (file, syntax) in self.dirs.get(dir).into_iter().flatten() {
            let uses = syntax.root().descendants().filter(|n| n.kind() == "identifier" && n.text() == name && !inside(file, *n));
            for use_ in uses.filter(|u| !declaration.is_some_and(|d| super::variables::plain_read(self.files(dir), d, name, *u))) {
                let top = use_.ancestors().find(|a| a.parent().is_some_and(|p| p.kind() == "source_file"));
                let named: Vec<String> = match top {
                    Some(m) if m.kind() == "method_declaration" => super::syntax::receiver_type(m)
                        .zip(m.field_child("name"))
                        .map(|(ty, method)| vec![format!("{ty}.{}", method.text())])
                        .unwrap_or_default(),
                    Some(top) => scope::top_level_names(top).into_iter().map(|(_, n)| n.text().to_owned()).filter(|n| n != "_").collect(),
                    None => Vec::new(),
                };
                if named.is_empty() {
                    return Err(format!(
                        "the package variable `{}` of the closure is named at {file}:{} outside it, in code no pin can name",
                        self.spelled(dir, name),
                        use_.line()
                    ));
                }
                users.extend(named);
            }
        }
        Ok(users)
    }

    /// No operation of the closure writes process-wide state.
    fn no_ambient(&self, definitions: &[Definition<'a>]) -> Result<(), String> {
        let files: BTreeSet<&str> = definitions.iter().flat_map(|d| d.nodes.iter().map(|(f, _)| *f)).collect();
        for file in files {
            let Some(syntax) = self.dirs.get(scope::dir(file)).and_then(|fs| fs.iter().find(|(f, _)| *f == file)).map(|(_, s)| *s) else { continue };
            for op in super::ambient::ops(syntax) {
                if fcd_frontends::ambient::classify(&super::ambient::TABLE, &op.what).is_none() {
                    continue;
                }
                if definitions.iter().any(|d| d.nodes.iter().any(|(f, m)| *f == file && m.contains(op.node))) {
                    return Err(format!("{file}:{} `{}` writes process-wide state", op.node.line(), op.node.compact_text()));
                }
            }
        }
        Ok(())
    }
}

/// A file of the closure is compiled as read: no build constraint, target
/// suffix, linkname or cgo (the loader's checks, `super::loader`).
fn built_as_read(file: &str, syntax: &Syntax) -> Result<(), String> {
    super::loader::compiled_as_read(file, syntax.text()).map_err(|e| format!("{file} is compiled only under conditions fcd does not evaluate: {}", e.detail))
}

/// A name of the release a region reaches: where, and how it is spelled.
struct Reach<'a> {
    region: usize,
    /// The file of `node`: the region's, or the one installing middleware.
    file: &'a str,
    node: Node<'a>,
    /// As the region spells it (`utils.NewToolResultError`).
    written: String,
    dir: String,
    name: String,
    /// Handed to the call path as a function value, not named by a region.
    installed: bool,
    /// Code that can wrap a tool's handler ([`super::wrappers`]): bound
    /// already when it lies in a region or a verified closure.
    wraps: bool,
}

/// Every `P.Name` of every region whose `P` imports a package of the
/// release, the function each handler literal is handed to, and the code
/// the module installs around every request ([`super::middleware`]: the
/// first region stands for the route there). Installed code no pin can
/// name is `Err`.
fn reaches<'a>(program: &Program<'_, 'a>, index: &Index<'_, 'a>) -> Vec<Result<Reach<'a>, (Reach<'a>, String)>> {
    let mut out = Vec::new();
    for (i, region) in program.regions.iter().enumerate() {
        let root = region.node.ancestors().last().unwrap_or(region.node);
        let imports = scope::imports(root);
        for n in region.node.descendants().filter(|n| n.kind() == "selector_expression") {
            let (Some(operand), Some(field)) = (n.field_child("operand"), n.field_child("field")) else { continue };
            if operand.kind() != "identifier" {
                continue;
            }
            let Some((path, _)) = imports.get(operand.text()) else { continue };
            let Some(dir) = index.release(path) else { continue };
            out.push(Ok(Reach {
                region: i,
                file: region.file,
                node: n,
                written: n.compact_text(),
                dir,
                name: field.text().to_owned(),
                installed: false,
                wraps: false,
            }));
        }
        if let Some(reach) = handed_to(program, index, i) {
            out.push(Ok(reach));
        }
        out.extend(registrars(program, index, i).into_iter().map(Ok));
    }
    // The route's code: reported against the handler region when there is one.
    let Some(route) = program.regions.iter().position(|r| r.name == "handler").or((!program.regions.is_empty()).then_some(0)) else { return out };
    // The code the call path receives as function values: what the module
    // installs around every request, and what a handler literal calls
    // through a parameter.
    let mut sources = values(program, index);
    // Code a package fcd could not read installs is unknown: never none.
    if let (Err(why), Some(region)) = (index.whole_module(), program.regions.get(route)) {
        let why = format!("what the server installs around every request, or hands the handler, is unknown: {why}");
        sources.push(super::function_values::Source { file: region.file, at: region.node, what: What::Unbound(why) });
    }
    let mut literals: BTreeSet<(String, String)> = BTreeSet::new();
    for source in &sources {
        let (file, at) = (source.file, source.at);
        let written = format!("`{}` ({file}:{})", brief(at), at.line());
        let reach = |dir: &str, name: &str| Reach {
            region: route,
            file,
            node: at,
            written: written.clone(),
            dir: dir.to_owned(),
            name: name.to_owned(),
            installed: true,
            wraps: false,
        };
        out.push(match &source.what {
            What::Function { dir, name } => Ok(reach(dir, name)),
            What::Literal { dir, key, .. } => {
                if !literals.insert((dir.clone(), key.clone())) {
                    continue;
                }
                Ok(reach(dir, key))
            }
            What::Unbound(why) => Err((reach("", ""), why.clone())),
        });
    }
    // Last, so the closures of everything above are known when each is asked.
    for wrapper in super::wrappers::wrappers(index) {
        let (file, at) = (wrapper.file, wrapper.node);
        let written = format!("`{}` ({file}:{}), code that can wrap a tool's handler", brief(at), at.line());
        let (dir, name) = wrapper.holder.clone().unwrap_or_default();
        let reach = Reach { region: route, file, node: at, written, dir, name, installed: true, wraps: true };
        out.push(match wrapper.holder {
            Some(_) => Ok(reach),
            None => Err((reach, "it is a function literal outside any function, which no pin names".to_owned())),
        });
    }
    out
}

/// Where the release code a region reads or a verified pin binds lies:
/// what code inside needs no pin of its own for (a wrapper, a method an
/// interface call runs: [`super::implementations`]).
#[derive(Default)]
pub(super) struct Bound(Vec<(String, u32, u32)>);

impl Bound {
    pub(super) fn of_regions(program: &Program<'_, '_>) -> Bound {
        Bound(program.regions.iter().map(|r| (r.file.to_owned(), r.node.line(), r.node.end_line())).collect())
    }

    pub(super) fn add(&mut self, closure: &Pinned<'_>) {
        self.0.extend(closure.anchors().into_iter().map(|(_, a)| (a.file, a.line, a.end_line)));
    }

    pub(super) fn covers(&self, file: &str, n: Node<'_>) -> bool {
        self.0.iter().any(|(f, line, end)| f == file && *line <= n.line() && n.end_line() <= *end)
    }
}

/// The code the call path receives as function values (what the module
/// installs around every request, what a handler literal calls through a
/// parameter), with the literals among it recorded in the index under their
/// `DIR.FUNC#NAME` keys, so those pins' closures can be computed.
pub(super) fn values<'a>(program: &Program<'_, 'a>, index: &Index<'_, 'a>) -> Vec<super::function_values::Source<'a>> {
    let mut sources = super::middleware::installed(index);
    sources.extend(super::function_values::called_parameters(program.regions, index));
    index.seed(sources.iter().filter_map(|s| match &s.what {
        What::Literal { dir, key, literal } => Some((dir.clone(), key.clone(), s.file, *literal)),
        _ => None,
    }));
    sources
}

/// The first line of a node's text, shortened: how a message names code.
fn brief(n: Node<'_>) -> String {
    let text = n.text();
    let first = text.lines().next().unwrap_or_default().trim_end();
    if first.chars().count() > 80 || text.contains('\n') { format!("{}…", first.chars().take(80).collect::<String>()) } else { first.to_owned() }
}

/// The function of the release a handler literal is handed to (`via`,
/// `NewTool(…, func(…) {…})`): it runs around every call of the handler,
/// so it is bound like a name the region calls. The literal handed over is
/// the region's, or the factory literal around it.
fn handed_to<'a>(program: &Program<'_, 'a>, index: &Index<'_, 'a>, i: usize) -> Option<Reach<'a>> {
    let region = &program.regions[i];
    let via = Settings::of(program.env).handoff.get(region.name).is_some_and(|h| !h.via.is_empty());
    if !via || region.node.kind() != "func_literal" {
        return None;
    }
    let handed = std::iter::once(region.node).chain(region.node.ancestors().find(|a| a.kind() == "func_literal"));
    let call = handed.filter_map(|h| h.parent().filter(|p| p.kind() == "argument_list")?.parent().filter(|c| c.kind() == "call_expression")).next()?;
    let mut function = call.field_child("function")?;
    while function.kind() == "index_expression" || function.kind() == "generic_type" {
        function = function.field_child("operand").or_else(|| function.field_child("type"))?;
    }
    let (dir, name) = match function.kind() {
        "identifier" => {
            let dir = scope::dir(region.file);
            (dir.to_owned(), function.text())
        }
        "selector_expression" => {
            let (operand, field) = (function.field_child("operand")?, function.field_child("field")?);
            let root = region.node.ancestors().last().unwrap_or(region.node);
            let (path, _) = scope::imports(root).get(operand.text()).cloned()?;
            (index.release(&path)?, field.text())
        }
        _ => return None,
    };
    index.declares(&dir, name).then(|| Reach {
        region: i,
        file: region.file,
        node: call,
        written: format!("{} (the call its handler literal is handed to)", function.compact_text()),
        dir,
        name: name.to_owned(),
        installed: false,
        wraps: false,
    })
}

/// The release types whose method registers the region's tool
/// (`registered-by`: a toolset's `AddWriteTools`): the method keeps the
/// tool, and another method of the type (`RegisterTools`) hands it to the
/// server, so each such type is bound whole (every method, what they
/// reach), like a name the region calls. Every method of that name in the
/// module counts: which receiver holds the tool is decided at run time.
fn registrars<'a>(program: &Program<'_, 'a>, index: &Index<'_, 'a>, i: usize) -> Vec<Reach<'a>> {
    let region = &program.regions[i];
    let Some(handoff) = Settings::of(program.env).handoff.get(region.name).filter(|h| !h.registered_by.is_empty()) else { return Vec::new() };
    let mut out: Vec<Reach<'a>> = Vec::new();
    for (file, syntax) in index.all_files() {
        for method in syntax.root().named_children().filter(|m| m.kind() == "method_declaration") {
            let Some(name) = method.field_child("name").map(|n| n.text()).filter(|n| handoff.registered_by.iter().any(|r| r == n)) else { continue };
            let Some(ty) = super::syntax::receiver_type(method) else { continue };
            let dir = scope::dir(file);
            if out.iter().any(|r| r.dir == dir && r.name == ty) {
                continue;
            }
            out.push(Reach {
                region: i,
                file,
                node: method,
                written: format!("{ty}.{name} ({file}:{}), which registers the tool", method.line()),
                dir: dir.to_owned(),
                name: ty.to_owned(),
                installed: false,
                wraps: false,
            });
        }
    }
    out
}

/// Whether a region of the profile is the function `name` of package `dir`.
fn is_region(program: &Program<'_, '_>, dir: &str, name: &str) -> bool {
    program
        .regions
        .iter()
        .any(|r| scope::dir(r.file) == dir && r.node.kind() == "function_declaration" && r.node.field_child("name").is_some_and(|n| n.text() == name))
}

/// Every name of the release's other packages a region reaches is a region
/// or pinned by a listed digest of its closure.
pub(super) fn check(program: &Program<'_, '_>) -> Result<(), Escalation> {
    if program.env.alone {
        return Ok(());
    }
    let index = Index::of(program);
    let pinned = &Settings::of(program.env).pinned_functions;
    let mut closures: BTreeMap<String, Result<String, String>> = BTreeMap::new();
    let mut bound = Bound::of_regions(program);
    for reach in reaches(program, &index) {
        let reach = match reach {
            Ok(reach) | Err((reach, _)) if reach.wraps && bound.covers(reach.file, reach.node) => continue,
            Ok(reach) => reach,
            Err((reach, why)) => {
                return Err(Escalation::new(
                    EscalationCode::InventoryViolation,
                    match reach.wraps {
                        true => format!("the call path may run {}, which no pin can name: {why}", reach.written),
                        false => format!("the call path runs {}, handed to it as a function value no pin can name: {why}", reach.written),
                    },
                    Some(Anchor::at_line(reach.file, reach.node.line())),
                ));
            }
        };
        if is_region(program, &reach.dir, &reach.name) {
            continue;
        }
        let region = &program.regions[reach.region];
        let key = index.spelled(&reach.dir, &reach.name);
        let digest = closures
            .entry(key.clone())
            .or_insert_with(|| {
                index.closure(&reach.dir, &reach.name).map(|c| {
                    if pinned.get(&key).is_some_and(|listed| listed.contains(&c.digest)) {
                        bound.add(&c);
                    }
                    c.digest
                })
            })
            .clone();
        let fail = |why: String| {
            Err(Escalation::new(
                EscalationCode::InventoryViolation,
                match (reach.installed, reach.wraps) {
                    (_, true) => format!("the call path may run {}: {why}", reach.written),
                    (true, false) => format!("the call path runs {}, handed to it as a function value: {why}", reach.written),
                    (false, false) => format!("region `{}` reaches `{}`: {why}", region.name, reach.written),
                },
                Some(Anchor::at_line(reach.file, reach.node.line())),
            ))
        };
        match (pinned.get(&key), digest) {
            (Some(listed), Ok(d)) if listed.contains(&d) => {}
            (Some(_), Ok(d)) => {
                return fail(format!(
                    "`{key}` is pinned (`source.pinned-functions`), and the release code it reaches has digest {d}, which no reviewer listed: \
                     read it (`fcd debug region --closure {key}` prints it), and list the digest if it does what the assumptions say"
                ));
            }
            (Some(_), Err(why)) => return fail(format!("`{key}` is pinned (`source.pinned-functions`), but {why}")),
            (None, digest) => {
                let digest = digest.map(|d| format!("; the code it reaches has digest {d}")).unwrap_or_else(|why| format!("; it cannot be pinned: {why}"));
                return fail(format!(
                    "`{key}` is defined in the release (package {}), and no region of the profile reads that body, so what it does is unread \
                     (make it a region with its own inventory, or read it and pin it in `source.pinned-functions`{digest})",
                    reach.dir
                ));
            }
        }
    }
    Ok(())
}

/// The names of the release's other packages the regions reach that no
/// region reads, for `fcd debug region`: how the profile covers each, and
/// the digest and definitions of its closure. Checks nothing.
pub(super) fn reached(program: &Program<'_, '_>) -> Vec<ReachedCode> {
    let index = Index::of(program);
    let pinned = &Settings::of(program.env).pinned_functions;
    let mut out: Vec<ReachedCode> = Vec::new();
    let mut bound = Bound::of_regions(program);
    for reach in reaches(program, &index) {
        let reach = match reach {
            Ok(reach) | Err((reach, _)) if reach.wraps && bound.covers(reach.file, reach.node) => continue,
            Ok(reach) => reach,
            Err((reach, why)) => {
                out.push(ReachedCode {
                    region: program.regions[reach.region].name.to_owned(),
                    callee: reach.written.clone(),
                    call: Anchor::at_line(reach.file, reach.node.line()),
                    covered: format!("{}: no pin can name it: escalates", reach.written),
                    digest: Err(why),
                    definitions: Vec::new(),
                });
                continue;
            }
        };
        let key = index.spelled(&reach.dir, &reach.name);
        let regions = program.env.reviewed.contains(&reach.name);
        if regions || out.iter().any(|r| r.callee == key) {
            continue;
        }
        let region = &program.regions[reach.region];
        let closure = index.closure(&reach.dir, &reach.name);
        if let Some(c) = closure.as_ref().ok().filter(|c| pinned.get(&key).is_some_and(|listed| listed.contains(&c.digest))) {
            bound.add(c);
        }
        let covered = fcd_frontends::pinned::coverage(pinned.get(&key), closure.as_ref().ok().map(|c| c.digest.as_str())).unwrap_or("unread: escalates");
        out.push(ReachedCode {
            region: region.name.to_owned(),
            callee: key,
            call: Anchor::at_line(reach.file, reach.node.line()),
            covered: format!("{}: {covered}", reach.written),
            digest: closure.as_ref().map(|c| c.digest.clone()).map_err(Clone::clone),
            definitions: closure.map(|c| c.anchors()).unwrap_or_default(),
        });
    }
    out
}
