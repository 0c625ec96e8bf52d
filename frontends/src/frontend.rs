//! The one interface every frontend implements.
//!
//! A frontend answers three questions about parsed source: where a reviewed
//! region is, which callees each of its call sites resolves to, and whether a
//! generic fact holds. Everything else (file discovery, counting regions,
//! inventories, summaries) is language-neutral and lives outside the trait.

use std::any::Any;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::ir::SourceFile;
use crate::ir::{Escalation, Identity};
use crate::spec::{FactSpec, RegionKind};
use crate::ts::{Node, Syntax};
use fcd_model::effect::{Anchor, Fact};

pub use crate::language::Lang;

/// One located region: the file it lives in and its syntax node.
#[derive(Clone, Copy)]
pub struct Region<'a> {
    pub name: &'a str,
    pub file: &'a str,
    pub node: Node<'a>,
    /// Every selected file of the release, for facts that resolve names
    /// across a package (a constant default, say).
    pub trees: &'a [(&'a str, &'a Syntax)],
    /// What the profile says beyond regions and facts.
    pub env: &'a Env,
}

/// The whole closure once every region is located, for the checks that read
/// across it ([`Frontend::check_program`]).
pub struct Program<'p, 'a> {
    /// The located regions, in the profile's order (optional ones may be absent).
    pub regions: &'p [Region<'a>],
    /// Each region's call sites, in the same order.
    pub calls: &'p [Vec<(Node<'a>, Identity)>],
    pub facts: &'p [FactSpec],
    /// Every parsed file of the closure.
    pub trees: &'p [(&'a str, &'a Syntax)],
    /// What the profile says beyond regions and facts.
    pub env: &'p Env,
    /// Files of the closure that did not parse (and could hold no region), with their text.
    pub opaque: &'p [(&'a str, &'a str)],
    /// The parsed files the loader loaded only as code the regions may reach
    /// ([`Env::libraries`]): not in `trees`, so no region, fact or file-wide
    /// check reads them; the closed call path reads what a region reaches.
    pub library: &'p [(&'a str, &'a Syntax)],
    /// Those of them that did not parse: code a region reaches there is unread.
    pub library_unparsed: &'p [&'a str],
}

/// What a frontend is told beyond regions and facts: the profile's tool name,
/// the functions it reviews as regions, and what only the profile's language
/// reads ([`LanguageSettings`]).
#[derive(Debug, Clone, Default)]
pub struct Env {
    /// The MCP tool name the profile reviews.
    pub tool: String,
    /// Names of the functions the profile's regions cover (`function` keys).
    pub reviewed: Vec<String>,
    /// Token digests of the signal listeners a reviewer read
    /// (`source.signal-listeners`): installing one of them is no escalation.
    pub signal_listeners: Vec<String>,
    /// The release files its package manifest names as what the runtime
    /// starts from (JavaScript), as the language's loader resolved them
    /// before parsing ([`crate::loader::Loaded::entries`]); only what they
    /// load ([`Frontend::loaded`]) is analysed. `None`: every selected file counts.
    pub entries: Option<Vec<String>>,
    /// A region read alone, for `fcd debug region`: the other regions are
    /// not located, so calls into them are listed, not checked against the
    /// closed call path, and the file-wide ambient check is left to the
    /// regions read together. Never set when a release is registered.
    pub alone: bool,
    /// The files the language's loader loaded only as code the regions may
    /// reach ([`crate::loader::Loaded::libraries`]), by path.
    pub libraries: BTreeSet<String>,
    /// The release's own packages by import path, with their directory
    /// ([`crate::loader::Loaded::packages`]).
    pub packages: BTreeMap<String, String>,
    /// The release's package directories the loader could not read whole,
    /// with why ([`crate::loader::Loaded::unread`]).
    pub unread: BTreeMap<String, String>,
    /// What the profile says that only its language's frontend reads (Go's
    /// accepted import paths and handler hand-offs, C#'s inert attributes,
    /// JavaScript's helpers, read-only callees and unread functions), in that
    /// frontend's own settings type.
    pub language: LanguageSettings,
}

/// One language's settings, carried by the core without knowing their type:
/// each language crate owns its settings type (`fcd_frontend_go::Settings`,
/// say) and reads it back with [`LanguageSettings::get`]; the compiler builds
/// them from the profile (`fcd_compiler::languages::settings`).
#[derive(Clone, Default)]
pub struct LanguageSettings(Option<Arc<dyn Any + Send + Sync>>);

impl LanguageSettings {
    pub fn new<T: Any + Send + Sync>(settings: T) -> LanguageSettings {
        LanguageSettings(Some(Arc::new(settings)))
    }

    /// The settings when they are a `T`; `None` when the profile's language
    /// has none (a frontend then reads its defaults: nothing listed).
    pub fn get<T: Any>(&self) -> Option<&T> {
        self.0.as_deref().and_then(|s| s.downcast_ref())
    }
}

impl std::fmt::Debug for LanguageSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "LanguageSettings(..)" } else { "LanguageSettings(none)" })
    }
}

