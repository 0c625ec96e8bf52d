//! Methods of the release that Go runs without a call naming them.
//!
//! The inventories and the closed call path ([`super::pinned`]) read call
//! expressions. But the standard library calls some methods by itself on the
//! values it is handed, finding them by type assertion: `fmt` calls
//! `Error()` and `String()` when it formats a value, `encoding/json` calls
//! `MarshalJSON`, `errors.Is` calls `Is` and `Unwrap`, `io.Copy` calls
//! `WriteTo`, `sort.Sort` calls `Less`. Such a method of a type the release
//! defines is code on the tool's call path that no call binds: a region that
//! builds `T{…}` and hands it to `json.Marshal` runs `T.MarshalJSON`,
//! whatever its body has become.
//!
//! So wherever a region names a type of the release (a composite literal,
//! `&T{}`, a conversion `T(x)`, `new(T)`, a declaration `var x T`, a
//! parameter or result type, a type assertion; or uses a parameter of a
//! function around it whose type names one), every type of the release
//! reachable from it through declarations (struct fields; embedded fields,
//! whose methods are promoted; pointer, slice, array, map and channel
//! elements; type arguments; the type a defined type or an alias stands for)
//! is searched for a method of [`IMPLICIT_METHODS`], with a value or a
//! pointer receiver alike (`&T{}` holds both method sets). Each one must be
//! a region of the profile (`function = "T.Error"`), or a type on the way
//! to it must be pinned in `source.pinned-functions` with a listed digest (a
//! type's closure holds all its methods and every type its declaration
//! names); else the registration escalates `inventory_violation` at the
//! method's declaration, printing the digest one would pin. Function and
//! interface types are not followed: a value of one holds no value of the
//! types its signatures name (what a call through it returns is the call's
//! business). Types of libraries (the standard library, dependencies) are
//! trusted by identity, as every library callee is; only types the release
//! defines matter.

use std::collections::BTreeSet;

use fcd_frontends::frontend::{Program, Region};
use fcd_frontends::ir::{Escalation, EscalationCode, ReachedCode};
use fcd_frontends::ts::Node;
use fcd_model::effect::Anchor;

use super::index::Index;
use super::scope;
use super::settings::Settings;
use super::syntax::{is_member, receiver_type};

