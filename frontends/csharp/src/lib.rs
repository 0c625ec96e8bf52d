//! The C# frontend (tree-sitter-c-sharp).
//!
//! Regions are methods, named `Class.Method` (or just `Method`), with a body;
//! partial classes, file-scoped namespaces and attributes need nothing
//! special. Callee identities are dotted tokens, generic arguments kept and
//! normalized, `a?.B` read as `a.B`, the receiver spelled by what it is where
//! one declaration says so (`ParseResult#GetValueOrDefault<bool>` for a
//! parameter `ParseResult parseResult`; see `scope`); object creations are not callees, but calls on them are
//! (`new HttpClient().GetAsync`). Facts follow an option's wiring: registered,
//! bound with a default, passed to the service, mapped to literals, placed in
//! the deployment parameters, and the template's own value. String contents
//! (a raw JSON template included) are read as data, never as code.
//!
//! Facts are only as good as what they leave out, so the frontend also
//! checks what the facts assume: the build files decide what compiles
//! (`loader`, which also takes them into the closure before parsing),
//! nothing in the closure runs or rebinds names unseen (`surroundings`),
//! trusted model types are plain data (`plain`), a value is held unchanged
//! from its fact to its sink (`held`), and templates are read as strict JSON
//! (`json`).

mod ambient;
mod control;
mod facts;
mod held;
mod json;
pub mod loader;
mod option;
mod plain;
mod scope;
mod settings;
mod surroundings;
mod syntax;
mod target;
mod wiring;

pub use settings::Settings;

use std::collections::BTreeMap;

use fcd_frontends::facts::FactSite;
use fcd_frontends::frontend::{Found, Frontend, Lang, Program, Region};
use fcd_frontends::ir::SourceFile;
use fcd_frontends::ir::{Escalation, Identity};
use fcd_frontends::spec::{FactKind, FactSpec, RegionKind};
use fcd_frontends::ts::{Node, Syntax};

use facts::Cx;
use scope::implicit_or_call;

/// The C# frontend.
pub struct CSharp;

pub(crate) const TYPES: &[&str] = &["class_declaration", "struct_declaration", "record_declaration", "interface_declaration"];

impl Frontend for CSharp {
    fn lang(&self) -> Lang {
        Lang::CSharp
    }

    fn find_regions<'a>(&self, syntax: &'a Syntax, kind: &RegionKind) -> Vec<Node<'a>> {
        let RegionKind::Function(name) = kind else { return Vec::new() };
        let (class, method) = match name.rsplit_once('.') {
            Some((c, m)) => (Some(c), m),
            None => (None, name.as_str()),
        };
        syntax
            .root()
            .descendants()
            .filter(|n| matches!(n.kind(), "method_declaration" | "local_function_statement"))
            .filter(|n| n.field_child("name").is_some_and(|id| id.text() == method))
            .filter(|n| n.field_child("body").is_some() || n.children().any(|c| c.kind() == "arrow_expression_clause"))
            .filter(|n| {
                class.is_none_or(|c| n.ancestors().find(|a| TYPES.contains(&a.kind())).and_then(|t| t.field_child("name")).is_some_and(|id| id.text() == c))
            })
            .collect()
    }

    fn calls<'a>(&self, region: &Region<'a>) -> Vec<(Node<'a>, Identity)> {
        region.node.descendants().filter_map(|n| implicit_or_call(n).map(|i| (n, i))).collect()
    }

    /// A C# file can declare a partial class, an extension method or a type
    /// that changes what any region means: every file must parse.
    fn whole_program(&self) -> bool {
        true
    }

    fn build_file(&self, file: &SourceFile) -> Option<Result<(), Escalation>> {
        loader::is_build_file(&file.path).then(|| loader::check(file))
    }

    fn ambient<'a>(&self, _file: &str, syntax: &'a Syntax) -> Vec<fcd_frontends::ambient::Op<'a>> {
        ambient::ops(syntax)
    }

    fn check_program(&self, p: &Program<'_, '_>) -> Result<(), Escalation> {
        surroundings::check(p.regions, p.calls, p.facts)
    }

    fn extract<'a>(&self, region: &Region<'a>, spec: &FactSpec, found: &BTreeMap<String, Found<'a>>) -> Result<Option<Found<'a>>, Escalation> {
        let cx = Cx { site: FactSite { region, spec } };
        match &spec.kind {
            FactKind::Call { callee, args, keywords, matching } => {
                fcd_frontends::facts::call_fact(&cx, &cx.site, callee, args.as_deref(), keywords.as_ref(), *matching)
            }
            FactKind::Guard { .. } => fcd_frontends::guard::extract(&cx, &cx.site, found),
            FactKind::Default { .. } => fcd_frontends::default::extract(&cx, &cx.site),
            FactKind::Option { property, attribute, ty, argument, inert } => cx.option_fact(property, attribute, ty, argument, inert),
            FactKind::Pass { sink, from } => match (found.get(sink), found.get(from)) {
                (Some(sink), Some(from)) => cx.pass_fact(sink, from),
                _ => Ok(None),
            },
            FactKind::Map { from } => match found.get(from) {
                Some(pass) => cx.map_fact(pass),
                None => Ok(None),
            },
            FactKind::Field { .. } => fcd_frontends::field::extract(&cx, &cx.site, found),
            FactKind::Key { key } => cx.key_fact(key),
            FactKind::Flow { from, sink, into } => match (found.get(from), found.get(sink)) {
                (Some(from), Some(sink)) => cx.flow_fact(from, sink, into.as_deref()),
                _ => Ok(None),
            },
            _ => Err(fcd_frontends::facts::unsupported(region, spec, "C#")),
        }
    }

    fn ambient_table(&self) -> &'static fcd_frontends::ambient::Table {
        &ambient::TABLE
    }
}
