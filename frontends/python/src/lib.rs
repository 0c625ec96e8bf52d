//! The Python frontend (tree-sitter-python).
//!
//! Regions are function definitions by name. Callees resolve to dotted paths
//! through imports, annotations and local aliases ([`scope`]). Facts are read
//! from syntax only: comments are separate nodes and string contents are
//! leaves, so neither can ever produce a callee, a guard or a sink. What the
//! interpreter and installers load around the selected files is read before
//! any of this ([`loader`], called by the compiler).

mod ambient;
mod bindings;
mod builtins;
mod closure;
mod constant;
mod control;
mod facts;
mod hook;
pub mod loader;
mod members;
mod reads;
mod route;
mod scope;
mod surroundings;
mod syntax;
mod transport;

use std::collections::BTreeMap;

use fcd_frontends::facts::FactSite;
use fcd_frontends::frontend::{Found, Frontend, Lang, Program, Region};
use fcd_frontends::ir::{Escalation, Identity};
use fcd_frontends::spec::{FactKind, FactSpec, RegionKind};
use fcd_frontends::ts::{Node, Syntax};

use bindings::compact;
use builtins::DYNAMIC_BUILTINS;
use facts::Cx;
use scope::Scope;
use syntax::{clip, decorator_sites};

/// The Python frontend.
pub struct Python;

impl Frontend for Python {
    fn lang(&self) -> Lang {
        Lang::Python
    }

    fn find_regions<'a>(&self, syntax: &'a Syntax, kind: &RegionKind) -> Vec<Node<'a>> {
        // Python handlers are definitions or routes; a literal region names no Python shape.
        let name = match kind {
            RegionKind::Function(name) => name,
            RegionKind::Route(tool) => return route::find(syntax, tool),
            RegionKind::Variable(name) => return constant::find(syntax, name),
            RegionKind::Literal(_) | RegionKind::Callback(_) | RegionKind::Case(_) => return Vec::new(),
        };
        syntax
            .root()
            .descendants()
            // A class is a region too: its body runs when the module loads and
            // its methods when an instance is made or used (an exception class
            // a guard raises, say); a profile pins it with a `body` fact.
            .filter(|n| matches!(n.kind(), "function_definition" | "class_definition"))
            .filter(|n| n.field_child("name").is_some_and(|id| id.text() == name))
            .collect()
    }

    fn calls<'a>(&self, region: &Region<'a>) -> Vec<(Node<'a>, Identity)> {
        let scope = region_scope(region);
        // Decorators of the region's own definition run when the module loads
        // and replace what callers get: they are call sites of the region.
        let own = region.node.parent().filter(|p| p.kind() == "decorated_definition").into_iter();
        let decorators = own.flat_map(|d| d.named_children().filter(|c| c.kind() == "decorator").flat_map(decorator_sites).collect::<Vec<_>>());
        decorators
            .chain(region.node.descendants())
            .filter_map(|n| implicit_or_call(&scope, n, region).map(|id| (n, id)))
            .chain(route::shared(region.node, &region.env.tool).into_iter().filter_map(|n| shared_site(&scope, n, region).map(|id| (n, id))))
            .collect()
    }

    fn deferred(&self, region: Node<'_>, call: Node<'_>) -> bool {
        region.contains(call) && call.ancestors().take_while(|a| *a != region).any(|a| matches!(a.kind(), "function_definition" | "lambda"))
    }

    fn ambient<'a>(&self, file: &str, syntax: &'a Syntax) -> Vec<fcd_frontends::ambient::Op<'a>> {
        ambient::ops(file, syntax)
    }

    fn check_region(&self, region: &Region<'_>) -> Result<(), Escalation> {
        if region.node.kind() == "assignment" {
            constant::check(region)?;
        }
        route::check(region)?;
        surroundings::check(region)
    }

    fn check_program(&self, program: &Program<'_, '_>) -> Result<(), Escalation> {
        transport::check(program)?;
        closure::check(program)
    }

    fn extract<'a>(&self, region: &Region<'a>, spec: &FactSpec, found: &BTreeMap<String, Found<'a>>) -> Result<Option<Found<'a>>, Escalation> {
        let scope = region_scope(region);
        let cx = Cx { site: FactSite { region, spec }, names: &scope };
        match &spec.kind {
            FactKind::Call { callee, args, keywords, matching } => {
                fcd_frontends::facts::call_fact(&cx, &cx.site, callee, args.as_deref(), keywords.as_ref(), *matching)
            }
            FactKind::Guard { .. } => fcd_frontends::guard::extract(&cx, &cx.site, found),
            FactKind::Default { .. } => fcd_frontends::default::extract(&cx, &cx.site),
            FactKind::Field { .. } => fcd_frontends::field::extract(&cx, &cx.site, found),
            FactKind::Hook { .. } => hook::extract(&cx, &cx.site, found),
            _ => Err(fcd_frontends::facts::unsupported(region, spec, "Python")),
        }
    }

    fn ambient_table(&self) -> &'static fcd_frontends::ambient::Table {
        &ambient::TABLE
    }
}