/// Method names the Go standard library (and the encoders that follow its
/// conventions) calls on a value by itself, having found the method by a
/// type assertion on what it was handed, each with who calls it. The one
/// list the frontend reads.
pub(super) const IMPLICIT_METHODS: &[(&str, &str)] = &[
    ("Error", "fmt formats an error with it (%v, %s, Print*), as log, errors and every library reporting an error do"),
    ("String", "fmt formats a fmt.Stringer with it (%v, %s, Print*)"),
    ("GoString", "fmt formats a fmt.GoStringer with it (%#v)"),
    ("Format", "fmt hands every verb to a fmt.Formatter"),
    ("MarshalJSON", "encoding/json encodes a json.Marshaler with it"),
    ("UnmarshalJSON", "encoding/json decodes into a json.Unmarshaler with it"),
    ("MarshalText", "encoding/json, encoding/xml and log/slog encode an encoding.TextMarshaler with it, map keys included"),
    ("UnmarshalText", "encoding/json, encoding/xml and flag decode into an encoding.TextUnmarshaler with it"),
    ("MarshalBinary", "encoding/gob encodes an encoding.BinaryMarshaler with it"),
    ("UnmarshalBinary", "encoding/gob decodes into an encoding.BinaryUnmarshaler with it"),
    ("GobEncode", "encoding/gob encodes a gob.GobEncoder with it"),
    ("GobDecode", "encoding/gob decodes into a gob.GobDecoder with it"),
    ("MarshalXML", "encoding/xml encodes an xml.Marshaler with it"),
    ("UnmarshalXML", "encoding/xml decodes into an xml.Unmarshaler with it"),
    ("MarshalXMLAttr", "encoding/xml encodes an xml.MarshalerAttr with it"),
    ("UnmarshalXMLAttr", "encoding/xml decodes into an xml.UnmarshalerAttr with it"),
    ("MarshalYAML", "YAML encoders (gopkg.in/yaml, sigs.k8s.io/yaml) encode a yaml.Marshaler with it"),
    ("UnmarshalYAML", "YAML decoders decode into a yaml.Unmarshaler with it"),
    ("Is", "errors.Is asks each error of the chain with it"),
    ("As", "errors.As asks each error of the chain with it"),
    ("Unwrap", "errors.Is, errors.As and errors.Unwrap walk an error's chain with it"),
    ("WriteTo", "io.Copy hands the copy to an io.WriterTo source"),
    ("ReadFrom", "io.Copy hands the copy to an io.ReaderFrom destination"),
    ("Read", "io.Copy, io.ReadAll, bufio and net/http read an io.Reader with it"),
    ("Write", "io.Copy, fmt.Fprint*, bufio and encoders write to an io.Writer with it"),
    ("Close", "net/http closes a request body, io.NopCloser's callers and many libraries close an io.Closer with it"),
    ("Len", "sort.Sort, sort.Stable and container/heap call it on a sort.Interface"),
    ("Less", "sort.Sort, sort.Stable and container/heap call it on a sort.Interface"),
    ("Swap", "sort.Sort, sort.Stable and container/heap call it on a sort.Interface"),
    ("Push", "container/heap calls it on a heap.Interface"),
    ("Pop", "container/heap calls it on a heap.Interface"),
    ("LogValue", "log/slog resolves a slog.LogValuer with it"),
    ("Scan", "database/sql scans a column into an sql.Scanner with it"),
    ("Value", "database/sql converts a driver.Valuer argument with it"),
    ("ServeHTTP", "net/http serves each request of an http.Handler with it"),
];

/// Who calls the implicit method `name`, or `None` when Go calls no method of that name by itself.
fn called_by(name: &str) -> Option<&'static str> {
    IMPLICIT_METHODS.iter().find(|(m, _)| *m == name).map(|(_, who)| *who)
}

/// A type of the release: its package directory and name.
type TypeRef = (String, String);

/// A type of the release a region names, and where.
struct Mention<'a> {
    region: usize,
    node: Node<'a>,
    ty: TypeRef,
}

/// A method of [`IMPLICIT_METHODS`] reachable from a mention, with the types
/// on the way to it (the mention's first, the method's own last) and how each
/// step was taken.
struct Implicit<'a> {
    file: &'a str,
    method: Node<'a>,
    name: &'a str,
    chain: Vec<(TypeRef, String)>,
}

