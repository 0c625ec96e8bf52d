//! What a Go profile says that only the Go frontend reads: the import paths
//! it accepts for each package name (`[imports]`), and how each handler
//! literal reaches the tool it serves (a region's `via`, `beside`,
//! `wrapped-by`, `registered-by`), and the names of the release's other
//! packages pinned by digest (`source.pinned-functions`). The compiler builds them from the profile;
//! the core carries them in [`Env::language`].

use std::collections::BTreeMap;

use fcd_frontends::frontend::Env;

/// The Go part of what a profile says beyond regions and facts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings {
    /// Package name as the source spells it -> accepted import-path patterns
    /// (`*` matches within one path segment), e.g. `github` ->
    /// `github.com/google/go-github/v*/github`.
    pub imports: BTreeMap<String, Vec<String>>,
    /// Region name -> how its handler literal reaches the tool it serves.
    pub handoff: BTreeMap<String, Handoff>,
    /// Names of the release's other packages a region may reach although
    /// no region reads them (`pkg/utils.NewToolResultError`), each with the
    /// digests of its closure a reviewer read (`source.pinned-functions`,
    /// see `pinned.rs`). Any other one escalates.
    pub pinned_functions: BTreeMap<String, Vec<String>>,
}

/// What a profile that sets none says: no import accepted, no hand-off reviewed.
static NONE: Settings = Settings { imports: BTreeMap::new(), handoff: BTreeMap::new(), pinned_functions: BTreeMap::new() };

impl Settings {
    /// The Go settings `env` carries (none set: nothing accepted).
    pub(crate) fn of(env: &Env) -> &Settings {
        env.language.get::<Settings>().unwrap_or(&NONE)
    }

    /// Whether `path` matches one of the patterns accepted for package name `name`.
    pub(crate) fn accepts_import(&self, name: &str, path: &str) -> bool {
        self.imports.get(name).is_some_and(|patterns| patterns.iter().any(|p| segment_glob(p, path)))
    }
}

/// How a Go handler literal reaches the tool it serves, as the profile
/// reviewed it (`via`, `beside`, `wrapped-by`, `registered-by` of a region).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Handoff {
    /// Calls the literal may be passed to directly, as an argument of the
    /// call the constructor returns (`NewTool`).
    pub via: Vec<String>,
    /// Result types of a handler factory: with `via`, the literal handed over
    /// may instead be a factory `func(deps T) R { return HANDLER }` whose
    /// declared result type is one of these (`mcp.ToolHandlerFor`, type
    /// arguments aside); the handler is the literal it returns.
    pub factory: Vec<String>,
    /// Calls the literal may be returned beside: the constructor's body is
    /// the one statement `return CALL(…), func(…) {…}` (`mcp.NewTool`).
    pub beside: Vec<String>,
    /// Conversions the literal may go through before it is returned beside
    /// the tool, bound to a local (`mcp.ToolHandlerFor`).
    pub converted_by: Vec<String>,
    /// Reviewed calls the constructor's result may be passed to whole, as
    /// their only argument (`toolsets.NewServerTool`), instead of being a
    /// plain element of a tool list.
    pub wrapped_by: Vec<String>,
    /// Methods a wrapper's result may be handed to as a plain argument
    /// (`AddWriteTools`), as it may be an element of a list literal.
    pub registered_by: Vec<String>,
}

/// `/`-separated pattern matching where `*` stands for any text within one segment.
fn segment_glob(pattern: &str, path: &str) -> bool {
    let (ps, xs): (Vec<&str>, Vec<&str>) = (pattern.split('/').collect(), path.split('/').collect());
    ps.len() == xs.len() && ps.iter().zip(&xs).all(|(p, x)| wildcard(p, x))
}

fn wildcard(p: &str, x: &str) -> bool {
    match p.split_once('*') {
        None => p == x,
        Some((head, tail)) => x.strip_prefix(head).is_some_and(|rest| (0..=rest.len()).any(|i| rest.is_char_boundary(i) && wildcard(tail, &rest[i..]))),
    }
}