fn region_scope<'a>(region: &Region<'a>) -> Scope<'a> {
    let root = region.node.ancestors().last().unwrap_or(region.node);
    Scope::new(root, route::function_of(region.node), region.file)
}

/// The identity of every construct that invokes code: a call, and the
/// implicit invocations Python makes for a decorator (`@path`), a context
/// manager (`with path`, its `__enter__` and `__exit__`) and an import inside
/// a function (`import module`, which runs the module).
fn implicit_or_call(scope: &Scope<'_>, n: Node<'_>, region: &Region<'_>) -> Option<Identity> {
    let named = |prefix: &str, expr: Option<Node<'_>>| match expr.and_then(|e| scope.resolve(e)) {
        Some(path) => Identity::Path(format!("{prefix}{path}")),
        None => Identity::Unresolved(format!("{prefix}{}", expr.map(|e| clip(e.text())).unwrap_or_default())),
    };
    match n.kind() {
        "call" => Some(reviewed_local(scope, n, region).unwrap_or_else(|| identity(scope, n))),
        "decorator" => {
            let expr = n.named_children().find(|c| c.kind() != "comment");
            // `@helper` or `@helper(…)` runs the release's own helper: only as reviewed as it is.
            let helper = expr.map(|e| if e.kind() == "call" { e.field_child("function").unwrap_or(e) } else { e });
            match helper.filter(|h| h.kind() == "identifier").and_then(|h| unreviewed_local(scope, h.text(), region)) {
                Some(unread) => Some(unread),
                None => Some(named("@", expr)),
            }
        }
        "with_item" => {
            let value = n.field_child("value");
            let expr = match value {
                Some(v) if v.kind() == "as_pattern" => v.named_children().next(),
                other => other,
            };
            Some(named("with ", expr))
        }
        "import_statement" | "import_from_statement" => {
            let module = n.field_child("module_name").or_else(|| n.field_child("name"))?;
            Some(Identity::Path(format!("import {}", compact(module.text()))))
        }
        // A function of the release handed on as a value (`map(check, xs)`,
        // `key=check`, a callback) runs as surely as one called.
        "identifier" if handed_value(n) && !defined_within(region.node, n.text()) && !inert_class_use(scope, n) => {
            unreviewed_local(scope, n.text(), region).map(|_| Identity::Unresolved(format!("handed {} (a function or class of the release passed as a value for whatever receives it to call; it is not a region of the profile, so its body is unread)", n.text())))
        }
        _ => None,
    }
}