/// Every implicit method on the regions' path is a region, or bound by the
/// listed digest of a pinned type on the way to it.
pub(super) fn check(program: &Program<'_, '_>) -> Result<(), Escalation> {
    if program.env.alone {
        return Ok(());
    }
    let index = Index::of(program);
    let pinned = &Settings::of(program.env).pinned_functions;
    let mut done: BTreeSet<TypeRef> = BTreeSet::new();
    for mention in mentions(program, &index) {
        if !done.insert(mention.ty.clone()) {
            continue;
        }
        for found in implicit_methods(&index, &mention.ty) {
            if program.regions.iter().any(|r| r.file == found.file && r.node == found.method) {
                continue;
            }
            let region = &program.regions[mention.region];
            let (dir, ty) = &found.chain.last().expect("a chain ends at the method's type").0;
            let method = format!("{ty}.{}", found.name);
            let path = found.chain.iter().skip(1).map(|(_, how)| how.as_str()).collect::<Vec<_>>();
            let through = if path.is_empty() { String::new() } else { format!(", through {}", path.join(", then ")) };
            let head = format!(
                "region `{}` names `{}` ({}:{}){through}, and `{method}` ({}:{}) is a method Go runs without a call naming it ({}), which no region reads",
                region.name,
                mention.ty.1,
                region.file,
                mention.node.line(),
                found.file,
                found.method.line(),
                called_by(found.name).unwrap_or_default(),
            );
            let fail = |why: String| {
                Err(Escalation::new(EscalationCode::InventoryViolation, format!("{head}: {why}"), Some(Anchor::at_line(found.file, found.method.line()))))
            };
            // A pinned type on the way binds the method: its closure holds the
            // types its declaration names, with all their methods.
            let mut covered = false;
            for ((d, t), _) in &found.chain {
                let key = index.spelled(d, t);
                let Some(listed) = pinned.get(&key) else { continue };
                match index.closure(d, t) {
                    Ok(c) if listed.contains(&c.digest) => covered = true,
                    Ok(c) => {
                        return fail(format!(
                            "`{key}` is pinned (`source.pinned-functions`), and the release code it reaches has digest {}, which no reviewer listed: \
                             read it (`fcd debug region --closure {key}` prints it), and list the digest if it does what the assumptions say",
                            c.digest
                        ));
                    }
                    Err(why) => return fail(format!("`{key}` is pinned (`source.pinned-functions`), but {why}")),
                }
            }
            if !covered {
                let key = index.spelled(dir, ty);
                let digest = match index.closure(dir, ty) {
                    Ok(c) => format!(", whose closure has digest {}", c.digest),
                    Err(why) => format!("; it cannot be pinned: {why}"),
                };
                // A region is looked for in the selected files only; a library package's method is pinned.
                let region = match program.trees.iter().any(|(f, _)| *f == found.file) {
                    true => format!("make it a region with its own inventory (`function = \"{method}\"`), or "),
                    false => format!("{} is not among the files `source.files` selects, so ", found.file),
                };
                return fail(format!("{region}read the type and pin `{key}` in `source.pinned-functions`{digest}"));
            }
        }
    }
    Ok(())
}

/// The types holding a method Go calls by itself that the regions reach,
/// for `fcd debug region` (`--closure pkg/github.T` prints what pinning
/// one binds): how the profile covers each method, and the digest and
/// definitions of the type's closure. Checks nothing.
pub(super) fn reached(program: &Program<'_, '_>) -> Vec<ReachedCode> {
    let index = Index::of(program);
    let pinned = &Settings::of(program.env).pinned_functions;
    let mut out: Vec<ReachedCode> = Vec::new();
    let mut done: BTreeSet<TypeRef> = BTreeSet::new();
    for mention in mentions(program, &index) {
        if !done.insert(mention.ty.clone()) {
            continue;
        }
        for found in implicit_methods(&index, &mention.ty) {
            let (dir, ty) = &found.chain.last().expect("a chain ends at the method's type").0;
            let key = index.spelled(dir, ty);
            if out.iter().any(|r| r.callee == key) {
                continue;
            }
            let closure = index.closure(dir, ty);
            // Read alone, the other regions are not located: a method region is known by its name.
            let region = program.regions.iter().any(|r| r.file == found.file && r.node == found.method)
                || (program.env.alone && program.env.reviewed.iter().any(|r| r == found.name));
            let covered = match fcd_frontends::pinned::coverage(pinned.get(&key), closure.as_ref().ok().map(|c| c.digest.as_str())) {
                _ if region => "a region",
                Some(how) => how,
                None => "unread: escalates unless a type on the way to it is pinned",
            };
            let at = &program.regions[mention.region];
            out.push(ReachedCode {
                region: at.name.to_owned(),
                callee: key,
                call: Anchor::at_line(at.file, mention.node.line()),
                covered: format!("`{ty}.{}` ({}:{}), which Go runs by itself: {covered}", found.name, found.file, found.method.line()),
                digest: closure.as_ref().map(|c| c.digest.clone()).map_err(Clone::clone),
                definitions: closure.map(|c| c.anchors()).unwrap_or_default(),
            });
        }
    }
    out
}

