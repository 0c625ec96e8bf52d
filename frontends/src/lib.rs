//! The shared core of fcd's frontends: official release source in, regions,
//! callee identities and source facts out.
//!
//! This crate knows no TOML, no digests and no runtime. It receives the files a
//! profile selected, a list of region and fact specifications and the
//! [`Frontend`] of the profile's language, and returns either an [`Analysis`]
//! or an [`Escalation`] that says, with an anchor, why the source leaves what a
//! reviewer accepted. Parsing goes through [`ts`], the only module that touches
//! tree-sitter. Each language is a crate of its own (`fcd-frontend-python`,
//! `-go`, `-javascript`, `-csharp`) implementing [`Frontend`] over this one;
//! the compiler holds the table that picks one for a [`Lang`]
//! (`fcd_compiler::languages`), since this crate cannot name the crates that
//! depend on it. What every language shares lives here: the fact kinds and the
//! extraction written once over small per-language traits ([`facts`],
//! [`guard`], [`default`], [`field`]), the process-wide state check
//! ([`ambient`]), the driver below that asks a frontend for regions, calls and
//! facts in order, the table of which language reads which kind ([`support`]),
//! and what every language's loader reads the release with and answers ([`loader`]).

pub mod ambient;
mod ambient_check;
pub mod default;
pub mod facts;
pub mod field;
pub mod frontend;
#[cfg(test)]
mod grammar_names;
pub mod guard;
pub mod ir;
pub mod language;
pub mod loader;
pub mod pinned;
pub mod spec;
pub mod support;
pub mod ts;

use std::collections::BTreeMap;

pub use frontend::{Env, Found, Frontend, Lang, LanguageSettings, Program, Region};
pub use ir::{CallSite, Escalation, EscalationCode, Identity, SourceFile};
pub use spec::{ArgPattern, ArgShape, Comparison, DefaultRule, FactKind, FactSpec, RegionKind, RegionSpec};

use fcd_model::effect::{Anchor, Fact, FactValue};
use ts::Syntax;

/// A located region and the call sites inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionReport {
    pub name: String,
    pub anchor: Anchor,
    pub calls: Vec<CallSite>,
    /// `sha256:` of the region's tokens, as a `body` fact pins it (comments
    /// left out, one space between tokens): what a reviewer lists.
    pub body_digest: String,
}

/// What a frontend found in a release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Analysis {
    /// In the order the regions were asked for.
    pub regions: Vec<RegionReport>,
    /// One entry per fact the source states, in the order the facts were asked for.
    pub facts: Vec<Fact>,
    /// The files analysed as what the release runs, by path: every selected
    /// file the language parses, or (with the package's entries) only those
    /// the entries load. Files of the closure not listed here (a web UI's
    /// sources beside a server) are digested but never run by the server.
    pub loaded: Vec<String>,
    /// With [`Env::alone`] (`fcd debug region`): the release code the region
    /// calls that no region reads ([`Frontend::reached`]). Empty otherwise.
    pub reached: Vec<ir::ReachedCode>,
}

/// A JavaScript line longer than this marks a minified bundle, which hides
/// structure a reviewer cannot read: it escalates instead of being analyzed.
pub const MINIFIED_LINE: usize = 2_000;