/// Whether `n` names a class of the module where no code of it runs: the
/// class caught (`except C`), iterated (`for m in C`, an Enum's members),
/// tested for membership (`x in C`) or instance (`isinstance(x, C)`), when
/// no metaclass of the release can hook those (no `metaclass=`, and no base
/// the module defines). Handed anywhere else, the receiver could construct it.
fn inert_class_use(scope: &Scope<'_>, n: Node<'_>) -> bool {
    let root = n.ancestors().last().unwrap_or(n);
    let class = root
        .named_children()
        .map(|c| if c.kind() == "decorated_definition" { c.field_child("definition").unwrap_or(c) } else { c })
        .find(|c| c.kind() == "class_definition" && c.field_child("name").is_some_and(|i| i.text() == n.text()));
    let Some(class) = class else { return false };
    let plain_bases = class.field_child("superclasses").is_none_or(|bases| {
        bases.named_children().all(|b| match b.kind() {
            "identifier" => !scope.is_module_definition(b.text()),
            "attribute" => true,
            _ => false,
        })
    });
    // Up through a tuple of several (`except (A, B)`, `isinstance(x, (A, B))`).
    let mut at = n;
    while let Some(p) = at.parent().filter(|p| matches!(p.kind(), "tuple" | "parenthesized_expression")) {
        at = p;
    }
    let Some(parent) = at.parent() else { return false };
    let inert = match parent.kind() {
        "except_clause" => true,
        "for_in_clause" | "for_statement" => parent.field_child("right") == Some(at),
        "comparison_operator" => parent.children().any(|o| matches!(o.kind(), "in" | "not in")) && parent.named_children().last() == Some(at),
        "argument_list" => parent
            .parent()
            .and_then(|c| c.field_child("function"))
            .is_some_and(|f| matches!(f.text(), "isinstance" | "issubclass") && parent.named_children().nth(1) == Some(at)),
        _ => false,
    };
    plain_bases && inert
}

/// Whether the region itself defines a function or class `name`, whose body
/// is then read as part of the region's.
fn defined_within(region: Node<'_>, name: &str) -> bool {
    region
        .descendants()
        .any(|d| d != region && matches!(d.kind(), "function_definition" | "class_definition") && d.field_child("name").is_some_and(|i| i.text() == name))
}

/// Whether an identifier is a value read where it stands: not a callee, a
/// decorator, a definition's or keyword's name, or the object of an attribute.
fn handed_value(n: Node<'_>) -> bool {
    let Some(parent) = n.parent() else { return false };
    let field = |name: &str| parent.field_child(name) == Some(n);
    match parent.kind() {
        "call" => !field("function"),
        "attribute" => !field("object") && !field("attribute"),
        "function_definition" | "class_definition" => !field("name"),
        "keyword_argument" | "default_parameter" | "typed_default_parameter" => !field("name"),
        "decorator" | "dotted_name" | "aliased_import" | "global_statement" | "nonlocal_statement" | "parameters" | "typed_parameter" => false,
        _ => true,
    }
}

/// A route's shared call site: a call (or another implicit invocation), or a
/// name handed to the server's constructor, which the server will call: only
/// a function or class of the release counts, and only as reviewed as it is.
fn shared_site(scope: &Scope<'_>, n: Node<'_>, region: &Region<'_>) -> Option<Identity> {
    // A branch route's shared nodes are every node of its dispatcher; only a
    // registered function's are names handed over.
    if n.kind() != "identifier" || region.node.kind() != "function_definition" {
        // A site in a function that neither is the route nor holds it (the
        // maker's result used in `serve`) means what its own function's
        // names say there, not what the route's would.
        let own = n.ancestors().find(|a| a.kind() == "function_definition");
        if let Some(own) = own.filter(|f| !f.contains(region.node)) {
            let root = n.ancestors().last().unwrap_or(n);
            return implicit_or_call(&Scope::new(root, own, region.file), n, region);
        }
        return implicit_or_call(scope, n, region);
    }
    // Every name handed over is listed by what it resolves to (`handed PATH`).
    let handed = scope.resolve(n).map_or_else(|| Identity::Unresolved(format!("handed {}", n.text())), |p| Identity::Path(format!("handed {p}")));
    Some(unreviewed_local(scope, n.text(), region).unwrap_or(handed))
}