/// Every type of the release the regions name, in the regions' order.
fn mentions<'a>(program: &Program<'_, 'a>, index: &Index<'_, 'a>) -> Vec<Mention<'a>> {
    let mut out = Vec::new();
    for (i, region) in program.regions.iter().enumerate() {
        let dir = scope::dir(region.file);
        let root = region.node.ancestors().last().unwrap_or(region.node);
        let imports = scope::imports(root);
        let mut push = |node: Node<'a>, ty: Option<TypeRef>| {
            if let Some(ty) = ty {
                out.push(Mention { region: i, node, ty });
            }
        };
        for n in region.node.descendants() {
            push(n, named_type(index, dir, &imports, n));
        }
        // A parameter of a function around the region that the region uses:
        // its value is handled here, with whatever type its declaration names.
        for (param_type, _) in outer_parameters(region) {
            for n in std::iter::once(param_type).chain(param_type.descendants()) {
                push(n, named_type(index, dir, &imports, n));
            }
        }
    }
    out
}

/// The release type a node names, when it names one: a type identifier,
/// an identifier in a value position (a conversion `T(x)`, an operand
/// `T.Method`) or a qualified name `P.T` of a release package `P`.
fn named_type(index: &Index<'_, '_>, dir: &str, imports: &scope::Imports<'_>, n: Node<'_>) -> Option<TypeRef> {
    match n.kind() {
        "type_identifier" if n.parent().is_some_and(|p| p.kind() == "qualified_type") => None,
        "type_identifier" => declared_type(index, dir, n.text()),
        "identifier" if !is_member(n) => declared_type(index, dir, n.text()),
        "qualified_type" | "selector_expression" => {
            let (package, name) = match n.kind() {
                "qualified_type" => (n.field_child("package")?, n.field_child("name")?),
                _ => (n.field_child("operand")?, n.field_child("field")?),
            };
            if !matches!(package.kind(), "identifier" | "package_identifier") {
                return None;
            }
            let (path, _) = imports.get(package.text())?;
            declared_type(index, &index.release(path)?, name.text())
        }
        _ => None,
    }
}

/// `(dir, name)` when package `dir` declares a type `name` at top level.
pub(super) fn declared_type(index: &Index<'_, '_>, dir: &str, name: &str) -> Option<TypeRef> {
    (!type_specs(index, dir, name).is_empty()).then(|| (dir.to_owned(), name.to_owned()))
}

/// The `type` specs (definitions and aliases) of `name` in package `dir`, with their files.
fn type_specs<'a>(index: &Index<'_, 'a>, dir: &str, name: &str) -> Vec<(&'a str, Node<'a>)> {
    let mut out = Vec::new();
    for (file, syntax) in index.files(dir) {
        for top in syntax.root().named_children().filter(|t| t.kind() == "type_declaration") {
            for spec in top.named_children().filter(|s| matches!(s.kind(), "type_spec" | "type_alias")) {
                if spec.field_child("name").is_some_and(|n| n.text() == name) {
                    out.push((*file, spec));
                }
            }
        }
    }
    out
}

/// The declared type of each parameter (and receiver) of the functions
/// around a region, outside it, that the region names: the values it
/// handles without binding them.
fn outer_parameters<'a>(region: &Region<'a>) -> Vec<(Node<'a>, Node<'a>)> {
    let used: BTreeSet<&str> = region.node.descendants().filter(|n| n.kind() == "identifier").map(|n| n.text()).collect();
    let mut out = Vec::new();
    for f in region.node.ancestors().filter(|a| matches!(a.kind(), "func_literal" | "function_declaration" | "method_declaration")) {
        for list in ["receiver", "parameters"].iter().filter_map(|field| f.field_child(field)) {
            for p in list.named_children().filter(|p| matches!(p.kind(), "parameter_declaration" | "variadic_parameter_declaration")) {
                let Some(ty) = p.field_child("type") else { continue };
                if p.field_children("name").any(|n| used.contains(n.text())) {
                    out.push((ty, p));
                }
            }
        }
    }
    out
}