impl<'a> Region<'a> {
    /// The anchor of any node of this region's file.
    pub fn anchor(&self, node: Node<'_>) -> Anchor {
        Anchor::new(self.file, node.line(), node.end_line(), node.text())
    }
}

/// A fact together with the node it was read from, so later facts (a guard
/// before a sink) can refer to it.
#[derive(Clone)]
pub struct Found<'a> {
    pub fact: Fact,
    pub node: Node<'a>,
}

/// What a language must provide. Kept small: five required methods (its
/// language and ambient table, regions, calls, facts); a check a language
/// needs only where it has the construct (surroundings, loader) defaults to
/// nothing to check, and the shared fact kinds ask their own small traits.
pub trait Frontend: Sync {
    /// The language this frontend reads (JavaScript for the JavaScript family,
    /// whose `.ts` files [`Lang::for_file`] reads as TypeScript).
    fn lang(&self) -> Lang;

    /// The language's operations on process-wide state ([`crate::ambient`]).
    fn ambient_table(&self) -> &'static crate::ambient::Table;

    /// Every node in `syntax` that the region kind names; counting them is the caller's job.
    fn find_regions<'a>(&self, syntax: &'a Syntax, kind: &RegionKind) -> Vec<Node<'a>>;

    /// Every call site inside the region, in source order, with its callee identity.
    fn calls<'a>(&self, region: &Region<'a>) -> Vec<(Node<'a>, Identity)>;

    /// Extracts one fact. `Ok(None)` means the source does not state it;
    /// `Err` means the source has a shape the profile does not accept.
    fn extract<'a>(&self, region: &Region<'a>, spec: &FactSpec, found: &BTreeMap<String, Found<'a>>) -> Result<Option<Found<'a>>, Escalation>;

    /// Checks what surrounds a located region in the whole closure before its
    /// call sites and facts are trusted: nothing outside it rebinds the
    /// region's name or a library name it resolves (shadowing, patching), or
    /// registers another definition in its place.
    fn check_region(&self, _region: &Region<'_>) -> Result<(), Escalation> {
        Ok(())
    }

    /// Whether the language's facts depend on the whole closure (a file can
    /// change what any region means), so that an unparsable file escalates
    /// even when it names no region.
    fn whole_program(&self) -> bool {
        false
    }

    /// Whether `call` sits in a function the region defines (between it and
    /// the region's own node), so it runs when that function is called, not
    /// in source order. A language that does not say so gets source order.
    fn deferred(&self, _region: Node<'_>, _call: Node<'_>) -> bool {
        false
    }

    /// A file of the closure that is a build file (a C# project), never
    /// parsed as source: `Some` with its check, which accepts it only when
    /// fcd can interpret what it does to compilation; `None` for any other file.
    fn build_file(&self, _file: &SourceFile) -> Option<Result<(), Escalation>> {
        None
    }

    /// What the build or the runtime loads of the closure, as the language's
    /// loader judges it once every file is parsed (`files` is the whole
    /// closure, parsed or not; `opaque` holds the source files that did not
    /// parse, with their text): the paths the runtime loads, starting from
    /// the package's entries (`env.entries`), or `None` when every selected
    /// file counts. Escalates on what decides which code is loaded and is not
    /// interpreted (build constraints, module files, a computed import).
    fn loaded(&self, _files: &[SourceFile], _trees: &[(&str, &Syntax)], _opaque: &[(&str, &str)], _env: &Env) -> Result<Option<BTreeSet<String>>, Escalation> {
        Ok(None)
    }

    /// Checks over the whole closure once every region is located and before
    /// any fact: constructs that run code no region shows, or that change
    /// what a reviewed name means (a reviewed name reassigned elsewhere, say).
    fn check_program(&self, _program: &Program<'_, '_>) -> Result<(), Escalation> {
        Ok(())
    }

    /// For `fcd debug region`: the release code the regions call that no
    /// region reads, with the digest of what it reaches where the language
    /// pins such code by digest (JavaScript, Go). Checks nothing.
    fn reached(&self, _program: &Program<'_, '_>) -> Vec<crate::ir::ReachedCode> {
        Vec::new()
    }

    /// The operations of one file that may write process-wide state (calls,
    /// references, writes), their names resolved through imports and aliases;
    /// [`crate::ambient`] decides which of them do.
    fn ambient<'a>(&self, _file: &str, _syntax: &'a Syntax) -> Vec<crate::ambient::Op<'a>> {
        Vec::new()
    }

    /// Whether `node` of `file`, an operation on process-wide state outside
    /// every pinned region, sits in release code a reviewer read and pinned by
    /// the digest of its closure (JavaScript's `source.pinned-functions`),
    /// whose statement of effect then covers it. `Err` says what a reviewer
    /// could pin, or nothing where the language pins no such code.
    fn pinned_code(&self, _program: &Program<'_, '_>, _file: &str, _node: Node<'_>) -> Result<(), String> {
        Err(String::new())
    }
}