/// A call of a function or class the release itself defines is only as
/// reviewed as that definition: unless the profile makes it a region (with its
/// own inventory and facts), its body is unread code, and the call is unresolved.
fn reviewed_local(scope: &Scope<'_>, call: Node<'_>, region: &Region<'_>) -> Option<Identity> {
    let function = call.field_child("function").filter(|f| f.kind() == "identifier")?;
    unreviewed_local(scope, function.text(), region)
}

/// `Unresolved` for a name that means a function or class the release defines
/// (at module level or nested in an enclosing function) that no region covers.
fn unreviewed_local(scope: &Scope<'_>, name: &str, region: &Region<'_>) -> Option<Identity> {
    if !scope.is_module_definition(name) && !scope.is_nested_definition(name) {
        return None;
    }
    let reviewed = region.env.reviewed.iter().any(|f| f == name);
    (!reviewed).then(|| Identity::Unresolved(format!("{name} (defined in the release, but not a region of the profile, so its body is unread)")))
}

/// The identity of a call's callee.
fn identity(scope: &Scope<'_>, call: Node<'_>) -> Identity {
    let Some(function) = call.field_child("function") else {
        return Identity::Dynamic(call.text().chars().take(60).collect());
    };
    match function.kind() {
        // Calling the region's own parameter (a wrapper decorator calling the
        // function it wraps): whatever the caller passed; an inventory lists it
        // as `param:NAME` only where the reviewer knows what that is.
        "identifier" if scope.is_unchanged_param(function.text()) => Identity::Path(format!("param:{}", function.text())),
        // Likewise a parameter of a function nested in the region (a
        // middleware's `call_next`), inside that function.
        "identifier" if scope.nested_parameter(function).is_some() => Identity::Path(format!("param:{}", function.text())),
        "identifier" | "attribute" => match scope.resolve(function) {
            Some(path) if DYNAMIC_BUILTINS.contains(&path.as_str()) => Identity::Dynamic(path),
            Some(path) => Identity::Path(path),
            None => Identity::Unresolved(function.text().split_whitespace().collect()),
        },
        // Calling the result of a call, a subscript, a lambda or anything else:
        // the callee is chosen at run time.
        "call" => Identity::Dynamic(format!("calls the result of `{}`", clip(function.text()))),
        other => Identity::Dynamic(format!("calls a {other} (`{}`)", clip(function.text()))),
    }
}

/// Whether the module holding `at` defines, at its top level and without
/// decorators, `class NAME(B)` with one base `B` that resolves to
/// `pydantic.BaseModel`, whose body declares `field` by an annotation
/// (`field: T` or `field: T = …`) and nothing else binds `field` in it.
fn model_declares(at: Node<'_>, name: &str, field: &str) -> bool {
    let root = at.ancestors().last().unwrap_or(at);
    let classes: Vec<Node<'_>> =
        root.named_children().filter(|c| c.kind() == "class_definition" && c.field_child("name").is_some_and(|n| n.text() == name)).collect();
    let [class] = classes.as_slice() else { return false };
    let module = Scope::module(root, "");
    let bases: Vec<Node<'_>> = class.field_child("superclasses").map(|l| l.named_children().filter(|c| c.kind() != "comment").collect()).unwrap_or_default();
    let based =
        matches!(bases.as_slice(), [b] if matches!(b.kind(), "identifier" | "attribute") && module.resolve(*b).as_deref() == Some("pydantic.BaseModel"));
    let Some(body) = class.field_child("body") else { return false };
    let bindings = bindings::bindings_at(*class, Some(field));
    let declared = body.named_children().filter(|st| st.kind() == "expression_statement").filter_map(|st| st.named_children().next()).any(|a| {
        a.kind() == "assignment" && a.field_child("type").is_some() && a.field_child("left").is_some_and(|l| l.kind() == "identifier" && l.text() == field)
    });
    let assigned = bindings.get(field).map_or(0, Vec::len);
    based && declared && assigned <= 1
}