/// The methods of [`IMPLICIT_METHODS`] of `start` and of every release type
/// reachable from it through declarations, breadth first (the shortest way
/// to each type is the one named).
fn implicit_methods<'a>(index: &Index<'_, 'a>, start: &TypeRef) -> Vec<Implicit<'a>> {
    let mut out = Vec::new();
    let mut seen: BTreeSet<TypeRef> = BTreeSet::from([start.clone()]);
    let mut queue: std::collections::VecDeque<Vec<(TypeRef, String)>> = [vec![(start.clone(), String::new())]].into();
    while let Some(chain) = queue.pop_front() {
        let (dir, name) = chain.last().expect("a chain is never empty").0.clone();
        for (file, syntax) in index.files(&dir) {
            for m in syntax.root().named_children().filter(|m| m.kind() == "method_declaration" && receiver_type(*m) == Some(name.as_str())) {
                let Some(method) = m.field_child("name").map(|n| n.text()).filter(|n| called_by(n).is_some()) else { continue };
                out.push(Implicit { file, method: m, name: method, chain: chain.clone() });
            }
        }
        for (file, spec) in type_specs(index, &dir, &name) {
            let Some(body) = spec.field_child("type") else { continue };
            let imports = scope::imports(spec.ancestors().last().unwrap_or(spec));
            let mut next = Vec::new();
            contained_types(index, &dir, &imports, body, &mut next);
            for (ty, node) in next {
                if seen.insert(ty.clone()) {
                    let how = step(&name, &ty.1, node);
                    let mut longer = chain.clone();
                    longer.push((ty, format!("{how} ({file}:{})", node.line())));
                    queue.push_back(longer);
                }
            }
        }
    }
    out
}

/// The release types a type expression holds values of, with where each is
/// named: function and interface types left out.
fn contained_types<'a>(index: &Index<'_, 'a>, dir: &str, imports: &scope::Imports<'a>, n: Node<'a>, out: &mut Vec<(TypeRef, Node<'a>)>) {
    if matches!(n.kind(), "function_type" | "interface_type") {
        return;
    }
    if let Some(ty) = named_type(index, dir, imports, n) {
        out.push((ty, n));
    }
    for c in n.named_children() {
        contained_types(index, dir, imports, c, out);
    }
}

/// How a type is reached from the one whose declaration names it at `node`.
fn step(from: &str, to: &str, node: Node<'_>) -> String {
    let field = node.ancestors().find(|a| a.kind() == "field_declaration");
    match field {
        Some(f) if f.field_child("name").is_none() => format!("`{to}` embedded in `{from}` (its methods are promoted)"),
        Some(f) => format!("`{to}` in the field `{}` of `{from}`", f.field_children("name").map(|n| n.text()).collect::<Vec<_>>().join(", ")),
        None => format!("`{to}` in the declaration of `{from}`"),
    }
}

#[cfg(test)]
mod tests {
    use super::IMPLICIT_METHODS;

    #[test]
    fn the_table_names_each_method_once_with_who_calls_it() {
        let mut names: Vec<&str> = IMPLICIT_METHODS.iter().map(|(m, _)| *m).collect();
        for (m, who) in IMPLICIT_METHODS {
            assert!(m.starts_with(|c: char| c.is_ascii_uppercase()) && m.chars().all(|c| c.is_ascii_alphanumeric()), "`{m}` is an exported Go name");
            assert!(!who.is_empty(), "`{m}` says who calls it");
        }
        names.sort_unstable();
        let count = names.len();
        names.dedup();
        assert_eq!(names.len(), count, "a method is listed once");
        // What fmt, encoding/json, errors, io and sort call by themselves.
        for m in [
            "Error",
            "String",
            "GoString",
            "Format",
            "MarshalJSON",
            "UnmarshalJSON",
            "MarshalText",
            "UnmarshalText",
            "Is",
            "As",
            "Unwrap",
            "WriteTo",
            "ReadFrom",
            "Len",
            "Less",
            "Swap",
        ] {
            assert!(super::called_by(m).is_some(), "{m} is listed");
        }
        assert!(super::called_by("GetClient").is_none());
    }
}