/// `a/./b/../c` as `a/c`, for `/`-separated paths inside a release; `None`
/// when the path climbs out of the root.
pub fn normalize_path(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

/// Parses one file, turning undecodable or unparsable text into a `parse_error` escalation.
pub fn parse(lang: Lang, file: &SourceFile) -> Result<Syntax, Escalation> {
    let text = match std::str::from_utf8(&file.bytes) {
        Ok(t) => t.to_owned(),
        Err(e) => {
            let line = file.bytes[..e.valid_up_to()].iter().filter(|&&b| b == b'\n').count() as u32 + 1;
            return Err(Escalation::new(
                EscalationCode::ParseError,
                format!("not UTF-8 (invalid byte at offset {})", e.valid_up_to()),
                Some(Anchor::at_line(&file.path, line)),
            ));
        }
    };
    if matches!(lang, Lang::JavaScript | Lang::TypeScript)
        && let Some((i, line)) = text.lines().enumerate().find(|(_, l)| l.len() > MINIFIED_LINE)
    {
        return Err(Escalation::new(
            EscalationCode::ParseError,
            format!("minified source: line {} is {} characters; fcd reads only non-minified bundles", i + 1, line.len()),
            Some(Anchor::at_line(&file.path, i as u32 + 1)),
        ));
    }
    Syntax::parse(lang, text).map_err(|f| {
        Escalation::new(EscalationCode::ParseError, format!("{} source does not parse: {}", lang, f.reason), Some(Anchor::at_line(&file.path, f.line)))
    })
}

/// Locates every region exactly once and extracts every fact the source states.
///
/// Files are parsed in the order given. A file that does not parse escalates
/// whenever its text names a region, since it could hide a second definition.
pub fn analyze(frontend: &dyn Frontend, files: &[SourceFile], regions: &[RegionSpec], facts: &[FactSpec]) -> Result<Analysis, Escalation> {
    let reviewed = regions
        .iter()
        .filter_map(|r| match &r.kind {
            RegionKind::Function(f) => Some(f.rsplit('.').next().unwrap_or(f).to_owned()),
            _ => None,
        })
        .collect();
    analyze_with(frontend, files, regions, facts, &Env { reviewed, ..Env::default() })
}

/// What parsing made of one file of a release, before any region is asked for.
enum Parse {
    /// A build file (a C# project): its check, which no region changes.
    Build(Result<(), Escalation>),
    /// A file the language does not parse (another extension).
    Skipped,
    Parsed(Syntax),
    Failed(Escalation),
}

/// A release's files parsed once, so that several reviewed shapes of one
/// profile (each its own regions and facts) analyse the same trees.
pub struct Parsed<'f> {
    frontend: &'f dyn Frontend,
    files: &'f [SourceFile],
    outcomes: Vec<Parse>,
}

/// Parses every file once, in the order given ([`analyze_parsed`] decides
/// what a file that does not parse means for the regions it is asked for).
pub fn parse_files<'f>(frontend: &'f dyn Frontend, files: &'f [SourceFile]) -> Parsed<'f> {
    let lang = frontend.lang();
    let outcomes = files
        .iter()
        .map(|f| {
            if let Some(check) = frontend.build_file(f) {
                Parse::Build(check)
            } else if !lang.parses(&f.path) {
                Parse::Skipped
            } else {
                match parse(lang.for_file(&f.path), f) {
                    Ok(s) => Parse::Parsed(s),
                    Err(e) => Parse::Failed(e),
                }
            }
        })
        .collect();
    Parsed { frontend, files, outcomes }
}

/// [`analyze`] with what the profile says beyond regions and facts.
pub fn analyze_with(frontend: &dyn Frontend, files: &[SourceFile], regions: &[RegionSpec], facts: &[FactSpec], env: &Env) -> Result<Analysis, Escalation> {
    analyze_parsed(&parse_files(frontend, files), regions, facts, env)
}

/// [`analyze_with`] over files already parsed by [`parse_files`].
pub fn analyze_parsed(release: &Parsed<'_>, regions: &[RegionSpec], facts: &[FactSpec], env: &Env) -> Result<Analysis, Escalation> {
    let (frontend, files) = (release.frontend, release.files);
    let lang = frontend.lang();
    // A file that does not parse escalates when it could hold a region (its
    // text names one); one that cannot is left out of the analysis, as it can
    // define nothing the profile reads (it stays in the source closure).
    let names: Vec<&str> = regions
        .iter()
        .map(|r| match &r.kind {
            RegionKind::Function(n)
            | RegionKind::Literal(n)
            | RegionKind::Variable(n)
            | RegionKind::Route(n)
            | RegionKind::Callback(n)
            | RegionKind::Case(n) => n.rsplit('.').next().unwrap_or(n),
        })
        // A method's file names its class (`static C.m`, `C.m`: `C`); its
        // method name alone (`add`) could be any word of any file.
        .zip(regions)
        .map(|(short, r)| match &r.kind {
            RegionKind::Function(n) if n.contains('.') => n.trim_start_matches("static ").split('.').next().unwrap_or(short),
            _ => short,
        })
        .collect();
    let mut parsed: Vec<(&SourceFile, &Syntax)> = Vec::new();
    // Files left out for not parsing, with their text: the release check still reads them.
    let mut opaque: Vec<(&str, &str)> = Vec::new();
    // Files loaded only as code the regions may reach: read by the closed call path alone.
    let mut library: Vec<(&str, &Syntax)> = Vec::new();
    let mut library_unparsed: Vec<&str> = Vec::new();
    for (f, outcome) in files.iter().zip(&release.outcomes) {
        if env.libraries.contains(&f.path) {
            match outcome {
                Parse::Parsed(s) => library.push((f.path.as_str(), s)),
                Parse::Failed(_) => library_unparsed.push(f.path.as_str()),
                Parse::Build(_) | Parse::Skipped => {}
            }
            continue;
        }
        match outcome {
            Parse::Build(check) => check.clone()?,
            Parse::Skipped => {}
            Parse::Parsed(s) => parsed.push((f, s)),
            Parse::Failed(e) => {
                let Ok(text) = std::str::from_utf8(&f.bytes) else { return Err(e.clone()) };
                if frontend.whole_program() || names.iter().any(|n| text.contains(n)) {
                    return Err(e.clone());
                }
                opaque.push((f.path.as_str(), text));
            }
        }
    }

    let all: Vec<(&str, &Syntax)> = parsed.iter().map(|(f, s)| (f.path.as_str(), *s)).collect();
    if let Some(loaded) = frontend.loaded(files, &all, &opaque, env)? {
        parsed.retain(|(f, _)| loaded.contains(&f.path));
        opaque.retain(|(f, _)| loaded.contains(*f));
    }
    let trees: Vec<(&str, &Syntax)> = parsed.iter().map(|(f, s)| (f.path.as_str(), *s)).collect();
    let mut located: BTreeMap<&str, Region<'_>> = BTreeMap::new();
    let mut all_calls = Vec::new();
    let mut reports = Vec::new();
    for spec in regions {
        let hits: Vec<Region<'_>> = parsed
            .iter()
            .filter(|(file, _)| spec.file.as_ref().is_none_or(|only| *only == file.path))
            .flat_map(|(file, syntax)| {
                frontend.find_regions(syntax, &spec.kind).into_iter().map(|node| Region { name: &spec.name, file: &file.path, node, trees: &trees, env })
            })
            .collect();
        let region = match hits.as_slice() {
            [] if spec.optional => continue,
            [] => {
                return Err(Escalation::new(
                    EscalationCode::RegionMissing,
                    match &spec.file {
                        Some(only) => format!(
                            "region `{}`: no {} in {only}{}",
                            spec.name,
                            spec.kind,
                            if parsed.iter().any(|(f, _)| f.path == *only) { "" } else { ", which is not among the loaded files" }
                        ),
                        None => format!("region `{}`: no {} in the {} files", spec.name, spec.kind, if env.entries.is_some() { "loaded" } else { "selected" }),
                    },
                    parsed.first().map(|(f, _)| Anchor::at_line(&f.path, 1)).or_else(|| files.first().map(|f| Anchor::at_line(&f.path, 1))),
                ));
            }
            [one] => *one,
            [first, second, ..] => {
                return Err(Escalation::new(
                    EscalationCode::RegionAmbiguous,
                    match &spec.file {
                        Some(only) => {
                            format!("region `{}`: {} definitions of {} in {only} (first at {})", spec.name, hits.len(), spec.kind, first.anchor(first.node))
                        }
                        // Definitions in two JavaScript modules: `file` says which one the
                        // region reads (the closed call path follows imports per file).
                        None if first.file != second.file && matches!(lang, Lang::JavaScript | Lang::TypeScript) => format!(
                            "region `{}`: {} definitions of {} (first at {}, then {}); the region's `file` names the one it reads",
                            spec.name,
                            hits.len(),
                            spec.kind,
                            first.anchor(first.node),
                            second.anchor(second.node)
                        ),
                        None => format!("region `{}`: {} definitions of {} (first at {})", spec.name, hits.len(), spec.kind, first.anchor(first.node)),
                    },
                    Some(second.anchor(second.node)),
                ));
            }
        };
        frontend.check_region(&region)?;
        let region_calls = frontend.calls(&region);
        let calls = region_calls
            .iter()
            .map(|(node, identity)| CallSite { identity: identity.clone(), anchor: region.anchor(*node), deferred: frontend.deferred(region.node, *node) })
            .collect();
        all_calls.push(region_calls);
        let body_digest = body_digest(&region);
        reports.push(RegionReport { name: spec.name.clone(), anchor: region.anchor(region.node), calls, body_digest });
        located.insert(&spec.name, region);
    }
    let in_order: Vec<Region<'_>> = regions.iter().filter_map(|r| located.get(r.name.as_str()).copied()).collect();
    let program =
        Program { regions: &in_order, calls: &all_calls, facts, trees: &trees, opaque: &opaque, env, library: &library, library_unparsed: &library_unparsed };
    let reached = if env.alone { frontend.reached(&program) } else { Vec::new() };
    frontend.check_program(&program)?;
    // Read alone (a region shown by `debug region`), a region is not the
    // whole program: the file-wide ambient check is the whole program's, and
    // reading the regions together reports it.
    if !env.alone {
        ambient_check::check(frontend, &program)?;
    }

    // Facts that refer to other facts (a guard names its sink) run after the
    // ones they refer to; the order of the output stays the order asked for.
    let mut found: BTreeMap<String, Found<'_>> = BTreeMap::new();
    let mut order: Vec<&FactSpec> = facts.iter().collect();
    // Dependency levels: calls, defaults and keys first; then what refers to them.
    order.sort_by_key(|f| match f.kind {
        FactKind::Call { .. }
        | FactKind::Default { .. }
        | FactKind::Option { .. }
        | FactKind::Key { .. }
        | FactKind::Table { .. }
        | FactKind::Exit { .. }
        | FactKind::Body { .. } => 0,
        FactKind::Guard { .. } | FactKind::Pass { .. } | FactKind::Hook { .. } => 1,
        FactKind::Map { .. } => 2,
        FactKind::Field { .. } => 3,
        FactKind::Flow { .. } => 4,
    });
    for spec in order {
        let Some(region) = located.get(spec.region.as_str()) else {
            if regions.iter().any(|r| r.name == spec.region && r.optional) {
                continue;
            }
            return Err(Escalation::new(
                EscalationCode::RegionMissing,
                format!("fact `{}` names region `{}`, which was not located", spec.name, spec.region),
                None,
            ));
        };
        let extracted = match &spec.kind {
            FactKind::Body { digests } => body_fact(region, spec, digests),
            _ => frontend.extract(region, spec, &found),
        }
        .map_err(|e| Escalation { reading_facts: true, ..e })?;
        if let Some(f) = extracted {
            found.insert(spec.name.clone(), f);
        }
    }
    let facts = facts.iter().filter_map(|s| found.get(&s.name).map(|f| f.fact.clone())).collect();
    let loaded = trees.iter().map(|(path, _)| (*path).to_owned()).chain(opaque.iter().map(|(path, _)| (*path).to_owned())).collect();
    Ok(Analysis { regions: reports, facts, loaded, reached })
}

/// The digest a `body` fact compares: the region's tokens, comments left out, one space between.
fn body_digest(region: &Region<'_>) -> String {
    fcd_model::canon::sha256(region.node.token_text().as_bytes())
}

/// The `body` fact, the same in every language: the region's tokens (comments
/// left out, one space between tokens) hash to one of the reviewed digests.
/// It pins a helper whose behaviour the other facts trust to a body a person
/// read; any other body escalates with its digest, for the reviewer to judge.
fn body_fact<'a>(region: &Region<'a>, spec: &FactSpec, digests: &[String]) -> Result<Option<Found<'a>>, Escalation> {
    let digest = body_digest(region);
    let site = facts::FactSite { region, spec };
    if !digests.contains(&digest) {
        return Err(site.mismatch(
            region.node,
            format!("the body of region `{}` is not a reviewed one: its token digest {digest} is not among the profile's digests", region.name),
        ));
    }
    let mut values = BTreeMap::new();
    values.insert("digest".into(), FactValue::Text(digest));
    Ok(Some(site.fact(region.node, values)))
}
